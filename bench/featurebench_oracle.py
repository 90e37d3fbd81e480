#!/usr/bin/env python3
"""An `--llm-cmd` model that chooses what FeatureBench's published task shows.

usage: fb-extract task ... --llm-cmd "/usr/bin/python3 bench/featurebench_oracle.py KEYS.json"

KEYS.json is {"keys": [...], "stats": PATH}: the interfaces of FeatureBench's statement,
keyed as bench/featurebench_repro.py keys level 1 ("module:Qual.name"). Asked for top
objects, it answers the candidates and class members whose keys are among them (a class
whole only where the statement shows its methods and none is a member), so the
rest of fbkit's method (the P2P draw, the extraction, what is shown) runs on the model's
choice FeatureBench made. It writes to PATH how many of the keys were candidates at all.
Asked for a docstring or a Task section, it answers a fixed text: the bench scores
interfaces, not prose. Standard library only.
"""

import json
import sys


def module_of(path):
    path = path[4:] if path.startswith("src/") else path
    path = path[:-3] if path.endswith(".py") else path
    if path.endswith("/__init__"):
        path = path[: -len("/__init__")]
    return path.replace("/", ".")


def key_of(entity_id):
    path, _, qual = entity_id.partition("::")
    return f"{module_of(path)}:{qual}"


def choose(request, keys):
    """The ids to answer: each key's candidate or class member (a method by its own id); a
    class whole where the statement shows methods of it and none of its methods is a member
    (its run reached none)."""
    keys = set(keys)
    by_key, memberless = {}, set()
    for c in request["candidates"]:
        by_key[key_of(c["id"])] = c["id"]
        if not c.get("members"):
            memberless.add(key_of(c["id"]))
        for m in c.get("members", []):
            by_key[key_of(m)] = m
    chosen = [by_key[k] for k in sorted(keys) if k in by_key]
    covered = {k for k in keys if k in by_key}
    for k in sorted(keys - covered):
        module, _, qual = k.partition(":")
        owner = f"{module}:{qual.rsplit('.', 1)[0]}" if "." in qual else None
        if owner in memberless:
            covered.add(k)
            if by_key[owner] not in chosen:
                chosen.append(by_key[owner])
    return chosen, sorted(covered)


def main():
    cfg = json.load(open(sys.argv[1]))
    request = json.loads(sys.stdin.read())
    task = request.get("task")
    if task == "classify_top_objects":
        chosen, covered = choose(request, cfg["keys"])
        if cfg.get("stats"):
            with open(cfg["stats"], "w") as f:
                json.dump({"keys": len(cfg["keys"]), "candidates": len(request["candidates"]),
                           "covered": covered, "chosen": chosen}, f, indent=1, sort_keys=True)
        print(json.dumps({"top_objects": chosen}))
    elif task == "docstring":
        print(json.dumps({"docstring": f"{request.get('name', '')} (oracle run)."}))
    elif task == "task_statement":
        print(json.dumps({"task_statement": "**Task Statement:** oracle run.\n"}))
    else:
        sys.exit(f"featurebench_oracle: no answer for task {task!r}")


if __name__ == "__main__":
    main()
