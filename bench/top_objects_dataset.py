#!/usr/bin/env python3
"""FeatureBench's published top-object choices as a data set over fbkit's candidates.

For each published case of CASES.json (bench/data/featurebench_cases_learn.json: twelve
repositories, one level-1 case per test file) it reads the interfaces FeatureBench's
statement shows (its gh-pages branch, as bench/featurebench_repro.py reads them), runs
`fb-extract tops --f2p FILE --facts` on the repository's trace and graph (made once by
featurebench_repro.prepare), and labels every item fbkit offers: a function candidate or a
method of a class candidate is chosen when FeatureBench's statement shows it; a class
candidate whole when the statement shows methods of it that are not among the methods the
test file's run reaches (what bench/featurebench_oracle.py answers). FeatureBench's
interfaces that no item covers are counted per case (the recall no choice can reach).

usage: top_objects_dataset.py --featurebench SRC --cases CASES.json --work DIR
           [--fbkit build/cli] [-o bench/data/top_objects_dataset.json] [--only REPO ...]
Output (fbkit.bench.top-objects-dataset/1): "facts" (the fact names, TopFactNames' order)
and "cases", each with repo, case, f2p, keys (FeatureBench's interfaces), covered (those an
item covers) and items [id, candidate, member, label, [facts...]]. Deterministic: same
inputs, same bytes.
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import featurebench_repro as fr  # noqa: E402


def key_of(entity_id):
    path, _, qual = entity_id.partition("::")
    return f"{fr.module_of(path)}:{qual.split('#')[0]}"


def label_items(items, keys):
    """(label per item, covered keys): functions and methods by their key; a class whole by
    a shown method of it that is none of its items."""
    item_keys = {key_of(it["id"]) for it in items}
    labels, covered = [], {k for k in keys if k in item_keys}
    for it in items:
        k = key_of(it["id"])
        if it["member"] or it["facts"]["class"] == 0:
            labels.append(1 if k in keys else 0)
            continue
        shown = {x for x in keys if x.startswith(k + ".") and x not in item_keys}
        labels.append(1 if shown else 0)
        covered |= shown
    return labels, covered


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--featurebench", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--fbkit", default=os.path.join(os.path.dirname(__file__), "..", "build", "cli"))
    ap.add_argument("-o", "--output", default=os.path.join(os.path.dirname(__file__), "data",
                                                           "top_objects_dataset.json"))
    ap.add_argument("--only", nargs="*", help="repositories (owner/name) to include")
    args = ap.parse_args()
    log = lambda msg: print(msg, file=sys.stderr, flush=True)
    cfg = json.load(open(args.cases))
    published = fr.published_paths(args.featurebench)
    here = os.path.dirname(os.path.abspath(args.cases))
    names, cases = None, []
    for repo in cfg["repositories"]:
        if args.only and repo["name"] not in args.only:
            continue
        repo = dict(repo)
        if not os.path.isabs(repo["spec"]):
            repo["spec"] = os.path.normpath(os.path.join(here, "..", "..", repo["spec"]))
        try:
            trace, graph, _, _ = fr.prepare(repo, args.fbkit, args.work, log)
        except RuntimeError as e:
            log(f"{repo['name']}: left out: {str(e).splitlines()[0]}")
            continue
        prefix = repo["name"].replace("/", "__") + "." + repo["commit"][:8]
        for case in repo["cases"]:
            stem, md5_8, _ = case.rsplit(".", 2)
            where = sorted(p for p in published if f"/{prefix}/{case}/" in p)
            if not where:
                sys.exit(f"{args.cases}: case {case} not published under {prefix}")
            f2p = fr.f2p_by_hash(repo["checkout"], stem, md5_8)
            if not f2p:
                sys.exit(f"{args.cases}: no test file of {repo['checkout']} matches {case}")
            keys = fr.interfaces(fr.git_show(args.featurebench, "gh-pages:" + where[0]),
                                 repo["checkout"], 1)
            p = fr.run([os.path.join(args.fbkit, "fb-extract"), "tops", repo["checkout"],
                        "--spec", repo["spec"], "--graph", graph, "--trace", trace, "--f2p", f2p,
                        "--facts", "-q"])
            if p.returncode != 0 or not p.stdout.strip():
                log(f"{case}: fb-extract tops failed: {p.stderr.strip()[-500:]}")
                continue
            rec = json.loads(p.stdout.splitlines()[0])
            items = rec.get("items", [])
            if names is None and items:
                names = sorted(items[0]["facts"])
            labels, covered = label_items(items, keys)
            cases.append({
                "repo": repo["name"], "case": case, "f2p": f2p, "keys": sorted(keys),
                "covered": sorted(covered),
                "items": [[it["id"], it["candidate"], it["member"], y,
                           [it["facts"][n] for n in names]] for it, y in zip(items, labels)],
            })
            log(f"{repo['name']} {case}: {len(items)} items, {sum(labels)} chosen by "
                f"FeatureBench, {len(covered)}/{len(keys)} of its interfaces covered")
    out = {"schema": "fbkit.bench.top-objects-dataset/1", "facts": names or [], "cases": cases}
    with open(args.output, "w") as f:
        json.dump(out, f, sort_keys=True, separators=(",", ":"))
        f.write("\n")
    total = sum(len(c["keys"]) for c in cases)
    cov = sum(len(c["covered"]) for c in cases)
    print(f"{len(cases)} cases, {sum(len(c['items']) for c in cases)} items; "
          f"{cov}/{total} of FeatureBench's interfaces covered by an item")


if __name__ == "__main__":
    main()
