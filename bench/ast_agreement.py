#!/usr/bin/env python3
"""Agreement between `fb-graph entities` output and CPython's ast.

Usage: ast_agreement.py ROOT ENTITIES_JSON [--json] [--examples N] [--strict]

For every .py file listed in ENTITIES_JSON (paths relative to ROOT), parse the
file's bytes with ast.parse (so BOMs and coding cookies are honoured; files
ast rejects are skipped and counted) and collect every FunctionDef,
AsyncFunctionDef and ClassDef at any depth, with

    qualname   = enclosing def/class names joined by '.'  (f.g, C.m, C.D.m, f.C.m;
                 if/try/with/for/while/match blocks are transparent; no <locals>)
    start_line = decorator_list[0].lineno if decorated else lineno
    def_line   = lineno            (the def/class keyword line, CPython >= 3.8)
    end_line   = end_lineno

and match them, as a multiset keyed by (qualname, start_line, def_line,
end_line), against the file's non-module entities in the JSON.

Secondary checks (reported; they only affect the exit status with --strict),
made on the pairs matched above, pairing duplicates in source order:
id (path::qualname, '#2', '#3' ... for repeated qualnames in source order),
kind (class / method = def directly in a class body / function), is_async,
parent (id of the enclosing def/class; top-level: null or the module id).

Exit status: 0 if every ast def matches a table def and vice versa (100%
agreement), 1 otherwise, 2 on usage/input errors.
"""
import argparse
import ast
import collections
import json
import os
import sys
import warnings


class Def:
    __slots__ = ("qualname", "start_line", "def_line", "end_line", "kind",
                 "is_async", "parent_qualname", "parent_index", "index")

    def key(self):
        return (self.qualname, self.start_line, self.def_line, self.end_line)


def collect_ast_defs(tree):
    """Return the defs of `tree` in source order (pre-order walk)."""
    out = []

    def visit(node, scope, scope_is_class, parent_index):
        # `scope` is the qualname prefix (list of names), `parent_index` the
        # index in `out` of the enclosing def (None at module level).
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                d = Def()
                d.qualname = ".".join(scope + [child.name])
                d.def_line = child.lineno
                d.start_line = (child.decorator_list[0].lineno
                                if child.decorator_list else child.lineno)
                d.end_line = child.end_lineno
                if isinstance(child, ast.ClassDef):
                    d.kind = "class"
                else:
                    d.kind = "method" if scope_is_class else "function"
                d.is_async = isinstance(child, ast.AsyncFunctionDef)
                d.parent_qualname = ".".join(scope) if scope else None
                d.parent_index = parent_index
                d.index = len(out)
                out.append(d)
                # Decorators, defaults, annotations and bases cannot contain
                # defs (lambdas are not entities), so only the body matters,
                # but walking everything is harmless and future-proof.
                visit(child, scope + [child.name],
                      isinstance(child, ast.ClassDef), d.index)
            else:
                visit(child, scope, scope_is_class if _is_block(child) else False,
                      parent_index)

    visit(tree, [], False, None)
    return out


_BLOCK_TYPES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith,
                ast.Try, ast.ExceptHandler, ast.match_case, ast.Match)
if hasattr(ast, "TryStar"):
    _BLOCK_TYPES = _BLOCK_TYPES + (ast.TryStar,)


def _is_block(node):
    # A def inside `if`/`try`/... directly in a class body is still a method.
    return isinstance(node, _BLOCK_TYPES)


def expected_ids(path, defs):
    """Ids per the fbkit rule: path::qualname, then #2, #3 in source order."""
    seen = collections.Counter()
    ids = []
    for d in defs:
        seen[d.qualname] += 1
        n = seen[d.qualname]
        ids.append(f"{path}::{d.qualname}" + (f"#{n}" if n > 1 else ""))
    return ids


