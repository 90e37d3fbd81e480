#!/usr/bin/env python3
"""Synthetic input for the fb-race scoring benchmark: N ground truths (fbkit.race-gt/1, JSON
Lines) and A agent runs (fbkit.race-agent/1) with patches, declared files, tasks, steps and
judgements, sized like RACE-bench instances. Deterministic for a seed.

usage: gen_race_bench.py OUT_DIR [--instances 528] [--agents 3] [--seed 1]
then:  fb-race score --gt OUT_DIR/gt.jsonl --agent OUT_DIR/agent1.json ... --format json
"""
import argparse
import json
import os
import random

TYPES = ["introduce new capability", "reuse existing semantics", "change existing semantics",
         "deprecate or replace behavior", "enforce constraints or edge cases"]
WORDS = ("parse render option value config command group version marker token cache "
         "format context default error warning path stream encode decode").split()


def sentence(rng, n=6):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def patch_for(rng, files):
    out = []
    for f in files:
        out.append(f"diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -1,40 +1,45 @@\n")
        for _ in range(40):
            out.append(f"-    {sentence(rng, 4)}\n+    {sentence(rng, 5)}\n")
    return "".join(out)


def ground_truth(rng, i):
    src = [f"src/pkg/mod{k}.py" for k in rng.sample(range(40), 5)]
    necessary, other_code = src[:3], src[3:4]
    tasks = []
    for f in src[:4]:
        for k in range(rng.randint(1, 5)):
            change = rng.choice(["new", "modified", "modified", "deleted"])
            tasks.append({"entity": f"{f}::Cls{k}.meth_{rng.choice(WORDS)}_{k}", "file": f,
                          "change": change, "necessary": rng.choice([True, False]),
                          "purpose": sentence(rng)})
    steps = [{"id": f"S{k + 1}", "type": rng.choice(TYPES),
              "related_tasks": [t["entity"] for t in rng.sample(tasks, min(2, len(tasks)))],
              "description": sentence(rng, 10)} for k in range(4)]
    return {"schema": "fbkit.race-gt/1", "instance_id": f"org__repo-{i}",
            "files": {"necessary": necessary, "other": other_code + ["CHANGES.rst"],
                      "test": [f"tests/test_mod{i}.py"], "unknown": []},
            "tasks": tasks, "steps": steps,
            "FAIL_TO_PASS": [f"tests/test_mod{i}.py::test_{k}" for k in range(30)],
            "PASS_TO_PASS": [f"tests/test_mod{i}.py::test_p{k}" for k in range(100)]}


def agent_instance(rng, gt):
    files = gt["files"]["necessary"][: rng.randint(1, 3)] + [f"src/pkg/extra{rng.randint(0, 9)}.py"]
    tasks = []
    for t in gt["tasks"]:
        if rng.random() < 0.6:
            tasks.append({"entity": t["entity"], "change": t["change"], "purpose": sentence(rng)})
    for k in range(rng.randint(0, 4)):
        tasks.append({"entity": f"{files[0]}::helper_{k}", "change": "new", "purpose": sentence(rng)})
    steps = [{"type": rng.choice(TYPES), "related_tasks": [t["entity"] for t in tasks[:2]],
              "description": sentence(rng, 10)} for _ in range(rng.randint(2, 6))]
    return {"instance_id": gt["instance_id"], "patch": patch_for(rng, files),
            "files": files, "tasks": tasks, "steps": steps,
            "applied": rng.random() < 0.9, "resolved": rng.random() < 0.5,
            "judgements": {"goal_score": rng.randint(0, 10), "concept_recall": rng.random(),
                           "concept_accuracy": rng.random()}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--instances", type=int, default=528)
    ap.add_argument("--agents", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    gts = [ground_truth(rng, i) for i in range(a.instances)]
    with open(os.path.join(a.out, "gt.jsonl"), "w") as f:
        for g in gts:
            f.write(json.dumps(g, sort_keys=True) + "\n")
    for k in range(a.agents):
        run = {"schema": "fbkit.race-agent/1", "agent": f"agent{k + 1}",
               "instances": [agent_instance(rng, g) for g in gts]}
        with open(os.path.join(a.out, f"agent{k + 1}.json"), "w") as f:
            json.dump(run, f, sort_keys=True)


if __name__ == "__main__":
    main()
