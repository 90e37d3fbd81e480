#!/bin/bash
# deploy/slurm/fbkit-pipeline.sh on the extract_features fixture, each job file run by a
# stand-in sbatch (tests/deploy/fake_sbatch: array tasks in turn, afterok honoured), against
# the same stages run locally and unsharded: trace --isolate, build, all, infer (the gold
# agent), eval. The merged trace, the graph, every task directory, the predictions and the
# evaluation summary must be byte-identical; the `all` summaries equal but for the run
# statistics of the last run (timings, pytest runs, tried / resumed).
# Then a failing stage: the stages after it never run.
# With FBKIT_REAL_SLURM=1 the jobs go to the real sbatch (a cluster sharing OUT with this
# machine; bench/slurm_pipeline.sh sets one up) and the script waits for them; the failing
# stage is then not tried (Slurm keeps such jobs pending).
# usage: slurm_pipeline_test.sh BIN_DIR SOURCE_DIR OUT
set -euo pipefail
bin=$1 src=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
export GIT_AUTHOR_NAME=fbkit GIT_AUTHOR_EMAIL=fbkit@localhost GIT_COMMITTER_NAME=fbkit \
  GIT_COMMITTER_EMAIL=fbkit@localhost GIT_AUTHOR_DATE=2026-01-01T00:00:00Z \
  GIT_COMMITTER_DATE=2026-01-01T00:00:00Z GIT_CONFIG_NOSYSTEM=1
repo=$out/extract_features
cp -r "$src/fixtures/extract_features" "$repo"
find "$repo" -name __pycache__ -prune -exec rm -rf {} +
# Four of its ten test files: tasks enough for two uneven shards of every stage, and every
# stage runs twice (locally and as jobs), so each file left out saves two of each.
rm "$repo"/tests/test_{geometry,nested,paths,polar,tabs,util}.py
git -C "$repo" init -q && git -C "$repo" add -A && git -C "$repo" commit -q -m fixture
printf 'python = "/usr/bin/python3"\n' > "$out/spec.toml"
spec="--spec $out/spec.toml"
all_args="--min-lines 5 --p2p 2 --no-l2"
agent="sh $src/fixtures/agents/gold.sh"

# Local, unsharded.
local=$out/local
mkdir -p "$local"
t0=$(date +%s)
"$bin/fb-graph" trace "$repo" --isolate -q $spec -o "$local/trace.json"
"$bin/fb-graph" build "$repo" --trace "$local/trace.json" -q $spec -o "$local/graph.json"
"$bin/fb-extract" all "$repo" --graph "$local/graph.json" --trace "$local/trace.json" \
  -o "$local/tasks" -q $spec $all_args > /dev/null
# The gold agent's answers: a copy (infer shows no agent its task directories, and refuses
# a copy of their packages unless allowed); the pipeline's tasks are these same tasks.
cp -r "$local/tasks" "$out/answers"
"$bin/fb-extract" infer "$local/tasks" --agent-cmd "$agent" -o "$local/run" -q \
  --env FBKIT_TEST_TASKS="$out/answers" --read-only "$out/answers" \
  --read-only "$src/fixtures/agents" --exposed-copies allow > /dev/null
"$bin/fb-extract" eval "$local/tasks" --predictions "$local/run/predictions.jsonl" \
  -o "$local/eval" -q > /dev/null
echo "local: $(( $(date +%s) - t0 )) s"
made=$(ls -d "$local"/tasks/*/ | wc -l)
[ "$made" -ge 3 ] || { echo "expected 3 tasks or more, for uneven shards; made $made"; exit 1; }

# The pipeline, two shards per stage.
work=$out/slurm
export FAKE_SBATCH_STATE=$out/sbatch-state
mkdir -p "$out/fakebin"
[ "${FBKIT_REAL_SLURM:-0}" = 1 ] || ln -s "$src/tests/deploy/fake_sbatch" "$out/fakebin/sbatch"
t0=$(date +%s)
PATH="$out/fakebin:$PATH" ROOT=$repo WORK=$work SHARDS=2 FBKIT_BIN=$bin SPEC_ARGS=$spec \
  ALL_ARGS=$all_args AGENT_CMD=$agent \
  AGENT_ARGS="--env FBKIT_TEST_TASKS=$out/answers --read-only $out/answers --read-only $src/fixtures/agents --exposed-copies allow" \
  "$src/deploy/slurm/fbkit-pipeline.sh" > "$out/jobs.txt"
cat "$out/jobs.txt"
[ "$(wc -l < "$out/jobs.txt")" -eq 6 ] || { echo "expected 6 stages submitted"; exit 1; }
if [ "${FBKIT_REAL_SLURM:-0}" = 1 ]; then
  ids=$(awk '{print $2}' "$out/jobs.txt" | paste -sd,)
  while squeue -h -j "$ids" 2>/dev/null | grep -q .; do sleep 1; done
fi
echo "pipeline: $(( $(date +%s) - t0 )) s"
ls "$work/trace"
[ -f "$work/trace/trace.1-of-2.json" ] && [ -f "$work/trace/trace.2-of-2.json" ]
ls "$work/logs"

fail=0
same() {  # same A B WHAT
  if cmp -s "$1" "$2"; then echo "same: $3"; else echo "DIFFERENT: $3 ($1 vs $2)"; fail=1; fi
}
same "$local/trace.json" "$work/trace.json" "merged trace"
same "$local/graph.json" "$work/graph.json" "graph"
if diff -r -q -x .fbkit -x 'summary*.json' "$local/tasks" "$work/tasks"; then
  echo "same: task directories ($(ls -d "$local"/tasks/*/ | wc -l))"
else
  echo "DIFFERENT: task directories"; fail=1
fi
# The summary job's run finds every candidate finished: its own run statistics differ from
# one unsharded run's (each shard's are in summary.K-of-N.json); the results must not.
strip='import json, sys
s = json.load(open(sys.argv[1]))
for k in ("fbkit_ms", "pytest_ms", "pytest_runs", "instances_this_run", "tried", "resumed"):
    s.pop(k)
print(json.dumps(s, sort_keys=True, indent=1))'
/usr/bin/python3 -c "$strip" "$local/tasks/summary.json" > "$out/local-summary.txt"
/usr/bin/python3 -c "$strip" "$work/tasks/summary.json" > "$out/slurm-summary.txt"
same "$out/local-summary.txt" "$out/slurm-summary.txt" "all summary (run statistics left out)"
same "$local/run/predictions.jsonl" "$work/run/predictions.jsonl" "predictions"
same "$local/eval/summary.json" "$work/eval/summary.json" "eval summary"
grep -q '"resolved"' "$work/eval/summary.json"
[ $fail = 0 ] || exit 1
[ "${FBKIT_REAL_SLURM:-0}" = 1 ] && exit 0

# A stage that fails stops the ones after it: a trace of a root that does not exist.
bad=$out/slurm-bad
PATH="$out/fakebin:$PATH" ROOT=$out/missing WORK=$bad SHARDS=2 FBKIT_BIN=$bin \
  SPEC_ARGS=$spec AGENT_CMD=$agent "$src/deploy/slurm/fbkit-pipeline.sh" > /dev/null
for stage in build all summary infer eval; do
  grep -q "never satisfied" "$bad/logs/fbkit-$stage-"*.log || { echo "$stage ran after a failed trace"; exit 1; }
done
[ ! -e "$bad/graph.json" ] && [ ! -e "$bad/tasks" ]
echo "a failed trace stopped every later stage"
