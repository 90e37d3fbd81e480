#!/usr/bin/env python3
"""The learned top-object choice through fbkit's whole method, held out by repository.

For each repository of CASES.json it runs bench/featurebench_repro.py on that repository's
cases twice: with the default rule, and with `--top-chooser learned --top-model
LOO_DIR/OWNER__NAME.json` (the model bench/top_objects_learn.py --loo-dir fitted on every
other repository). Both see the same extra fb-extract arguments (e.g. --no-verify). It
reports interface recall and precision per repository and overall (micro over
FeatureBench's interfaces, as featurebench_repro.py scores them), rule beside learned.

usage: top_objects_pipeline.py --featurebench SRC --cases CASES.json --work DIR --loo-dir DIR
           [--fbkit build/cli] [--extract-arg ARG ...] [--only REPO ...] [--report OUT.json]
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def sums(rows):
    hit = sum(r["hit"] for r in rows)
    theirs = sum(r["theirs"] for r in rows)
    ours = sum(r["ours"] for r in rows if r["emitted"])
    hit_e = sum(r["hit"] for r in rows if r["emitted"])
    return {"cases": len(rows), "emitted": sum(r["emitted"] for r in rows),
            "recall": round(hit / theirs, 3) if theirs else None,
            "precision": round(hit_e / ours, 3) if ours else None,
            "hit": hit, "theirs": theirs, "ours": ours}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--featurebench", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--loo-dir", required=True)
    ap.add_argument("--fbkit", default=os.path.join(HERE, "..", "build", "cli"))
    ap.add_argument("--extract-arg", action="append", default=[])
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--report")
    args = ap.parse_args()
    cfg = json.load(open(args.cases))
    out = {"schema": "fbkit.bench.top-objects-pipeline/1", "extract_args": args.extract_arg,
           "repos": []}
    all_rows = {"rule": [], "learned": []}
    for repo in cfg["repositories"]:
        if args.only and repo["name"] not in args.only:
            continue
        model = os.path.join(args.loo_dir, repo["name"].replace("/", "__") + ".json")
        if not os.path.exists(model):
            print(f"{repo['name']}: no held-out model ({model}), left out", file=sys.stderr)
            continue
        entry = {"repo": repo["name"]}
        for label, extra in (("rule", []), ("learned", ["--top-chooser", "learned",
                                                        "--top-model", model])):
            report = os.path.join(args.work, f"pipeline-{label}-{repo['name'].replace('/', '__')}.json")
            cmd = [sys.executable, os.path.join(HERE, "featurebench_repro.py"),
                   "--featurebench", args.featurebench, "--cases", args.cases, "--work", args.work,
                   "--fbkit", args.fbkit, "--label", label, "--report", report,
                   "--only", *repo["cases"]]
            for a in args.extract_arg + extra:
                cmd.append(f"--extract-arg={a}")
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"{repo['name']} ({label}): featurebench_repro.py failed:\n{p.stderr[-2000:]}")
            rows = json.load(open(report))["cases"]
            all_rows[label] += rows
            entry[label] = sums(rows)
            print(f"{repo['name']:22} {label:8} {json.dumps(entry[label])}", flush=True)
        out["repos"].append(entry)
    out["overall"] = {k: sums(v) for k, v in all_rows.items()}
    print("overall", json.dumps(out["overall"]))
    if args.report:
        with open(args.report, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
