#!/usr/bin/env python3
"""`fb-race gt` throughput on the same instances, three runs one after the other (same
machine, same load; the ratios are what is claimed, not the seconds):
  files  -j 1 --whole-files  (ablation reruns the F2P tests' whole files: the baseline)
  j1     -j 1                (ablation reruns only the F2P tests)
  jN     -j N
with ratios j1/files and jN/j1, and the three output directories compared byte for byte. The instances come from a file, or are built
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
        runs = {}
        for name, jobs, flags in (("files", 1, ["--whole-files"]), ("j1", 1, []),
                                  (f"j{a.jobs}", a.jobs, [])):
            out = os.path.join(a.out, f"{name}-{r}")
            runs[name] = run_gt(a.fb_race, instances, out, jobs, extra + flags) + (out,)
        t_files, t1, tn = runs["files"][0], runs["j1"][0], runs[f"j{a.jobs}"][0]
        same1, why1 = same_tree(runs["files"][3], runs["j1"][3])
        same2, why2 = same_tree(runs["j1"][3], runs[f"j{a.jobs}"][3])
        results.append({"round": r, "files_seconds": round(t_files, 2), "j1_seconds": round(t1, 2),
                        f"j{a.jobs}_seconds": round(tn, 2), "ids_vs_files": round(t1 / t_files, 3),
                        "ratio": round(tn / t1, 3), "exit": [v[1] for v in runs.values()],
                        "identical": same1 and same2, "why": why1 or why2})
        print(f"round {r}: whole files {t_files:.1f} s, -j 1 {t1:.1f} s (x{t1 / t_files:.3f}), "
              f"-j {a.jobs} {tn:.1f} s (x{tn / t1:.3f} of -j 1), outputs "
              f"{'identical' if same1 and same2 else 'DIFFER: ' + (why1 or why2)}")
        if not (same1 and same2):
            for v in runs.values():
                sys.stderr.write(v[2][-2000:])
    json.dump({"instances": n, "jobs": a.jobs, "rounds": results}, open(os.path.join(a.out, "race_jobs.json"), "w"),
              indent=1, sort_keys=True)
    return 0 if all(r["identical"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
