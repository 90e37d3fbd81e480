#!/usr/bin/env python3
"""The table of bench/README.md's "A new user's repositories": per run directory of
bench/quick_start.sh, the test files, candidates, tasks, gold resolved, and the files left out
by rule (from tasks/summary.json's left_out), with each step's exit status.

usage: quick_start_table.py NAME=OUT ... (markdown on stdout)
"""
import collections
import json
import os
import sys


def row(name, out):
    steps = {}
    with open(os.path.join(out, "steps.tsv")) as f:
        for line in f:
            step, rc, secs = line.rstrip("\n").split("\t")
            steps[step] = (int(rc), int(secs))
    summary_path = os.path.join(out, "tasks", "summary.json")
    s = json.load(open(summary_path)) if os.path.exists(summary_path) else {}
    gold_path = os.path.join(out, "eval-gold", "summary.json")
    g = json.load(open(gold_path)) if os.path.exists(gold_path) else {}
    rules = collections.Counter(x["reason"] for x in s.get("left_out", []))
    left = "; ".join(f"{r}: {n}" for r, n in sorted(rules.items())) or "none"
    exits = " ".join(f"{k} {v[0]}" for k, v in steps.items())
    secs = sum(v[1] for v in steps.values())
    return (f"| {name} | {s.get('test_files', '-')} | {s.get('candidates', '-')} | "
            f"{s.get('emitted', '-')} | {g.get('resolved', '-')}/{g.get('instances', '-')} | "
            f"{left} | {exits} | {secs} |")


def main():
    print("| repository | test files | candidates | F2P files with a task | gold resolved / tasks "
          "| left out, by rule | exit statuses | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for arg in sys.argv[1:]:
        name, out = arg.split("=", 1)
        print(row(name, out))


if __name__ == "__main__":
    main()
