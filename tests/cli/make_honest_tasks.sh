#!/bin/sh
# Shared setup of the HonestE2E tests (ctest FIXTURES_SETUP): the standing honest suite's
# fixtures (fixtures/honest_*), each traced as a repository of its own, with one L1 task cut
# for its feature's test file; made once per test run, read by every HonestE2E test.
# usage: make_honest_tasks.sh FB_GRAPH FB_EXTRACT SOURCE_DIR OUT
set -eu
fb_graph=$1 fb_extract=$2 src=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
make() {  # fixture, test file the task is cut for
  repo=$out/$1
  cp -r "$src/fixtures/$1" "$repo"
  git -C "$repo" init -q
  git -C "$repo" add -A
  git -C "$repo" -c user.name=fbkit -c user.email=fbkit@localhost commit -qm "$1 fixture"
  "$fb_graph" trace "$repo" --python /usr/bin/python3 -q -o "$out/$1.trace.json"
  "$fb_graph" build "$repo" --trace "$out/$1.trace.json" -q -o "$out/$1.graph.json" --no-cache
  "$fb_extract" task "$repo" --graph "$out/$1.graph.json" --trace "$out/$1.trace.json" \
    -o "$out/tasks" --python /usr/bin/python3 --min-lines 5 --p2p 2 -q --f2p "$2" > /dev/null
}
make honest_inherited_tests tests/test_rot.py
make honest_runtime_tricks tests/test_units.py
touch "$out/done"
