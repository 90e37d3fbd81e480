#!/usr/bin/env python3
"""RACE-bench from a bare repository, end to end: `fb-race mine` over the newest N
first-parent commits, `fb-race gt` (validation + ablation) on the candidates, then each
validated instance's gold patch scored as an agent (`fb-race score --instances`): Recall 1 and
OverPred 0 at file and task level are expected. Writes OUT/summary.json with the funnel
(mine's stages, then validated and ground truth built) and the per-instance scores.

usage: race_mine_real.py FB_RACE REPO OUT [--last 300] [--name OWNER/NAME] [--jobs 2]
                         [-- GT_ARGS...]   (e.g. --spec docs/specs/click.toml)
"""
import argparse
import json
import os
import subprocess
import sys
import time


def main():
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    ap = argparse.ArgumentParser()
    ap.add_argument("fb_race")
    ap.add_argument("repo")
    ap.add_argument("out")
    ap.add_argument("--last", type=int, default=300)
    ap.add_argument("--name", default="")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    os.makedirs(a.out, exist_ok=True)
    mined = os.path.join(a.out, "mined.jsonl")
    cmd = [a.fb_race, "mine", a.repo, "--last", str(a.last), "-o", mined, "--report",
           os.path.join(a.out, "mine.json"), "-q"]
    if a.name:
        cmd += ["--name", a.name]
    subprocess.run(cmd, check=True)
    t0 = time.monotonic()
    gt = subprocess.run([a.fb_race, "gt", mined, "-o", os.path.join(a.out, "gt"), "-q", "-j",
                         str(a.jobs), *extra], capture_output=True, text=True)
    gt_seconds = time.monotonic() - t0
    validations = [json.loads(l) for l in open(os.path.join(a.out, "gt", "validation.jsonl"))]
    insts = {json.loads(l)["instance_id"]: json.loads(l) for l in open(mined)}
    ok = [v["instance_id"] for v in validations if v["status"] == "ok"]
    built = [i for i in ok if os.path.exists(os.path.join(a.out, "gt", i.replace("/", "__") + ".json"))]
    agent = {"agent": "gold", "instances": [{"instance_id": i, "patch": insts[i]["patch"]} for i in built]}
    with open(os.path.join(a.out, "gold.json"), "w") as f:
        json.dump(agent, f)
    scores = []
    if built:
        s = subprocess.run([a.fb_race, "score", "--gt", os.path.join(a.out, "gt"), "--agent",
                            os.path.join(a.out, "gold.json"), "--instances", mined, "--format",
                            "json", "--per-instance", "--html", os.path.join(a.out, "report.html")],
                           capture_output=True, text=True, check=True)
        scores = json.loads(s.stdout)["agents"][0]["instances"]
    perfect = [x["instance_id"] for x in scores
               if x["files"]["recall"] == 1 and x["files"]["overpred"] == 0
               and x["tasks"]["recall"] in (1, None) and x["tasks"]["overpred"] in (0, None)]
    funnel = [[s["stage"], s["count"]] for s in json.load(open(os.path.join(a.out, "mine.json")))["stages"]]
    funnel += [["validated (FAIL_TO_PASS)", len(ok)], ["ground truth built", len(built)],
               ["gold: Recall 1 / OverPred 0 at file and task level", len(perfect)]]
    reasons = {}
    for v in validations:
        if v["status"] != "ok":
            key = v["reason"].split(":")[0][:60]
            reasons[key] = reasons.get(key, 0) + 1
    summary = {"repository": a.name or a.repo, "last": a.last, "funnel": funnel,
               "discarded": reasons, "gt_exit": gt.returncode, "gt_seconds": round(gt_seconds, 1),
               "not_perfect": [x for x in scores if x["instance_id"] not in perfect]}
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    for stage, n in funnel:
        print(f"{n:6d}  {stage}")
    print("discarded:", reasons)
    if gt.returncode not in (0, 3):
        print(gt.stderr[-3000:])
    return 0 if len(perfect) == len(built) else 1


if __name__ == "__main__":
    sys.exit(main())
