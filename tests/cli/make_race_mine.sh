#!/usr/bin/env bash
# ctest FIXTURES_SETUP race_mine: the race_mine fixture's history, `fb-race mine` over it, and
# `fb-race gt` on the mined instances with -j 1, -j 2 and --whole-files, made once for every
# RaceMine test.
# usage: make_race_mine.sh FB_RACE SOURCE_DIR OUT
set -euo pipefail
fb_race=$1 src=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
"$src/fixtures/race_mine/make_prs.sh" "$out/h" >/dev/null
"$fb_race" mine "$out/h/repo" --name acme/shop -o "$out/mined.jsonl" --report "$out/report.json" \
  2>"$out/mine.err"
"$fb_race" gt "$out/mined.jsonl" --python /usr/bin/python3 -o "$out/gt1" -q -j 1
"$fb_race" gt "$out/mined.jsonl" --python /usr/bin/python3 -o "$out/gt2" -q -j 2
"$fb_race" gt "$out/mined.jsonl" --python /usr/bin/python3 -o "$out/gt-files" -q --whole-files
