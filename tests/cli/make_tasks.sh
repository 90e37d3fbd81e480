#!/bin/sh
# Shared setup of the infer tests (ctest FIXTURES_SETUP): tasks of the extract_features
# fixture (test_stats and test_vectors, L1 and L2) in OUT/tasks, made once per test run.
# The fixture copy is a git repository with an origin URL, as a user's checkout is, so
# tasks carry a base commit and the repository's name.
# usage: make_tasks.sh FB_GRAPH FB_EXTRACT SOURCE_DIR OUT
set -eu
fb_graph=$1 fb_extract=$2 src=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
"$(dirname "$0")/traced_fixture.sh" "$fb_graph" "$src" extract_features "$out/repo" "$out" \
  https://github.com/fbkit-fixtures/extract_features.git
for f2p in tests/test_stats.py tests/test_vectors.py; do
  "$fb_extract" task "$out/repo" --graph "$out/graph.json" --trace "$out/trace.json" \
    -o "$out/tasks" --python /usr/bin/python3 --min-lines 5 --p2p 2 -q --f2p "$f2p" > /dev/null
done
ls "$out/tasks"
