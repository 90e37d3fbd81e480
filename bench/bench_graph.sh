#!/usr/bin/env bash
# Graph build, load and query numbers on a synthetic million-edge graph, in one run, plus
# the end-to-end latency of `fb-graph deps` (process start + load + query) on it.
#   bench/bench_graph.sh [BUILD_DIR] [ENTITIES] [EDGES]
set -euo pipefail
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bench/fbkit_graph_bench" gen "$tmp" "${2:-100000}" "${3:-1000000}"
"$build/bench/fbkit_graph_bench" load "$tmp/graph.fbg"
"$build/bench/fbkit_graph_bench" load "$tmp/graph.json" 20
for f in graph.fbg graph.json; do
  /usr/bin/time -f "fb-graph deps $f (end to end): %e s, peak RSS %M KiB" \
    "$build/cli/fb-graph" deps "$tmp/$f" "src/pkg/m0.py::f0" --depth 2 > /dev/null
done
