#!/bin/sh
# Shared setup of the ExtractE2E tests (ctest FIXTURES_SETUP): one traced copy of the
# extract_features fixture (a git repository without origin) and one `fb-extract all` run
# over it, made once per test run. OUT gets extract_features/, trace.json, graph.json, out/
# and all.exit / all.err (the exit code and stderr of `fb-extract all`, which the tests
# check).
# usage: make_extract.sh FB_GRAPH FB_EXTRACT SOURCE_DIR OUT
set -eu
fb_graph=$1 fb_extract=$2 src=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
"$(dirname "$0")/traced_fixture.sh" "$fb_graph" "$src" extract_features \
  "$out/extract_features" "$out"
set +e
"$fb_extract" all "$out/extract_features" --graph "$out/graph.json" --trace "$out/trace.json" \
  -o "$out/out" --python /usr/bin/python3 --min-lines 5 --p2p 3 -q > /dev/null 2> "$out/all.err"
echo $? > "$out/all.exit"
