#!/usr/bin/env bash
# FeatureBench's own harness (`fb eval`, PyPI featurebench) on fbkit's L1 and L2 tasks: rows
# exported with their FeatureBench grading images (built first by `fb-extract images
# --featurebench` with the same --base), the gold (L1: `-p gold`, its reversed mask; L2, which
# `-p gold` skips: the row's patch, the gold agent_code package, as a prediction) and a no-op
# patch (a new NOTES.txt). The harness code runs unchanged; it loads datasets from the Hugging
# Face Hub only, so its two revision lookups are stubbed to read a local parquet directory.
# Prints "ID gold noop" per task (resolved / unresolved / -).
# usage: featurebench_run.sh TASKS OUT BASE   with FEATUREBENCH_PYTHON (featurebench installed,
# Python 3.12) and DOCKER_HOST; podman's images are localhost/...: FEATUREBENCH_IMAGE_PREFIX.
set -euo pipefail
tasks=$1 out=$2 base=$3
py=${FEATUREBENCH_PYTHON:?a python with featurebench installed}
fb_extract=${FB_EXTRACT:-fb-extract}
export FEATUREBENCH_IMAGE_PREFIX=${FEATUREBENCH_IMAGE_PREFIX:-localhost}
mkdir -p "$out/ds/data" "$out/noop" "$out/gold2" && out=$(cd "$out" && pwd)
"$fb_extract" export --format featurebench "$tasks" --base "$base" -o "$out/rows.jsonl" -q
"$py" - "$out" <<'PY'
import json, sys
import pandas as pd
out = sys.argv[1]
rows = [json.loads(l) for l in open(f"{out}/rows.jsonl")]
pd.DataFrame(rows).to_parquet(f"{out}/ds/data/full-00000-of-00001.parquet")
noop = ("diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\nindex 0000000..e69de29\n"
        "--- /dev/null\n+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+nothing here\n")
with open(f"{out}/noop/preds.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps({"instance_id": r["instance_id"], "model_patch": noop,
                            "model_name_or_path": "noop"}) + "\n")
with open(f"{out}/gold2/preds.jsonl", "w") as f:
    for r in rows:
        if r["instance_id"].endswith(".lv2"):
            f.write(json.dumps({"instance_id": r["instance_id"], "model_patch": r["patch"],
                                "model_name_or_path": "gold2"}) + "\n")
PY
cat > "$out/fb_eval.py" <<'PY'
import sys
import featurebench.harness.run_evaluation as r
r.resolve_hf_dataset_revision = lambda d, rev, tok, ep: "local"
r.verify_loaded_dataset_revision = lambda ds, rev: None
sys.exit(r.main())
PY
cd "$out"
"$py" fb_eval.py -p gold --dataset "$out/ds" --split full --n-concurrent 1 > gold.log 2>&1 || true
if [ -s gold2/preds.jsonl ]; then
  "$py" fb_eval.py -p gold2/preds.jsonl --dataset "$out/ds" --split full --n-concurrent 1 > gold2.log 2>&1 || true
fi
"$py" fb_eval.py -p noop/preds.jsonl --dataset "$out/ds" --split full --n-concurrent 1 > noop.log 2>&1 || true
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
def verdicts(d):
    v = {}
    for p in glob.glob(f"{d}/eval_outputs/*/attempt-1/report.json"):
        for i, r in json.load(open(p)).items():
            v[i] = "resolved" if r.get("resolved") else "unresolved"
    return v
gold, noop = verdicts(f"{out}/runs/gold"), verdicts(f"{out}/noop")
gold.update(verdicts(f"{out}/gold2"))
for line in open(f"{out}/rows.jsonl"):
    i = json.loads(line)["instance_id"]
    print(i, gold.get(i, "-"), noop.get(i, "-"))
PY
