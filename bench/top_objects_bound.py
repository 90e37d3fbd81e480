#!/usr/bin/env python3
"""How far fbkit's facts can carry the top-object choice, whatever the model (issue 68's bound).

Over bench/top_objects_dataset.py's data set, scored as top_objects_learn.py scores it (micro
precision, recall, F1 over FeatureBench's interfaces; threshold and cap tuned on the training
cases), for a logistic model and for gradient-boosted trees (scikit-learn), under three splits
from honest to optimistic:
- repository held out: trained on every other repository (the issue's measure);
- case held out: trained on every other test file, its own repository's included;
- in sample: trained on the very cases measured (no result, an upper bound: what the facts
  separate when the answer is known).
When even the in-sample fit stays below a bar, no choice over these facts reaches it held out.

usage: top_objects_bound.py DATASET [--report OUT.json]
Needs numpy and scikit-learn. Deterministic (trees seeded).
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import top_objects_learn as L  # noqa: E402


def logistic(names):
    def make(train):
        model = L.fit(train, len(names))
        return lambda c: L.probs(model, c)
    return make


def trees(train):
    from sklearn.ensemble import HistGradientBoostingClassifier
    X = np.vstack([c["X"] for c in train])
    y = np.concatenate([c["y"] for c in train])
    g = HistGradientBoostingClassifier(random_state=0, max_iter=200, max_depth=4).fit(X, y)
    return lambda c: g.predict_proba(c["X"])[:, 1]


def measure(splits, make):
    """Micro (tp, fp, fn) over every split's test cases, each scored by a model of its train."""
    tot = [0, 0, 0]
    for train, test in splits:
        score = make(train)
        threshold, max_items = L.tune_on(train, [score(c) for c in train])
        for c in test:
            chosen = L.choose(c, score(c), threshold, max_items)
            for k, v in enumerate(L.counts(c, L.shown(c, chosen))):
                tot[k] += v
    return dict(zip(("precision", "recall", "f1"), L.prf(*tot)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--report")
    args = ap.parse_args()
    names, cases = L.prepare(json.load(open(args.dataset)))
    repos = sorted({c["repo"] for c in cases})
    splits = {
        "repository held out": [([c for c in cases if c["repo"] != r],
                                 [c for c in cases if c["repo"] == r]) for r in repos],
        "case held out": [([d for d in cases if d is not c], [c]) for c in cases],
        "in sample": [(cases, cases)],
    }
    rows = []
    for split, pairs in splits.items():
        for model, make in (("logistic", logistic(names)), ("trees", trees)):
            got = measure(pairs, make)
            rows.append({"split": split, "model": model, **got})
            print(f"{model:9} {split:20} P {got['precision']:.3f} R {got['recall']:.3f} "
                  f"F1 {got['f1']:.3f}", flush=True)
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"schema": "fbkit.bench.top-objects-bound/1", "cases": len(cases),
                       "repositories": len(repos), "rows": rows}, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
