#!/bin/sh
# Shared setup of the RaceE2E tests (ctest FIXTURES_SETUP): the race_history fixture's
# history and `fb-race gt` over its instances, made once per test run (every RaceE2E test is
# its own process: a suite set-up ran the 30-second gt once per test). OUT gets h/ (the
# history) and gt/ with gt.exit / gt.err (the exit code and stderr, which the tests check).
# usage: make_race_history.sh FB_RACE SOURCE_DIR OUT
set -eu
fb_race=$1 src=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
"$src/fixtures/race_history/make_history.sh" "$out/h" > /dev/null
set +e
"$fb_race" gt "$out/h/instances.jsonl" --python /usr/bin/python3 -o "$out/gt" -q \
  > /dev/null 2> "$out/gt.err"
echo $? > "$out/gt.exit"
