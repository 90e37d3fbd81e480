#!/usr/bin/env bash
# A clean build's time under several CMake configurations, measured one after the other in
# the same run, each as a ratio to the first (the baseline). What CI pays: it builds from
# scratch with setup.sh's configuration.
# usage: bench/build_time.sh [NAME=CMAKE_ARGS ...]
#   default: baseline (FBKIT_UNITY=OFF, every file on its own), unity (the default), and
#   unity with batches of 32 files.
# Output: one line per configuration: wall seconds, CPU seconds (user + sys of the build's
# processes), and both as ratios to the baseline. Builds go to a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  set -- "baseline=-DFBKIT_UNITY=OFF" "unity=-DFBKIT_UNITY=ON" \
    "unity32=-DFBKIT_UNITY=ON -DFBKIT_UNITY_BATCH=32"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base_wall="" base_cpu=""
printf '%-12s %8s %8s %8s %8s\n' config wall_s cpu_s wall/base cpu/base
for entry in "$@"; do
  name=${entry%%=*} args=${entry#*=}
  dir=$tmp/$name
  # shellcheck disable=SC2086
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFBKIT_WERROR=ON $args > "$tmp/$name.cmake.log"
  /usr/bin/time -f '%e %U %S' -o "$tmp/$name.time" ninja -C "$dir" > "$tmp/$name.log" 2>&1 || {
    echo "build_time: $name failed; the last lines of its log:" >&2
    tail -20 "$tmp/$name.log" >&2
    exit 1
  }
  read -r wall user sys < "$tmp/$name.time"
  cpu=$(echo "$user + $sys" | bc)
  [ -z "$base_wall" ] && base_wall=$wall base_cpu=$cpu
  printf '%-12s %8.1f %8.1f %8.2f %8.2f\n' "$name" "$wall" "$cpu" \
    "$(echo "$wall / $base_wall" | bc -l)" "$(echo "$cpu / $base_cpu" | bc -l)"
  rm -rf "$dir"
done
