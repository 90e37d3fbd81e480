#!/usr/bin/env python3
"""Fits fbkit's learned top-object choice on FeatureBench's published choices and measures it
held out by repository.

Reads the data set of bench/top_objects_dataset.py. The model is a logistic regression over
the standardised facts of each item (L2-regularised, fitted by Newton's method); the
threshold and the most items chosen per test file are tuned on the training cases (best
F1). Choosing as fbkit's C++ does (extract/make/top_facts.cc ChooseLearned): items at or above
the threshold, best first, at most max_items, the best item when none is; a class through its
chosen methods, else whole.

Measured leave-one-repository-out: for each repository, fitted on all the others and scored on
it. Scored on FeatureBench's interfaces (module:Qual keys): a chosen function or method is its
key; a class chosen whole the methods its tests reach and those of the statement no item
covers (or its own key, wrong, when there are none). Beside it
the specific rule's choice (the fact rule_chosen) and the ceiling (keys any item covers).

usage: top_objects_learn.py DATASET [--model OUT.json] [--loo-dir DIR] [--report OUT.json]
  --model   the model fitted on every repository (extract/make/top_model.json)
  --loo-dir one model per held-out repository (DIR/OWNER__NAME.json), for the pipeline run
Needs numpy. Deterministic: same data set, same bytes.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from top_objects_dataset import key_of  # noqa: E402

L2 = 1.0


def prepare(ds):
    """Per case: X, y, and what each item would add to the shown keys."""
    names = ds["facts"]
    out = []
    for c in ds["cases"]:
        keys = set(c["keys"])
        items = c["items"]
        item_keys = {key_of(it[0]) for it in items}
        cls = names.index("class")
        adds, kinds = [], []
        for it in items:
            k = key_of(it[0])
            if it[2] or it[4][cls] == 0:
                adds.append({k})
                kinds.append("f")
            else:
                # Whole, a class shows the methods its tests reach (its members) and those of
                # the statement no item covers.
                members = {key_of(m[0]) for m in items if m[2] and m[1] == it[0]}
                shown = {x for x in keys if x.startswith(k + ".") and x not in item_keys}
                adds.append(members | shown or {k})
                kinds.append("c")
        out.append({"repo": c["repo"], "case": c["case"], "keys": keys,
                    "X": np.array([it[4] for it in items], dtype=float).reshape(len(items), len(names)),
                    "y": np.array([it[3] for it in items], dtype=float),
                    "ids": [it[0] for it in items], "candidate": [it[1] for it in items],
                    "member": [bool(it[2]) for it in items], "adds": adds, "kinds": kinds})
    return names, out


def fit(cases, d):
    X = np.vstack([c["X"] for c in cases]) if cases else np.zeros((0, d))
    y = np.concatenate([c["y"] for c in cases]) if cases else np.zeros(0)
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-9] = 1.0
    Z = np.hstack([np.ones((len(X), 1)), (X - mean) / scale])
    w = np.zeros(Z.shape[1])
    reg = np.eye(Z.shape[1]) * L2
    reg[0, 0] = 0
    for _ in range(50):
        p = 1 / (1 + np.exp(-Z @ w))
        grad = Z.T @ (p - y) + reg @ w
        H = (Z * (p * (1 - p))[:, None]).T @ Z + reg
        step = np.linalg.solve(H, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return {"bias": float(w[0]), "weights": w[1:], "mean": mean, "scale": scale}


def probs(model, c):
    z = model["bias"] + ((c["X"] - model["mean"]) / model["scale"]) @ model["weights"]
    return 1 / (1 + np.exp(-z))


def choose(c, p, threshold, max_items):
    order = sorted(range(len(p)), key=lambda i: (-p[i], i))
    take = set()
    for i in order:
        if p[i] < threshold or (max_items and len(take) >= max_items):
            break
        take.add(i)
    if not take and order:
        take.add(order[0])
    with_members = {c["candidate"][i] for i in take if c["member"][i]}
    return {i for i in take if c["member"][i] or c["candidate"][i] not in with_members}


def shown(c, chosen):
    out = set()
    for i in chosen:
        out |= c["adds"][i]
    return out


def counts(c, pred):
    keys = c["keys"]
    return len(pred & keys), len(pred - keys), len(keys - pred)


def prf(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return round(p, 3), round(r, 3), round(f, 3)


def tune(model, cases):
    """The threshold and max_items with the best micro F1 on `cases`."""
    return tune_on(cases, [probs(model, c) for c in cases])


def tune_on(cases, ps):
    """The threshold and max_items with the best micro F1 on `cases`, scored `ps`."""
    best = None
    for threshold in [x / 100 for x in range(5, 96, 5)]:
        for max_items in (0, 3, 5, 8, 12, 16, 24, 32):
            tot = [0, 0, 0]
            for c, p in zip(cases, ps):
                for k, v in enumerate(counts(c, shown(c, choose(c, p, threshold, max_items)))):
                    tot[k] += v
            f = prf(*tot)[2]
            if best is None or f > best[0] + 1e-12:
                best = (f, threshold, max_items)
    return best[1], best[2]


def rule_choice(names, c):
    rc = names.index("rule_chosen")
    take = {i for i in range(len(c["ids"])) if c["X"][i, rc] > 0}
    whole = {c["candidate"][i] for i in take if not c["member"][i] and c["kinds"][i] == "c"}
    return {i for i in take if not (c["member"][i] and c["candidate"][i] in whole)}


def model_json(names, model, threshold, max_items, trained_on):
    facts = [{"name": n, "mean": round(float(m), 6), "scale": round(float(s), 6),
              "weight": round(float(w), 6)}
             for n, m, s, w in zip(names, model["mean"], model["scale"], model["weights"])]
    return json.dumps({"schema": "fbkit.top-model/1", "trained_on": trained_on,
                       "bias": round(model["bias"], 6), "threshold": threshold,
                       "max_items": max_items, "facts": facts}, indent=1, sort_keys=True) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--model")
    ap.add_argument("--loo-dir")
    ap.add_argument("--report")
    args = ap.parse_args()
    ds = json.load(open(args.dataset))
    names, cases = prepare(ds)
    repos = sorted({c["repo"] for c in cases})
    rows, tot = [], {"learned": [0, 0, 0], "rule": [0, 0, 0], "ceiling": [0, 0, 0]}
    for repo in repos:
        train = [c for c in cases if c["repo"] != repo]
        test = [c for c in cases if c["repo"] == repo]
        model = fit(train, len(names))
        threshold, max_items = tune(model, train)
        if args.loo_dir:
            os.makedirs(args.loo_dir, exist_ok=True)
            with open(os.path.join(args.loo_dir, repo.replace("/", "__") + ".json"), "w") as f:
                f.write(model_json(names, model, threshold, max_items,
                                   f"{len(repos) - 1} repositories (all but {repo})"))
        sums = {k: [0, 0, 0] for k in tot}
        for c in test:
            got = {"learned": shown(c, choose(c, probs(model, c), threshold, max_items)),
                   "rule": shown(c, rule_choice(names, c)),
                   "ceiling": set().union(*[c["adds"][i] for i in range(len(c["ids"])) if c["y"][i] > 0])}
            for k, pred in got.items():
                for j, v in enumerate(counts(c, pred)):
                    sums[k][j] += v
                    tot[k][j] += v
        row = {"repo": repo, "cases": len(test), "threshold": threshold, "max_items": max_items}
        for k, v in sums.items():
            row[k] = dict(zip(("precision", "recall", "f1"), prf(*v)))
        rows.append(row)
        print(f"{repo:22} {len(test):3} cases  learned P {row['learned']['precision']:.3f} "
              f"R {row['learned']['recall']:.3f}  rule P {row['rule']['precision']:.3f} "
              f"R {row['rule']['recall']:.3f}  ceiling R {row['ceiling']['recall']:.3f}  "
              f"(t {threshold}, max {max_items})")
    overall = {k: dict(zip(("precision", "recall", "f1"), prf(*v))) for k, v in tot.items()}
    print("overall", json.dumps(overall))
    model = fit(cases, len(names))
    threshold, max_items = tune(model, cases)
    if args.model:
        with open(args.model, "w") as f:
            f.write(model_json(names, model, threshold, max_items,
                               f"{len(repos)} repositories, {len(cases)} test files"))
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"schema": "fbkit.bench.top-objects-learn/1", "overall": overall,
                       "repos": rows, "l2": L2}, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
