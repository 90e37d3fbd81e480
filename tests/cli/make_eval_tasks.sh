#!/bin/sh
# Shared setup of the EvalE2E tests (ctest FIXTURES_SETUP): a traced copy of the
# extract_features fixture and its test_stats and test_vectors tasks (both levels), made once
# per test run for every EvalE2E test, which reads them and writes its runs elsewhere.
# usage: make_eval_tasks.sh FB_GRAPH FB_EXTRACT SOURCE_DIR OUT
set -eu
fb_graph=$1 fb_extract=$2 src=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
cp -r "$src/fixtures/extract_features" "$out/repo"
"$fb_graph" trace "$out/repo" --python /usr/bin/python3 -q -o "$out/trace.json"
"$fb_graph" build "$out/repo" --trace "$out/trace.json" -q -o "$out/graph.json" --no-cache
for f2p in tests/test_stats.py tests/test_vectors.py; do
  "$fb_extract" task "$out/repo" --graph "$out/graph.json" --trace "$out/trace.json" \
    -o "$out/tasks" --python /usr/bin/python3 --min-lines 5 --p2p 2 -q --f2p "$f2p" > /dev/null
done
touch "$out/done"
