#!/usr/bin/env python3
"""Precision, recall and F1 of fbkit's top-object choice against hand labels.

The labels (bench/data/top_objects_labels.json) name, for each test file, the library
objects it tests (dotted paths where they are defined, methods as module.Class.method).
fbkit's choice comes from `fb-extract tops` (one JSON line per test file: candidates and
the chosen ones) for each chooser. Both sides are compared at the level of top-level
objects, as FeatureBench's Table 9 counts imported objects: a method label counts as its
class, a chosen method as its class. Micro-averaged over (test file, object) pairs.

usage: top_objects_eval.py --fb-extract BIN --repo OWNER/NAME=ROOT,RUN,SPEC ... [--json OUT]
RUN holds trace.json and graph.json of ROOT (fb-graph trace --isolate / build). A repository
of the labels without --repo is left out (its files are not counted).
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def label_to_id(root, source_roots, dotted):
    """'click.core.Context.invoke' -> 'src/click/core.py::Context' (top-level object)."""
    parts = dotted.split(".")
    for n in range(len(parts) - 1, 0, -1):
        module = parts[:n]
        for src in source_roots:
            for path in ("/".join(module) + ".py", "/".join(module) + "/__init__.py"):
                rel = os.path.join(src, path) if src else path
                if os.path.exists(os.path.join(root, rel)):
                    return f"{rel}::{parts[n]}"
    return None


def chosen_ids(fb_extract, root, run, spec, chooser):
    out = subprocess.run(
        [fb_extract, "tops", root, "--graph", os.path.join(run, "graph.json"), "--trace",
         os.path.join(run, "trace.json"), "--spec", spec, "--top-chooser", chooser, "-q"],
        capture_output=True, text=True, check=True).stdout
    chosen = {}
    for line in out.splitlines():
        rec = json.loads(line)
        # "path::name#2": a later definition of the same name (overloads, if/else): the
        # object is the same for the labels
        chosen[rec["f2p"]] = {c["id"].split("#")[0] for c in rec["candidates"] if c["chosen"]}
    return chosen


def score(pairs):
    tp = sum(len(p & l) for p, l in pairs)
    fp = sum(len(p - l) for p, l in pairs)
    fn = sum(len(l - p) for p, l in pairs)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": round(precision, 3),
            "recall": round(recall, 3), "f1": round(f1, 3)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fb-extract", required=True)
    ap.add_argument("--labels", default=os.path.join(HERE, "data", "top_objects_labels.json"))
    ap.add_argument("--repo", action="append", required=True,
                    help="OWNER/NAME=ROOT,RUN,SPEC")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    labels = json.load(open(a.labels))
    repos = {}
    for item in a.repo:
        name, rest = item.split("=", 1)
        root, run, spec = rest.split(",")
        repos[name] = (root, run, spec)
    results = {}
    for chooser in ("share", "specific"):
        pairs, per_repo, missing = [], {}, []
        for name, (root, run, spec) in sorted(repos.items()):
            roots = labels["repos"][name]["source_roots"]
            chosen = chosen_ids(a.fb_extract, root, run, spec, chooser)
            for f in labels["files"]:
                if f["repo"] != name:
                    continue
                want = set()
                for dotted in f["tested"]:
                    oid = label_to_id(root, roots, dotted)
                    if oid is None:
                        missing.append(dotted)
                    else:
                        want.add(oid)
                got = chosen.get(f["test_file"])
                if got is None:  # not a passing test file in this trace
                    missing.append(f["test_file"])
                    got = set()
                pairs.append((got, want))
                per_repo.setdefault(name, []).append((got, want))
        results[chooser] = {"all": score(pairs), "files": len(pairs),
                            "by_repo": {r: score(p) for r, p in per_repo.items()},
                            "unresolved": sorted(set(missing))}
    print(f"{'chooser':10} {'files':>5} {'precision':>9} {'recall':>7} {'F1':>6}")
    for chooser, r in results.items():
        s = r["all"]
        print(f"{chooser:10} {r['files']:5} {s['precision']:9.3f} {s['recall']:7.3f} {s['f1']:6.3f}")
        for repo, rs in r["by_repo"].items():
            print(f"  {repo:30} P {rs['precision']:.3f} R {rs['recall']:.3f} F1 {rs['f1']:.3f}")
    print("FeatureBench's model (paper, Table 9): precision 0.81, recall 0.89, F1 0.85")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
