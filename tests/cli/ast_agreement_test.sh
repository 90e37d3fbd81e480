#!/usr/bin/env bash
# Real-corpus yardstick: for every def and class CPython's ast finds in the machine's own
# Python library (stdlib and Debian's dist-packages), fb-graph's entity table must have the
# same qualname, start_line, def_line and end_line (bench/ast_agreement.py --strict), and
# every byte span must agree with those lines (bench/span_check.py).
set -euo pipefail
fb_graph=$1
source_dir=$2
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for corpus in /usr/lib/python3.11 /usr/lib/python3/dist-packages; do
  [ -d "$corpus" ] || continue
  rc=0
  "$fb_graph" entities "$corpus" --no-cache -q -o "$tmp/e.json" || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
    echo "fb-graph failed on $corpus (exit $rc)"
    exit 1
  fi
  echo "== $corpus"
  "$python" "$source_dir/bench/ast_agreement.py" "$corpus" "$tmp/e.json" --strict || status=1
  "$python" "$source_dir/bench/span_check.py" "$corpus" "$tmp/e.json" || status=1
done
exit $status
