#!/usr/bin/env python3
"""Does every edge of a per-file reference tracer map to a graph edge between the same
entities? For each test file of the graph, runs pytest on that file alone with
bench/reference_trace_plugin.py, maps both ends of each recorded edge to an entity of the
graph (by path and first line, like fb-graph build: lambdas and comprehensions to the
innermost enclosing entity, <module> to the module) and looks for a call edge between them
whose test_files include the file. Reports recall (strict: a call edge of that test file; and: any graph edge between the two
entities, e.g. the static import edge of an import the session ran only once) and the
identities that map to nothing.

  /usr/bin/python3 bench/graph_recall.py --repo /tmp/click --graph click-graph.json \
      --pythonpath src --pythonpath /tmp/click-meta
"""
import argparse
import json
import os
import sys
import tempfile

from reference_run import run_reference

ANON = {"<lambda>", "<listcomp>", "<genexpr>", "<dictcomp>", "<setcomp>"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--graph", required=True, help="fbkit.graph/1 JSON of the same repo")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--pythonpath", action="append", default=[])
    ap.add_argument("--examples", type=int, default=10)
    args = ap.parse_args()
    repo = os.path.realpath(args.repo)
    g = json.load(open(args.graph))
    by_file = {}
    for n in g["nodes"]:
        by_file.setdefault(n["path"], []).append(n)
    calls, static = {}, set()
    for e in g["edges"]:
        if e["kind"] == "call":
            calls[(e["from"], e["to"])] = set(e["test_files"])
        else:
            static.add((e["from"], e["to"]))

    def entity(code):
        path, line, name = code
        nodes = by_file.get(path)
        if not nodes:
            return None
        if name == "<module>":
            return next(n["id"] for n in nodes if n["kind"] == "module")
        if name in ANON:
            inside = [n for n in nodes if n["kind"] != "module" and n["start_line"] <= line <= n["end_line"]]
            if not inside:
                return next(n["id"] for n in nodes if n["kind"] == "module")
            return max(inside, key=lambda n: n["start_line"])["id"]
        for n in nodes:
            if n["start_line"] == line and n["qualname"].split(".")[-1] == name and n["kind"] != "module":
                return n["id"]
        return None

    tmp = tempfile.mkdtemp(prefix="fbkit-graph-recall-")
    total = found = found_any = 0
    unmapped, missing = set(), []
    for test_file in g["test_files"]:
        edges = run_reference(args.python, repo, args.pythonpath, test_file,
                              os.path.join(tmp, "ref.json"))
        for caller, callee, _ in edges or []:
            if caller is None:
                continue
            a, b = entity(caller), entity(callee)
            for code, ent in ((caller, a), (callee, b)):
                if ent is None:
                    unmapped.add(tuple(code))
            if a is None or b is None or a == b:
                continue
            total += 1
            if test_file in calls.get((a, b), ()):
                found += 1
                found_any += 1
            elif (a, b) in static or (a, b) in calls:
                found_any += 1  # e.g. an import the session ran once, for another file
            else:
                missing.append((test_file, a, b))
    recall = found / total if total else 1.0
    print(f"reference edges between two entities: {total}, found as graph call edges of the "
          f"same test file: {found}, recall {100 * recall:.3f}%; found as any graph edge "
          f"between the same entities: {found_any}, recall {100 * found_any / max(total, 1):.3f}%")
    print(f"reference identities that map to no entity: {len(unmapped)}; graph join: "
          f"{g['join']['mapped']}/{g['join']['identities']} mapped, {len(g['join']['unmapped'])} unmapped")
    for f, a, b in missing[:args.examples]:
        print(f"  missing in {f}: {a} -> {b}")
    for u in sorted(unmapped)[:args.examples]:
        print(f"  unmapped: {u}")


if __name__ == "__main__":
    sys.exit(main())
