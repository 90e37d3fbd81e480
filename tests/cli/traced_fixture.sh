#!/bin/sh
# A fixture as a user's checkout, traced: copies SOURCE_DIR/fixtures/NAME to REPO (no
# __pycache__), makes it a git repository of its own (fixed identity and dates, so the same
# commit every time; an origin remote when ORIGIN is given), and writes OUT/trace.json and
# OUT/graph.json. REPO may lie inside fbkit's checkout, whose commit must not become the
# tasks' base commit. Used by the ctest FIXTURES_SETUP scripts.
# usage: traced_fixture.sh FB_GRAPH SOURCE_DIR NAME REPO OUT [ORIGIN]
set -eu
fb_graph=$1 src=$2 name=$3 repo=$4 out=$5 origin=${6:-}
cp -r "$src/fixtures/$name" "$repo"
find "$repo" -name __pycache__ -prune -exec rm -rf {} +
export GIT_AUTHOR_NAME=fbkit GIT_AUTHOR_EMAIL=fbkit@localhost GIT_COMMITTER_NAME=fbkit \
  GIT_COMMITTER_EMAIL=fbkit@localhost GIT_AUTHOR_DATE=2026-01-01T00:00:00Z \
  GIT_COMMITTER_DATE=2026-01-01T00:00:00Z GIT_CONFIG_NOSYSTEM=1
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" commit -q -m "$name fixture"
[ -z "$origin" ] || git -C "$repo" remote add origin "$origin"
"$fb_graph" trace "$repo" --python /usr/bin/python3 -q -o "$out/trace.json"
"$fb_graph" build "$repo" --trace "$out/trace.json" -q -o "$out/graph.json" --no-cache
