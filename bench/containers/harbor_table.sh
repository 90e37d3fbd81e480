#!/usr/bin/env bash
# Harbor's verdicts on a task set beside fbkit's: every task exported as a Harbor task, its
# trial replayed with the gold fix (oracle) and with no change (empty), and fbkit's eval of
# the gold patches; one row per task. With HARBOR=1, Harbor itself runs the trials
# (`harbor run -e podman`, harbor and podman-compose >= 1.1 on PATH) instead of the replay.
# usage: harbor_table.sh TASKS OUT [BASE]    (a markdown table on stdout)
# FBKIT_EVAL_ARGS: more flags for fbkit's eval (word-split), e.g. "--exposed-copies hide -j 2".
# FBKIT_EVAL_DIR: an eval-gold output of these tasks made already (`fb-extract eval TASKS
# --gold -o DIR`, e.g. run beside another harness): read instead of running fbkit's eval again.
# HARBOR_ONLY: a glob of the task ids to run trials on (default all; e.g. "*.lv2": an L2
# task's export needs its L1 task beside it, so a subset is chosen here, not by directory).
set -euo pipefail
tasks=$1 out=$2 base=${3:-localhost/fbkit-base:bookworm}
here=$(cd "$(dirname "$0")" && pwd)
fb_extract=${FB_EXTRACT:-fb-extract}
mkdir -p "$out"
"$fb_extract" export --format harbor "$tasks" -o "$out/harbor" --base "$base" -q
eval_dir=${FBKIT_EVAL_DIR:-$out/eval-gold}
# shellcheck disable=SC2086  # FBKIT_EVAL_ARGS is a list of flags
[ -n "${FBKIT_EVAL_DIR:-}" ] ||
  "$fb_extract" eval "$tasks" --gold -o "$eval_dir" -q ${FBKIT_EVAL_ARGS:-} > /dev/null || true
trial() {  # TASK AGENT -> reward
  if [ "${HARBOR:-0}" = 1 ]; then
    local job="$(basename "$1")-$2"
    HARBOR_TELEMETRY=0 harbor run -p "$1" -a "$([ "$2" = empty ] && echo nop || echo oracle)" -e podman -y \
      -o "$out/jobs" --job-name "$job" > "$out/jobs-$job.log" 2>&1 || true
    cat "$(find "$out/jobs/$job" -name reward.txt | head -1)" 2>/dev/null || echo error
  else
    "$here/harbor_replay.sh" podman "$1" "$2" 2> /dev/null || echo error
  fi
}
echo "| task | level | Harbor gold | Harbor empty | fbkit eval gold |"
echo "|---|---|---|---|---|"
for t in "$out"/harbor/*/; do
  id=$(basename "$t")
  # shellcheck disable=SC2254  # HARBOR_ONLY is a glob
  case $id in ${HARBOR_ONLY:-*}) ;; *) continue ;; esac
  fbkit=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('resolved' if r.get('resolved') else 'not resolved')" \
    "$eval_dir/$id/report.json" 2>/dev/null || echo "?")
  echo "| $id | ${id##*.lv} | $(trial "$t" oracle) | $(trial "$t" empty) | $fbkit |"
done
