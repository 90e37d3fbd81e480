#!/usr/bin/env python3
"""Field-by-field diff of two fbkit.entities/1 documents.

    entities_diff.py EXPECTED.json ACTUAL.json [--fields f1,f2,...] [--max N]
                     [--no-imports]

Typical use: EXPECTED from bench/ast_entities.py (CPython oracle), ACTUAL from
`fb-graph entities`. Files are matched by path, entities by id, imports by
position. Prints one line per difference and a per-field summary; exit 0 when
no differences, 1 otherwise.
"""
import argparse
import collections
import json
import sys

ENTITY_FIELDS = ["kind", "name", "qualname", "parent", "start_line", "def_line", "end_line",
                 "start_byte", "end_byte", "is_async", "decorators", "signature", "docstring"]
FILE_FIELDS = ["module", "sha256", "all"]


def norm_parent(p, path):
    return None if p in (None, f"{path}::<module>") else p


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("expected")
    ap.add_argument("actual")
    ap.add_argument("--fields", help="comma-separated entity fields to compare (default all)")
    ap.add_argument("--max", type=int, default=200, help="max difference lines printed")
    ap.add_argument("--no-imports", action="store_true", help="do not compare imports")
    args = ap.parse_args(argv)
    fields = args.fields.split(",") if args.fields else ENTITY_FIELDS
    with open(args.expected, "rb") as fh:
        exp = json.load(fh)
    with open(args.actual, "rb") as fh:
        act = json.load(fh)
    ef = {f["path"]: f for f in exp.get("files", [])}
    af = {f["path"]: f for f in act.get("files", [])}
    diffs = []
    per_field = collections.Counter()

    def add(field, msg):
        per_field[field] += 1
        diffs.append(msg)

    for p in sorted(set(ef) - set(af)):
        add("file", f"{p}: file only in expected")
    for p in sorted(set(af) - set(ef)):
        add("file", f"{p}: file only in actual")
    for p in sorted(set(ef) & set(af)):
        e, a = ef[p], af[p]
        for k in FILE_FIELDS:
            if e.get(k) != a.get(k):
                add(k, f"{p}: {k}: expected {e.get(k)!r}, actual {a.get(k)!r}")
        if bool(e.get("parse_errors")) != bool(a.get("parse_errors")):
            add("parse_errors", f"{p}: parse_errors: expected {e.get('parse_errors')!r}, "
                                f"actual {a.get('parse_errors')!r}")
        ee = {x["id"]: x for x in e.get("entities", [])}
        ae = {x["id"]: x for x in a.get("entities", [])}
        for i in [x["id"] for x in e.get("entities", [])]:
            if i not in ae:
                add("entity", f"{i}: entity only in expected")
                continue
            for k in fields:
                ev, av = ee[i].get(k), ae[i].get(k)
                if k == "parent":
                    ev, av = norm_parent(ev, p), norm_parent(av, p)
                if ev != av:
                    add(k, f"{i}: {k}: expected {ev!r}, actual {av!r}")
        for i in [x["id"] for x in a.get("entities", [])]:
            if i not in ee:
                add("entity", f"{i}: entity only in actual")
        if not args.no_imports:
            ei, ai = e.get("imports", []), a.get("imports", [])
            keys = ("line", "module", "level", "is_from")
            for n in range(max(len(ei), len(ai))):
                x = ei[n] if n < len(ei) else None
                y = ai[n] if n < len(ai) else None
                sx = x and ({k: x.get(k) for k in keys},
                            [(m.get("name"), m.get("alias")) for m in x.get("names", [])])
                sy = y and ({k: y.get(k) for k in keys},
                            [(m.get("name"), m.get("alias")) for m in y.get("names", [])])
                if sx != sy:
                    add("imports", f"{p}: import #{n + 1}: expected {sx!r}, actual {sy!r}")
    for d in diffs[:args.max]:
        print(d)
    if len(diffs) > args.max:
        print(f"... {len(diffs) - args.max} more")
    print(f"\n{len(diffs)} differences" + (": " + ", ".join(f"{k} {v}" for k, v in
                                                             sorted(per_field.items()))
                                          if diffs else ""))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
