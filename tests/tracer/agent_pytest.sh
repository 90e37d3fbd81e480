#!/usr/bin/env bash
# The agent's own pytest suite under Debian's python3: once with the pure-Python recorder,
# once with the C accelerator compiled here against the interpreter's headers.
set -euo pipefail
source_dir=$1
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PYTHONDONTWRITEBYTECODE=1
cd "$source_dir"
"$python" -m pytest -p no:cacheprovider -q tracer/agent/tests
include=$("$python" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
cc -shared -fPIC -O2 -Wall -Werror -I"$include" -o "$tmp/_fbkit_accel.so" tracer/agent/_fbkit_accel.c
FBKIT_TEST_ACCEL="$tmp/_fbkit_accel.so" "$python" -m pytest -p no:cacheprovider -q tracer/agent/tests
