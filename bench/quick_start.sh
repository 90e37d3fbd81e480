#!/bin/sh
# The README's "your own repository" quick start on one repository, as printed, with the
# outputs under OUT: env, trace, build, all, eval --gold; each command's exit status and time
# in OUT/steps.tsv. Then bench/quick_start_table.py OUT... makes bench/README.md's table.
#
# usage: bench/quick_start.sh BIN ROOT SPEC OUT [JOBS]
#   BIN: the directory holding fb-graph and fb-extract (build/cli); ROOT: a clone of the
#   repository; SPEC: its spec, written as the README shows; JOBS: -j (default 2).
set -u
BIN=$1 ROOT=$2 SPEC=$3 OUT=$4 JOBS=${5:-2}
mkdir -p "$OUT"
: > "$OUT/steps.tsv"
step() {
  name=$1; shift
  start=$(date +%s)
  "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - start ))" >> "$OUT/steps.tsv"
  echo "$name: exit $rc"
}
step env "$BIN/fb-graph" env "$ROOT" --spec "$SPEC"
step trace "$BIN/fb-graph" trace "$ROOT" --spec "$SPEC" --isolate -j "$JOBS" -o "$OUT/trace.json"
step build "$BIN/fb-graph" build "$ROOT" --spec "$SPEC" --trace "$OUT/trace.json" -o "$OUT/graph.json"
step all "$BIN/fb-extract" all "$ROOT" --spec "$SPEC" --graph "$OUT/graph.json" \
  --trace "$OUT/trace.json" -o "$OUT/tasks" -j "$JOBS"
step eval "$BIN/fb-extract" eval "$OUT/tasks" --gold -o "$OUT/eval-gold" -j "$JOBS"
