#!/usr/bin/env python3
"""Entity changes of many real commits: `fb-race entities` against the independent `ast`
check (race_ast_changes.py), no tests run. Prints disagreements and a summary.

usage: race_entities_sweep.py FB_RACE REPO [--count 200] [--paths src]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fb_race")
    ap.add_argument("repo")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--paths", default="src")
    a = ap.parse_args()
    commits = subprocess.run(["git", "-C", a.repo, "log", "--no-merges", "--format=%H", "-n",
                              str(a.count), "--", a.paths], capture_output=True, text=True,
                             check=True).stdout.split()
    agree = disagree = skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        patch = os.path.join(tmp, "p.diff")
        for c in commits:
            diff = subprocess.run(["git", "-C", a.repo, "diff", c + "^", c, "--", a.paths],
                                  capture_output=True, text=True)
            if diff.returncode != 0 or not diff.stdout:
                skipped += 1
                continue
            open(patch, "w").write(diff.stdout)
            ours = subprocess.run([a.fb_race, "entities", a.repo, "--base", c + "^", "--patch", patch],
                                  capture_output=True, text=True)
            theirs = subprocess.run([sys.executable, os.path.join(HERE, "race_ast_changes.py"), a.repo,
                                     c + "^", patch], capture_output=True, text=True)
            if ours.returncode != 0 or theirs.returncode != 0:
                skipped += 1
                continue
            o = {(x["entity"], x["change"]) for x in json.loads(ours.stdout)["changes"]}
            t = {tuple(x) for x in json.loads(theirs.stdout)}
            agree += len(o & t)
            disagree += len(o ^ t)
            for x in sorted(o - t):
                print(c[:8], "only fb-race:", x)
            for x in sorted(t - o):
                print(c[:8], "only ast:    ", x)
    print(f"SUMMARY {os.path.basename(a.repo)}: {len(commits)} commits ({skipped} skipped), "
          f"entity changes agreeing {agree}, disagreeing {disagree}")


if __name__ == "__main__":
    main()
