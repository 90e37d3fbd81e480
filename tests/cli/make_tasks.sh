#!/bin/sh
# Shared setup of the infer tests (ctest FIXTURES_SETUP): tasks of the extract_features
# fixture (test_stats and test_vectors, L1 and L2) in OUT/tasks, made once per test run.
# The fixture copy is a git repository (fixed identity and dates, an origin URL), as a
# user's checkout is, so tasks carry a base commit and the repository's name.
# usage: make_tasks.sh FB_GRAPH FB_EXTRACT SOURCE_DIR OUT
set -eu
fb_graph=$1 fb_extract=$2 src=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
cp -r "$src/fixtures/extract_features" "$out/repo"
find "$out/repo" -name __pycache__ -prune -exec rm -rf {} +
export GIT_AUTHOR_NAME=fbkit GIT_AUTHOR_EMAIL=fbkit@localhost GIT_COMMITTER_NAME=fbkit \
  GIT_COMMITTER_EMAIL=fbkit@localhost GIT_AUTHOR_DATE=2026-01-01T00:00:00Z \
  GIT_COMMITTER_DATE=2026-01-01T00:00:00Z GIT_CONFIG_NOSYSTEM=1
git -C "$out/repo" init -q
git -C "$out/repo" add -A
git -C "$out/repo" commit -q -m "extract_features fixture"
git -C "$out/repo" remote add origin https://github.com/fbkit-fixtures/extract_features.git
"$fb_graph" trace "$out/repo" --python /usr/bin/python3 -q -o "$out/trace.json"
"$fb_graph" build "$out/repo" --trace "$out/trace.json" -q -o "$out/graph.json" --no-cache
for f2p in tests/test_stats.py tests/test_vectors.py; do
  "$fb_extract" task "$out/repo" --graph "$out/graph.json" --trace "$out/trace.json" \
    -o "$out/tasks" --python /usr/bin/python3 --min-lines 5 --p2p 2 -q --f2p "$f2p" > /dev/null
done
ls "$out/tasks"
