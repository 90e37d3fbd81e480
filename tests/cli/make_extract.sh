#!/bin/sh
# Shared setup of the ExtractE2E tests (ctest FIXTURES_SETUP): one traced copy of the
# extract_features fixture and one `fb-extract all` run over it, made once per test run.
# OUT gets extract_features/, trace.json, graph.json, out/ and all.exit / all.err (the exit
# code and stderr of `fb-extract all`, which the tests check). The copy is a git repository
# of its own (fixed identity and dates, no origin): OUT may lie inside fbkit's checkout,
# whose commit must not become the tasks' base commit.
# usage: make_extract.sh FB_GRAPH FB_EXTRACT SOURCE_DIR OUT
set -eu
fb_graph=$1 fb_extract=$2 src=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
cp -r "$src/fixtures/extract_features" "$out/extract_features"
find "$out/extract_features" -name __pycache__ -prune -exec rm -rf {} +
export GIT_AUTHOR_NAME=fbkit GIT_AUTHOR_EMAIL=fbkit@localhost GIT_COMMITTER_NAME=fbkit \
  GIT_COMMITTER_EMAIL=fbkit@localhost GIT_AUTHOR_DATE=2026-01-01T00:00:00Z \
  GIT_COMMITTER_DATE=2026-01-01T00:00:00Z GIT_CONFIG_NOSYSTEM=1
git -C "$out/extract_features" init -q
git -C "$out/extract_features" add -A
git -C "$out/extract_features" commit -q -m "extract_features fixture"
"$fb_graph" trace "$out/extract_features" --python /usr/bin/python3 -q -o "$out/trace.json"
"$fb_graph" build "$out/extract_features" --trace "$out/trace.json" -q -o "$out/graph.json" \
  --no-cache
set +e
"$fb_extract" all "$out/extract_features" --graph "$out/graph.json" --trace "$out/trace.json" \
  -o "$out/out" --python /usr/bin/python3 --min-lines 5 --p2p 3 -q > /dev/null 2> "$out/all.err"
echo $? > "$out/all.exit"
