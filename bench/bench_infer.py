#!/usr/bin/env python3
"""fbkit's own overhead per instance in `fb-extract infer` (workspace preparation, the
patch and the bookkeeping; the agent's time excluded), against a baseline measured in the
same run: what a minimal harness does per instance with git alone (clone the task's
presolved/, stage everything, diff). The agent is `true`, so nearly all time is overhead.

  /usr/bin/python3 bench/bench_infer.py --tasks /tmp/run-click/tasks [--repeat 3] [--json]

Reports, per repeat, the mean of result.json's fbkit_seconds over the instances, the wall
time of the whole infer run divided by the instances, and the baseline's mean per instance;
medians over the repeats and the ratios to the baseline.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def baseline(tasks, tmp):
    """Seconds per instance for clone + add + diff with plain git."""
    dirs = sorted(d for d in os.listdir(tasks) if os.path.exists(os.path.join(tasks, d, "presolved")))
    t0 = time.perf_counter()
    for d in dirs:
        ws = os.path.join(tmp, "ws-" + d)
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", os.path.join(tasks, d, "presolved"), ws],
                       check=True, capture_output=True)
        subprocess.run(["git", "add", "-A"], cwd=ws, check=True, capture_output=True)
        subprocess.run(["git", "diff", "--cached", "HEAD"], cwd=ws, check=True, capture_output=True)
        shutil.rmtree(ws)
    return (time.perf_counter() - t0) / max(1, len(dirs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", required=True)
    ap.add_argument("--fbextract", default=os.path.join(HERE, "..", "build", "cli", "fb-extract"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="fbkit-bench-infer-")
    own, wall, base = [], [], []
    instances = 0
    for i in range(args.repeat):
        base.append(baseline(args.tasks, tmp))
        run = os.path.join(tmp, "run-%d" % i)
        t0 = time.perf_counter()
        r = subprocess.run([args.fbextract, "infer", args.tasks, "--agent-cmd", "true", "-o", run, "-q"],
                           capture_output=True, text=True)
        elapsed = time.perf_counter() - t0
        if r.returncode != 0:
            sys.exit(r.stderr)
        results = [json.load(open(os.path.join(run, d, "result.json")))
                   for d in sorted(os.listdir(run)) if os.path.exists(os.path.join(run, d, "result.json"))]
        instances = len(results)
        own.append(statistics.mean(x["fbkit_seconds"] for x in results))
        wall.append(elapsed / instances)
    shutil.rmtree(tmp)
    out = {"instances": instances, "repeat": args.repeat,
           "fbkit_seconds_per_instance": round(statistics.median(own), 4),
           "wall_seconds_per_instance": round(statistics.median(wall), 4),
           "git_baseline_seconds_per_instance": round(statistics.median(base), 4)}
    out["fbkit_over_baseline"] = round(out["fbkit_seconds_per_instance"] / out["git_baseline_seconds_per_instance"], 3)
    out["wall_over_baseline"] = round(out["wall_seconds_per_instance"] / out["git_baseline_seconds_per_instance"], 3)
    if args.json:
        print(json.dumps(out, indent=2, sort_keys=True))
    else:
        for k, v in out.items():
            print("%-36s %s" % (k, v))


if __name__ == "__main__":
    main()
