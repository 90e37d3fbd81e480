#!/bin/bash
# Runs deploy/slurm/fbkit-infer.sbatch and then fbkit-eval.sbatch (afterok) for real as
# N-task arrays on a single-node Slurm cluster on this machine (Debian's slurm-wlm; set up
# here when none answers), and, in the same run, `fb-extract infer -j N` plus `eval -j N` on
# the same tasks as the baseline.
# Prints both wall times, their ratio, and whether the outputs are byte-identical.
#
#   bench/slurm_array.sh TASKS AGENT_CMD [N] [-- extra infer options]
#   e.g. bench/slurm_array.sh /tmp/run-click/tasks "sh $PWD/fixtures/agents/gold.sh" 2 \
#          -- --env FBKIT_TEST_TASKS=/tmp/run-click/tasks --read-only /tmp/run-click/tasks
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tasks=$(realpath "$1") agent=$2 n=${3:-2}
shift $(( $# >= 3 ? 3 : $# ))
[ "${1:-}" = "--" ] && shift
extra="$*"
bin=$here/build/cli
work=$(mktemp -d /var/tmp/fbkit-slurm-XXXXXX)

# shellcheck source=bench/slurm_cluster.sh
source "$here/bench/slurm_cluster.sh"
setup_slurm
# Baseline: one process, N instances at once.
t0=$(date +%s.%N)
# shellcheck disable=SC2086
"$bin/fb-extract" infer "$tasks" --agent-cmd "$agent" -o "$work/local" -j "$n" -q $extra > /dev/null
"$bin/fb-extract" eval "$tasks" --predictions "$work/local/predictions.jsonl" -o "$work/local-eval" -j "$n" -q > /dev/null
t1=$(date +%s.%N)
# The array jobs: N infer shards, then N eval shards, one CPU each.
export FBKIT_BIN=$bin TASKS=$tasks RUN_DIR=$work/array EVAL_DIR=$work/array-eval AGENT_CMD=$agent \
  AGENT_ARGS="$extra"
job=$(sbatch --parsable --array=0-$((n - 1)) --cpus-per-task=1 --mem=2G --chdir="$work" \
      --export=ALL "$here/deploy/slurm/fbkit-infer.sbatch")
eval_job=$(sbatch --parsable --array=0-$((n - 1)) --cpus-per-task=1 --mem=2G --chdir="$work" \
           --export=ALL --dependency=afterok:"$job" "$here/deploy/slurm/fbkit-eval.sbatch")
while squeue -h -j "$job,$eval_job" 2>/dev/null | grep -q .; do sleep 0.5; done
t2=$(date +%s.%N)
same=yes
cmp -s "$work/local/predictions.jsonl" "$work/array/predictions.jsonl" || same=no
cmp -s "$work/local-eval/summary.json" "$work/array-eval/summary.json" || same=no
printf 'instances %s, shards %s\n' "$(ls -d "$work"/local/*/ | wc -l)" "$n"
printf 'local infer+eval -j %s  %8.2f s\n' "$n" "$(echo "$t1 - $t0" | bc)"
printf 'slurm array of %s         %8.2f s\n' "$n" "$(echo "$t2 - $t1" | bc)"
printf 'ratio array / local       %8.3f\n' "$(echo "($t2 - $t1) / ($t1 - $t0)" | bc -l)"
printf 'byte-identical outputs    %s\n' "$same"
grep -h "resolved\"" "$work/array-eval/summary.json" | head -2
echo "work: $work"
