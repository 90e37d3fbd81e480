#!/usr/bin/env python3
"""Independent check of `fb-race entities`: the entity changes of a patch computed from
CPython's `ast` of the two versions of each changed .py file (the after version from
`git apply` in a scratch directory). Same rules as fbkit: functions and methods (not
functions nested in functions); classes only when added or deleted as a whole; modified
when the AST differs, cosmetic when only the source text differs, renamed when a deleted
and a new function under the same parent have the same AST apart from the name.
Prints a sorted JSON list of [entity, change].

usage: race_ast_changes.py REPO BASE PATCH
"""
import ast
import json
import os
import subprocess
import sys
import tempfile


def entities(path, source):
    """qualname -> (kind, node, source segment, parent qualname)."""
    out = {}
    if source is None:
        return out
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)

    def segment(node):
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        return "".join(lines[start - 1:node.end_lineno])

    def visit(body, prefix, parent, parent_kind):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if parent_kind == "function":
                    continue
                q = prefix + node.name
                n = 2
                key = q
                while key in out:
                    key = f"{q}#{n}"
                    n += 1
                if isinstance(node, ast.ClassDef):
                    kind = "class"
                else:
                    kind = "method" if parent_kind == "class" else "function"
                out[key] = (kind, node, segment(node), parent)
                if kind == "class":
                    visit(node.body, q + ".", key, "class")
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, []), prefix, parent, parent_kind)
                for h in getattr(node, "handlers", []):
                    visit(h.body, prefix, parent, parent_kind)
    visit(tree.body, "", "", "module")
    return out


def dump(node, rename=False):
    if rename:
        node = ast.parse(ast.unparse(node)).body[0]
        node.name = "_"
    return ast.dump(node)


def diff(path, before, after):
    b, a = entities(path, before), entities(path, after)
    changes = []
    for k, (kind, node, seg, _) in a.items():
        if k not in b or (b[k][0] == "class") != (kind == "class"):
            changes.append([k, "new"])
            if k in b:
                changes.append([k, "deleted"])
        elif kind != "class" and seg != b[k][2]:
            changes.append([k, "cosmetic" if dump(node) == dump(b[k][1]) else "modified"])
    for k in b:
        if k not in a:
            changes.append([k, "deleted"])
    used = set()
    for c in changes:
        if c[1] != "new" or a[c[0]][0] == "class":
            continue
        for d in changes:
            if d[1] != "deleted" or id(d) in used or d[0] not in b or b[d[0]][0] != a[c[0]][0]:
                continue
            if b[d[0]][3] == a[c[0]][3] and dump(b[d[0]][1], True) == dump(a[c[0]][1], True):
                used.add(id(d))
                c[1] = "renamed"
                break
    return [[path + "::" + c[0], c[1]] for c in changes if id(c) not in used]


def main():
    repo, base, patch = sys.argv[1:4]
    patch = os.path.abspath(patch)
    files = subprocess.run(["git", "apply", "--numstat", "--summary", patch], capture_output=True,
                           text=True, cwd=repo).stdout
    paths = sorted({l.split("\t")[2] for l in files.splitlines() if "\t" in l})
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "init", "-q"], cwd=tmp, check=True)
        befores = {}
        for p in paths:
            r = subprocess.run(["git", "-C", repo, "show", f"{base}:{p}"], capture_output=True, text=True)
            befores[p] = r.stdout if r.returncode == 0 else None
            if befores[p] is not None:
                os.makedirs(os.path.dirname(os.path.join(tmp, p)) or tmp, exist_ok=True)
                open(os.path.join(tmp, p), "w").write(befores[p])
        subprocess.run(["git", "apply", patch], cwd=tmp, check=True)
        for p in paths:
            if not p.endswith(".py"):
                continue
            full = os.path.join(tmp, p)
            after = open(full).read() if os.path.exists(full) else None
            out += diff(p, befores[p], after)
    print(json.dumps(sorted(out)))


if __name__ == "__main__":
    main()
