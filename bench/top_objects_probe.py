#!/usr/bin/env python3
"""Whether the facts or the model bound the learned top-object choice (issue 68's probe).

Leave-one-repository-out over bench/top_objects_dataset.py's data set, as
top_objects_learn.py measures it, for: the logistic model on the 30 facts; the same with
eight facts relative to the test file's other items; with five facts from the test file's
imports and names; gradient-boosted trees on the 30 facts (needs scikit-learn; skipped
without it). Each prints micro precision, recall, F1 over FeatureBench's interfaces and the
R-precision (of a file's k interfaces, how many its k best items hold).

usage: top_objects_probe.py DATASET --cases CASES   (CASES names each repository's checkout)
Needs numpy. Deterministic.
"""

import argparse
import ast
import collections
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import featurebench_repro as fr  # noqa: E402
import top_objects_learn as L  # noqa: E402


def relative_facts(c, ix):
    X = c["X"]
    n = len(X)

    def pct(col, asc=True):
        v = X[:, ix[col]]
        order = np.argsort(v if asc else -v, kind="stable")
        r = np.empty(n)
        r[order] = np.arange(n) / max(1, n - 1)
        return r
    ls = X[:, ix["log_spread"]]
    called = X[:, ix["called"]] > 0
    least = ls[called].min() if called.any() else ls.min()
    d1 = (X[:, ix["depth"]] == 1) * 1.0
    return [pct("log_spread"), ls - least, (ls - ls.mean()) / (ls.std() + 1e-9),
            X[:, ix["called"]] * X[:, ix["subject_module"]], X[:, ix["called"]] * d1,
            X[:, ix["in_test_names"]] * X[:, ix["called"]], d1, pct("log_lines", False)]


def source_facts(c, ix, root, f2p):
    try:
        tree = ast.parse(open(os.path.join(root, f2p)).read())
    except (OSError, SyntaxError):
        tree = ast.Module(body=[], type_ignores=[])
    mods, idents = set(), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module:
            mods.add(n.module)
            for a in n.names:
                mods.add(n.module + "." + a.name)
                idents.add(a.name)
        elif isinstance(n, ast.Import):
            mods.update(a.name for a in n.names)
        elif isinstance(n, ast.Attribute):
            idents.add(n.attr)
        elif isinstance(n, ast.Name):
            idents.add(n.id)
    sibling = collections.defaultdict(float)
    for i, cid in enumerate(c["candidate"]):
        sibling[cid] = max(sibling[cid], c["X"][i, ix["called"]])
    rows = []
    for i, iid in enumerate(c["ids"]):
        path, _, qual = iid.partition("::")
        mod = fr.module_of(path)
        parts = qual.split("#")[0].split(".")
        rows.append([float(any(mod == m or mod.startswith(m + ".") for m in mods)),
                     float(mod in mods), float(len(parts) > 1 and parts[0] in idents),
                     float(parts[-1] in idents), sibling[c["candidate"][i]]])
    return list(np.array(rows).T)


def held_out(cases, fit, probs):
    tot, hit, want = [0, 0, 0], 0, 0
    for repo in sorted({c["repo"] for c in cases}):
        train = [c for c in cases if c["repo"] != repo]
        model = fit(train)
        threshold, cap = L.tune_on(train, [probs(model, c) for c in train])
        for c in (c for c in cases if c["repo"] == repo):
            p = probs(model, c)
            for k, v in enumerate(L.counts(c, L.shown(c, L.choose(c, p, threshold, cap)))):
                tot[k] += v
            k = int(c["y"].sum())
            if k:
                hit += int(c["y"][np.argsort(-p, kind="stable")[:k]].sum())
                want += k
    return L.prf(*tot), round(hit / want, 3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--cases", required=True)
    args = ap.parse_args()
    ds = json.load(open(args.dataset))
    names, cases = L.prepare(ds)
    ix = {n: i for i, n in enumerate(names)}
    f2p = {c["case"]: c["f2p"] for c in ds["cases"]}
    roots = {r["name"]: r["checkout"] for r in json.load(open(args.cases))["repositories"]}
    base = [c["X"] for c in cases]
    logistic = (lambda tr: L.fit(tr, tr[0]["X"].shape[1]), L.probs)
    print("logistic, 30 facts", *held_out(cases, *logistic))
    for c, x in zip(cases, base):
        c["X"] = np.hstack([x, np.array(relative_facts(c, ix)).T])
    print("logistic, + 8 relative facts", *held_out(cases, *logistic))
    for c, x in zip(cases, base):
        c["X"] = x
        c["X"] = np.hstack([x, np.array(source_facts(c, ix, roots[c["repo"]], f2p[c["case"]])).T])
    print("logistic, + 5 source facts", *held_out(cases, *logistic))
    for c, x in zip(cases, base):
        c["X"] = x
    try:
        from sklearn.ensemble import HistGradientBoostingClassifier
    except ImportError:
        print("gradient-boosted trees: skipped (no scikit-learn)")
        return
    trees = (lambda tr: HistGradientBoostingClassifier(
                 max_iter=200, learning_rate=0.05, max_depth=4, random_state=0).fit(
                 np.vstack([c["X"] for c in tr]), np.concatenate([c["y"] for c in tr])),
             lambda m, c: m.predict_proba(c["X"])[:, 1])
    print("gradient-boosted trees, 30 facts", *held_out(cases, *trees))


if __name__ == "__main__":
    main()
