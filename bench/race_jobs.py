#!/usr/bin/env python3
"""`fb-race gt -j N` against `-j 1` on the same instances: wall-time ratio, identical outputs.

Both runs happen in this process one after the other (same machine, same load), so the
ratio is what is claimed, not the seconds. The instances come from a file, or are built
from feature commits of a repository the way race_real.py builds them.

usage: race_jobs.py FB_RACE OUT (--instances FILE | --repo REPO --commits C...) [--jobs 2]
                    [--rounds 1] [-- GT_ARGS...]
"""
import argparse
import filecmp
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import race_real  # noqa: E402


def run_gt(fb_race, instances, out, jobs, extra):
    t0 = time.monotonic()
    p = subprocess.run([fb_race, "gt", instances, "-o", out, "-q", "-j", str(jobs), *extra],
                       capture_output=True, text=True)
    return time.monotonic() - t0, p.returncode, p.stderr


def same_tree(a, b):
    names = sorted(os.listdir(a))
    if names != sorted(os.listdir(b)):
        return False, "file lists differ"
    for n in names:
        if not filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False):
            return False, n + " differs"
    return True, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fb_race")
    ap.add_argument("out")
    ap.add_argument("--instances")
    ap.add_argument("--repo")
    ap.add_argument("--commits", nargs="+", default=[])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1)
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    os.makedirs(a.out, exist_ok=True)
    instances = a.instances
    if not instances:
        instances = os.path.join(a.out, "instances.jsonl")
        with open(instances, "w") as f:
            for c in a.commits:
                f.write(json.dumps(race_real.instance(a.repo, c), sort_keys=True) + "\n")
    n = sum(1 for _ in open(instances))
    results = []
    for r in range(a.rounds):
        t1, rc1, err1 = run_gt(a.fb_race, instances, os.path.join(a.out, f"j1-{r}"), 1, extra)
        tn, rcn, errn = run_gt(a.fb_race, instances, os.path.join(a.out, f"j{a.jobs}-{r}"), a.jobs, extra)
        same, why = same_tree(os.path.join(a.out, f"j1-{r}"), os.path.join(a.out, f"j{a.jobs}-{r}"))
        results.append({"round": r, "j1_seconds": round(t1, 2), f"j{a.jobs}_seconds": round(tn, 2),
                        "ratio": round(tn / t1, 3), "exit": [rc1, rcn], "identical": same, "why": why})
        print(f"round {r}: -j 1 {t1:.1f} s, -j {a.jobs} {tn:.1f} s, ratio {tn / t1:.3f}, "
              f"exit {rc1}/{rcn}, outputs {'identical' if same else 'DIFFER: ' + why}")
        if rc1 not in (0, 3) or not same:
            sys.stderr.write(err1[-2000:] + errn[-2000:])
    json.dump({"instances": n, "jobs": a.jobs, "rounds": results}, open(os.path.join(a.out, "race_jobs.json"), "w"),
              indent=1, sort_keys=True)
    return 0 if all(r["identical"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
