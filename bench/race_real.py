#!/usr/bin/env python3
"""fb-race on real feature commits of a repository (never committed into fbkit).

For each commit: the instance is built from `git show` of the commit (base = its parent;
test files -- a `tests/` or `testing/` directory, test_*.py, *_test.py, conftest.py -- go
to the test patch, everything else to the gold patch). Then:
  1. `fb-race gt` (validate + file/entity ablation) on all instances;
  2. `fb-race entities` per instance, checked against an independent parse of the two file
     versions with CPython's `ast` (race_ast_changes.py);
  3. the gold patch scored as an agent (`fb-race score --instances`): Recall 1 and
     OverPred 0 are expected at file and task level.

usage: race_real.py FB_RACE REPO OUT COMMIT... [--pythonpath P]... [--python PY]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_RE = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)conftest\.py$")


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def instance(repo, commit):
    files = git(repo, "diff", "--name-only", commit + "^", commit).split()
    tests = [f for f in files if TEST_RE.search(f)]
    source = [f for f in files if f not in tests]
    diff = lambda paths: git(repo, "diff", "--binary", commit + "^", commit, "--", *paths) if paths else ""
    return {"instance_id": os.path.basename(repo.rstrip("/")) + "-" + commit[:8], "repo": repo,
            "base_commit": git(repo, "rev-parse", commit + "^").strip(),
            "patch": diff(source), "test_patch": diff(tests),
            "problem_statement": git(repo, "log", "-1", "--format=%B", commit)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fb_race")
    ap.add_argument("repo")
    ap.add_argument("out")
    ap.add_argument("commits", nargs="+")
    ap.add_argument("--pythonpath", action="append", default=[])
    ap.add_argument("--python", default="/usr/bin/python3")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    insts = [instance(a.repo, c) for c in a.commits]
    path = os.path.join(a.out, "instances.jsonl")
    with open(path, "w") as f:
        for i in insts:
            f.write(json.dumps(i, sort_keys=True) + "\n")
    extra = sum((["--pythonpath", p] for p in a.pythonpath), [])
    t0 = time.time()
    gt = subprocess.run([a.fb_race, "gt", path, "--python", a.python, "-o", os.path.join(a.out, "gt"),
                         "-q", *extra], capture_output=True, text=True)
    gt_seconds = time.time() - t0
    print(f"fb-race gt: exit {gt.returncode}, {gt_seconds:.1f} s for {len(insts)} instances")
    if gt.stderr:
        print(gt.stderr.strip())
    validations = [json.loads(l) for l in open(os.path.join(a.out, "gt", "validation.jsonl"))]
    ok = [v["instance_id"] for v in validations if v["status"] == "ok"]
    agree_total = disagree_total = 0
    for inst, v in zip(insts, validations):
        iid = inst["instance_id"]
        line = f"{iid}: {v['status']}"
        if v["status"] != "ok":
            print(line + f" ({v['reason'][:100]})")
            continue
        g = json.load(open(os.path.join(a.out, "gt", iid + ".json")))
        patch_file = os.path.join(a.out, iid + ".patch")
        open(patch_file, "w").write(inst["patch"])
        ent = subprocess.run([a.fb_race, "entities", a.repo, "--base", inst["base_commit"],
                              "--patch", patch_file], capture_output=True, text=True, check=True)
        ours = {(c["entity"], c["change"]) for c in json.loads(ent.stdout)["changes"]}
        check = subprocess.run([sys.executable, os.path.join(HERE, "race_ast_changes.py"), a.repo,
                                inst["base_commit"], patch_file], capture_output=True, text=True,
                               check=True)
        theirs = {tuple(x) for x in json.loads(check.stdout)}
        agree, only_ours, only_ast = ours & theirs, ours - theirs, theirs - ours
        agree_total += len(agree)
        disagree_total += len(only_ours) + len(only_ast)
        nec = {k: len(v2) for k, v2 in g["files"].items()}
        tasks_nec = sum(1 for t in g["tasks"] if t["necessary"] is True)
        print(line + f": F2P {len(g['FAIL_TO_PASS'])}, P2P {len(g['PASS_TO_PASS'])}, files {nec}, "
              f"tasks {len(g['tasks'])} ({tasks_nec} necessary); entity changes agree with ast "
              f"{len(agree)}/{len(ours | theirs)}")
        for x in sorted(only_ours):
            print("   only fb-race:", x)
        for x in sorted(only_ast):
            print("   only ast:   ", x)
    gold = {"agent": "gold", "instances": [{"instance_id": i["instance_id"], "patch": i["patch"],
                                            "resolved": True} for i in insts if i["instance_id"] in ok]}
    gold_path = os.path.join(a.out, "gold-agent.json")
    json.dump(gold, open(gold_path, "w"))
    score = subprocess.run([a.fb_race, "score", "--gt", os.path.join(a.out, "gt"), "--agent", gold_path,
                            "--instances", path, "--format", "json", "--per-instance"],
                           capture_output=True, text=True)
    print(f"score: exit {score.returncode} {score.stderr.strip()}")
    s = json.loads(score.stdout)["agents"][0]
    perfect = 0
    for r in s["instances"]:
        vals = (r["files"]["recall"], r["files"]["overpred"], r["tasks"]["recall"], r["tasks"]["overpred"])
        perfect += vals == (1, 0, 1, 0)
        print(f"  gold-as-agent {r['instance_id']}: Rec@F {vals[0]} OP@F {vals[1]} Rec@T {vals[2]} OP@T {vals[3]}")
    print(f"SUMMARY {os.path.basename(a.repo)}: {len(ok)}/{len(insts)} validated; entity changes "
          f"agree with ast {agree_total}, disagree {disagree_total}; gold-as-agent perfect "
          f"{perfect}/{len(s['instances'])}; gt {gt_seconds:.1f} s")


if __name__ == "__main__":
    main()
