#!/bin/bash
# Submits fbkit's whole pipeline to Slurm as dependent jobs on a shared file system:
#
#   trace  array of TRACE_SHARDS  fb-graph trace --isolate --shard K/N  WORK/trace/trace.K-of-N.json
#   build  one job                fb-graph merge + fb-graph build       WORK/trace.json, WORK/graph.json
#   all    array of ALL_SHARDS    fb-extract all --shard K/N            TASKS/<task>/
#   summary one job               fb-extract all (finds all finished)   TASKS/summary.json
#   infer  array of INFER_SHARDS  fb-extract infer --shard K/N          RUN_DIR/, RUN_DIR/predictions.jsonl
#   eval   array of INFER_SHARDS  fb-extract eval --shard K/N           EVAL_DIR/, EVAL_DIR/summary.json
#
# each stage starting when every job of the one before ended well (afterok). Without
# AGENT_CMD it stops after the summary. Prints the job ids, one line per stage.
#
#   ROOT=/shared/click WORK=/shared/work SPEC_ARGS="--spec /shared/click.toml" \
#   AGENT_CMD="my-agent {problem_statement}" deploy/slurm/fbkit-pipeline.sh
#
# Environment: ROOT, WORK (required); FBKIT_BIN (default build/cli, made absolute); SHARDS
# (default 4) or TRACE_SHARDS / ALL_SHARDS / INFER_SHARDS; TASKS (WORK/tasks); RUN_DIR
# (WORK/run); EVAL_DIR (WORK/eval); SPEC_ARGS, TRACE_ARGS, ALL_ARGS, AGENT_CMD, AGENT_ARGS
# (see each job file); SBATCH_ARGS (added to every sbatch, e.g. "--partition=cpu").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${ROOT:?set ROOT}" "${WORK:?set WORK}" "${SHARDS:=4}" "${SBATCH_ARGS:=}"
: "${TRACE_SHARDS:=$SHARDS}" "${ALL_SHARDS:=$SHARDS}" "${INFER_SHARDS:=$SHARDS}"
: "${FBKIT_BIN:=build/cli}" "${TASKS:=$WORK/tasks}" "${RUN_DIR:=$WORK/run}" "${EVAL_DIR:=$WORK/eval}"
FBKIT_BIN=$(cd "$FBKIT_BIN" && pwd)
export ROOT WORK FBKIT_BIN TRACE_SHARDS TASKS RUN_DIR EVAL_DIR
mkdir -p "$WORK/logs"

submit() {  # submit NAME [sbatch options...] JOBFILE: prints the job id
  local name=$1
  shift
  # shellcheck disable=SC2086
  sbatch --parsable --job-name="fbkit-$name" --export=ALL --chdir="$WORK/logs" $SBATCH_ARGS "$@" | cut -d';' -f1
}

trace=$(submit trace --array=0-$((TRACE_SHARDS - 1)) "$here/fbkit-trace.sbatch")
echo "trace   $trace"
build=$(submit build --dependency=afterok:"$trace" "$here/fbkit-build.sbatch")
echo "build   $build"
all=$(submit all --array=0-$((ALL_SHARDS - 1)) --dependency=afterok:"$build" "$here/fbkit-all.sbatch")
echo "all     $all"
summary=$(submit summary --dependency=afterok:"$all" --output=fbkit-summary-%j.log "$here/fbkit-all.sbatch")
echo "summary $summary"
[ -n "${AGENT_CMD:-}" ] || exit 0
export AGENT_CMD
infer=$(submit infer --array=0-$((INFER_SHARDS - 1)) --dependency=afterok:"$summary" "$here/fbkit-infer.sbatch")
echo "infer   $infer"
evaluation=$(submit eval --array=0-$((INFER_SHARDS - 1)) --dependency=afterok:"$infer" "$here/fbkit-eval.sbatch")
echo "eval    $evaluation"
