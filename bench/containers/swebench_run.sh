#!/usr/bin/env bash
# SWE-bench 5's own harness (python -m swebench.harness.run_evaluation, unchanged) on fbkit
# tasks: rows exported with their images (built first by `fb-extract images` with the same
# --base), the gold patches, and a no-op patch (a new NOTES.txt: applies, changes nothing
# the tests see). Prints "ID gold noop" per task (resolved / unresolved / error / -).
# usage: swebench_run.sh TASKS OUT BASE     with SWEBENCH_PYTHON (a python with swebench>=5)
# and DOCKER_HOST (podman: `podman system service --time=0 unix:///PATH.sock`).
set -euo pipefail
tasks=$1 out=$2 base=$3
py=${SWEBENCH_PYTHON:?a python with swebench 5 installed}
fb_extract=${FB_EXTRACT:-fb-extract}
mkdir -p "$out" && out=$(cd "$out" && pwd)
"$fb_extract" export --format swebench "$tasks" --base "$base" -o "$out/ds.jsonl" -q
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
noop = ("diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\nindex 0000000..e69de29\n"
        "--- /dev/null\n+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+nothing here\n")
with open(f"{out}/noop.jsonl", "w") as f:
    for line in open(f"{out}/ds.jsonl"):
        r = json.loads(line)
        f.write(json.dumps({"instance_id": r["instance_id"], "model_patch": noop,
                            "model_name_or_path": "noop"}) + "\n")
PY
cd "$out"
for run in gold noop; do
  preds=$([ $run = gold ] && echo gold || echo "$out/noop.jsonl")
  "$py" -m swebench.harness.run_evaluation -d "$out/ds.jsonl" -p "$preds" -id "fbkit-$run" \
    --max_workers 2 -t 3600 --report_dir "$out/reports" > "$out/$run.log" 2>&1 || true
done
python3 - "$out" <<'PY'
import glob, json, sys
out = sys.argv[1]
ids = [json.loads(l)["instance_id"] for l in open(f"{out}/ds.jsonl")]
def verdicts(model):
    s = json.load(open(glob.glob(f"{out}/reports/{model}.fbkit-*.json")[0]))
    v = {i: "resolved" for i in s.get("resolved_ids", [])}
    v.update({i: "unresolved" for i in s.get("unresolved_ids", [])})
    v.update({i: "error" for i in s.get("error_ids", [])})
    return v
gold, noop = verdicts("gold"), verdicts("noop")
for i in ids:
    print(i, gold.get(i, "-"), noop.get(i, "-"))
PY