def parse_bytes(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning for bad escapes etc.
        return ast.parse(data)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root")
    ap.add_argument("entities_json")
    ap.add_argument("--examples", type=int, default=20,
                    help="examples to print per category (default 20)")
    ap.add_argument("--json", action="store_true", help="print a JSON report")
    ap.add_argument("--strict", action="store_true",
                    help="also fail on id/kind/is_async/parent mismatches")
    args = ap.parse_args(argv)

    try:
        with open(args.entities_json, "rb") as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as e:
        print(f"error: cannot read {args.entities_json}: {e}", file=sys.stderr)
        return 2
    files = doc.get("files")
    if not isinstance(files, list):
        print("error: JSON has no 'files' list", file=sys.stderr)
        return 2

    root = args.root
    n_ex = args.examples
    stats = collections.Counter()
    only_ast, only_table, attr_bad = [], [], []
    skipped = []          # (path, reason)
    errors_but_ok = []    # files with parse_errors that ast accepted
    seen_paths = set()

    for f in files:
        path = f.get("path", "")
        if not path.endswith(".py"):
            continue
        if path in seen_paths:
            stats["duplicate_file_entries"] += 1
            continue
        seen_paths.add(path)
        stats["files_in_json"] += 1
        full = os.path.join(root, *path.split("/"))
        try:
            with open(full, "rb") as fh:
                data = fh.read()
        except OSError as e:
            skipped.append((path, f"unreadable: {e.strerror or e}"))
            continue
        try:
            tree = parse_bytes(data)
        except (SyntaxError, ValueError) as e:  # ValueError: null bytes
            skipped.append((path, f"{type(e).__name__}: {e}"))
            continue
        except (RecursionError, MemoryError) as e:
            skipped.append((path, f"{type(e).__name__}"))
            continue
        stats["files_compared"] += 1
        if f.get("parse_errors"):
            errors_but_ok.append(path)

        adefs = collect_ast_defs(tree)
        aids = expected_ids(path, adefs)
        tents = [e for e in f.get("entities", [])
                 if e.get("kind") != "module" and e.get("qualname") != "<module>"]
        stats["ast_defs"] += len(adefs)
        stats["table_defs"] += len(tents)

        # Multiset match; duplicates of one key are paired in source order.
        by_key = collections.defaultdict(collections.deque)
        for e in tents:
            k = (e.get("qualname"), e.get("start_line"), e.get("def_line"),
                 e.get("end_line"))
            by_key[k].append(e)
        pairs = []
        for d in adefs:
            q = by_key.get(d.key())
            if q:
                pairs.append((d, q.popleft()))
                stats["matched"] += 1
            else:
                only_ast.append((path,) + d.key())
        for k, q in by_key.items():
            for e in q:
                only_table.append((path,) + k + (e.get("id"),))

        # Secondary attribute checks on matched pairs.
        for d, e in pairs:
            problems = []
            want_id = aids[d.index]
            if e.get("id") != want_id:
                problems.append(f"id {e.get('id')!r} != {want_id!r}")
            if e.get("kind") != d.kind:
                problems.append(f"kind {e.get('kind')!r} != {d.kind!r}")
            if bool(e.get("is_async")) != d.is_async:
                problems.append(f"is_async {e.get('is_async')!r} != {d.is_async!r}")
            if e.get("name") != d.qualname.rsplit(".", 1)[-1]:
                problems.append(f"name {e.get('name')!r}")
            if d.parent_index is None:
                if e.get("parent") not in (None, f"{path}::<module>"):
                    problems.append(f"parent {e.get('parent')!r} != null")
            elif e.get("parent") != aids[d.parent_index]:
                problems.append(f"parent {e.get('parent')!r} != {aids[d.parent_index]!r}")
            if problems:
                stats["attr_mismatch"] += 1
                attr_bad.append((path, d.qualname, d.def_line, "; ".join(problems)))

    # Agreement = matched pairs over the union of both multisets.
    union = stats["ast_defs"] + stats["table_defs"] - stats["matched"]
    agreement = 100.0 * stats["matched"] / union if union else 100.0
    ok = len(only_ast) == 0 and len(only_table) == 0
    strict_ok = ok and not attr_bad

    report = {
        "files_in_json": stats["files_in_json"],
        "files_compared": stats["files_compared"],
        "files_skipped_by_ast": len(skipped),
        "files_with_parse_errors_but_ast_ok": len(errors_but_ok),
        "duplicate_file_entries": stats["duplicate_file_entries"],
        "ast_defs": stats["ast_defs"],
        "table_defs": stats["table_defs"],
        "exact_matches": stats["matched"],
        "only_in_ast": len(only_ast),
        "only_in_table": len(only_table),
        "agreement_percent": round(agreement, 4),
        "attribute_mismatches": len(attr_bad),
        "examples": {
            "only_in_ast": [dict(zip(("path", "qualname", "start_line", "def_line", "end_line"), x))
                            for x in only_ast[:n_ex]],
            "only_in_table": [dict(zip(("path", "qualname", "start_line", "def_line", "end_line", "id"), x))
                              for x in only_table[:n_ex]],
            "attribute_mismatches": [dict(zip(("path", "qualname", "def_line", "problem"), x))
                                     for x in attr_bad[:n_ex]],
            "skipped_by_ast": [dict(zip(("path", "reason"), x)) for x in skipped[:n_ex]],
            "parse_errors_but_ast_ok": errors_but_ok[:n_ex],
        },
    }
    if args.json:
        json.dump(report, sys.stdout, indent=2, sort_keys=True)
        print()
    else:
        p = print
        p(f"files in JSON (.py)          {report['files_in_json']}")
        p(f"files compared               {report['files_compared']}")
        p(f"files skipped (ast rejects)  {report['files_skipped_by_ast']}")
        if errors_but_ok:
            p(f"files with parse_errors that ast accepts  {len(errors_but_ok)}")
        if stats["duplicate_file_entries"]:
            p(f"duplicate file entries in JSON  {stats['duplicate_file_entries']}")
        p(f"ast defs                     {report['ast_defs']}")
        p(f"table defs                   {report['table_defs']}")
        p(f"exact matches                {report['exact_matches']}")
        p(f"only in ast                  {report['only_in_ast']}")
        p(f"only in table                {report['only_in_table']}")
        p(f"agreement                    {agreement:.4f}%  (matches / union)")
        p(f"attribute mismatches         {len(attr_bad)}  (id/kind/is_async/name/parent, on matches)")

        def show(title, rows, fmt):
            if rows:
                p(f"\n{title} (first {min(n_ex, len(rows))} of {len(rows)}):")
                for r in rows[:n_ex]:
                    p("  " + fmt(r))
        show("only in ast", only_ast,
             lambda r: f"{r[0]}  {r[1]}  start={r[2]} def={r[3]} end={r[4]}")
        show("only in table", only_table,
             lambda r: f"{r[0]}  {r[1]}  start={r[2]} def={r[3]} end={r[4]}  id={r[5]}")
        show("attribute mismatches", attr_bad,
             lambda r: f"{r[0]}  {r[1]} (def line {r[2]}): {r[3]}")
        show("skipped by ast", skipped, lambda r: f"{r[0]}: {r[1]}")
        show("parse_errors in table but ast accepts", errors_but_ok, lambda r: r)
    return 0 if (strict_ok if args.strict else ok) else 1


if __name__ == "__main__":
    sys.exit(main())
