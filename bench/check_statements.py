#!/usr/bin/env python3
"""Checks the problem statements of task directories for what an agent needs (issue 66 item 5).

  /usr/bin/python3 bench/check_statements.py TASKS_DIR... [--json OUT]

A task directory is one with instance.json and problem_statement.md (TASKS_DIR itself or its
subdirectories). Per task, counted and listed:
  tautology    a Core Functionality bullet, or a line or whole docstring of an interface,
               that only restates the name or kind ("- `_f`: Function `_f`.", "Function
               `_f`.", "Returns: a value (not annotated)")
  l2-missing   (level 2) a name the F2P test reads from agent_code (its imports and dotted
               uses, read from the redirected file in test_patch.diff) with no interface
               block importing it whose Python defines it (def, class or assignment)
  untyped      an interface fbkit described (not the source's own docstring) with an
               unannotated parameter or result and no observed types at all
Exits 1 when any task has a finding, 0 otherwise. Only the standard library."""
import argparse
import ast
import json
import os
import re
import sys

KINDS = ("Function", "Method", "Class", "Coroutine", "Property", "Initialiser",
         "Static method", "Class method", "Async method")
RESTATE = re.compile(r"^(%s) `[\w.]+`(, derived from [^.]*)?\.?$" % "|".join(KINDS))
PLACEHOLDERS = ("a value (not annotated)",)
FBKIT_STARTS = ("Parameters:", "Takes no arguments.", "Constructor parameters:",
                "Constructed without arguments.", "Derived from ", "Methods:",
                "Constructed as its bases") + tuple(k + " `" for k in KINDS)


def task_dirs(p):
    if os.path.isfile(os.path.join(p, "instance.json")):
        yield p
    else:
        for name in sorted(os.listdir(p)):
            d = os.path.join(p, name)
            if os.path.isfile(os.path.join(d, "instance.json")) and \
                    os.path.isfile(os.path.join(d, "problem_statement.md")):
                yield d


def section(md, title):
    """The text of a bold-titled section ("**Core Functionality**") up to the next one."""
    at = md.find("**%s**" % title)
    if at < 0:
        return ""
    rest = md[at + len(title) + 4:]
    end = re.search(r"^\*\*[^*]+\*\*$|^## ", rest, re.M)
    return rest[:end.start()] if end else rest


def bullet_is_tautology(line):
    m = re.match(r"^- `([^`]+)`(?::\s*(.*))?$", line.strip())
    if not m:
        return False
    name, text = m.group(1), (m.group(2) or "").strip()
    bare = re.fullmatch(r"[\w.]+", name) is not None  # no signature in the backticks
    if not text:
        return bare
    words = text.replace("`", "").replace(name.split("(")[0], "")
    for k in KINDS:
        words = words.replace(k, "")
    return re.sub(r"[\s.,:;]", "", words) == ""


def blocks(md):
    """(import line or None, python source) of each interface block, in order."""
    out = []
    # A fence of three or more backticks, closed by the same fence at a line's start.
    for m in re.finditer(r"^(`{3,})python\n(.*?)^\1$", md, re.S | re.M):
        before = md[:m.start()]
        imp = re.findall(r"^Import: `([^`]+)`", before, re.M)
        head = before.rfind("\n### ")
        last_imp = before.rfind("Import: `")
        out.append((imp[-1] if imp and last_imp > head else None, m.group(2)))
    return out


def defined_names(source):
    try:
        tree = ast.parse(source)
    except SyntaxError:
        # A long module-level value is shown cut ("..."): its name is its first line's.
        m = re.match(r"(\w+)\s*(?::[^=]*)?=", source)
        return {m.group(1)} if m else set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)  # a module-level value, shown as assigned
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def functions(source):
    """Every function in a block (methods included) as (qualname, node)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out = []

    def walk(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((prefix + node.name, node, bool(prefix)))
            elif isinstance(node, ast.ClassDef):
                out.append((prefix + node.name, node, False))
                walk(node.body, prefix + node.name + ".")
    walk(tree.body, "")
    return out


def doc_findings(qualname, node, method):
    """Tautology and untyped findings of one function or class."""
    found = []
    doc = ast.get_docstring(node) or ""
    lines = [l.strip() for l in doc.splitlines()]
    for l in lines:
        if RESTATE.match(l) or l in PLACEHOLDERS:
            found.append(("tautology", "%s: docstring line %r" % (qualname, l)))
    if doc and not re.sub(r"[\s.`]", "", doc.replace(node.name, "")):
        found.append(("tautology", "%s: docstring is its name" % qualname))
    fbkit = any(doc.startswith(s) for s in FBKIT_STARTS)
    if not fbkit or isinstance(node, ast.ClassDef):
        return found
    a = node.args
    params = a.posonlyargs + a.args + a.kwonlyargs
    if method and params and params[0].arg in ("self", "cls"):
        params = params[1:]
    params += [p for p in (a.vararg, a.kwarg) if p is not None]
    untyped = [p.arg for p in params if p.annotation is None]
    returns_value = "returned expression" in doc or "a value (not annotated)" in doc
    needs = untyped or (node.returns is None and returns_value)
    if needs and "observed" not in doc:
        found.append(("untyped", "%s: %s without annotation or observed types" % (
            qualname, ", ".join(untyped) or "result")))
    return found


def f2p_file(instance):
    f2p = instance.get("FAIL_TO_PASS") or []
    return f2p[0].split("::")[0] if f2p else None


def added_file(diff, path):
    """The post-image of a file the diff adds whole (its '+' lines)."""
    out, inside = [], False
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            inside = line.endswith(" b/" + path)
            continue
        if inside and line.startswith("+") and not line.startswith("+++"):
            out.append(line[1:])
    return "\n".join(out) + "\n"


def patch_modules(diff):
    """The agent_code modules the gold patch creates ("agent_code.keys")."""
    out = set()
    for m in re.finditer(r"^\+\+\+ b/(agent_code/\S*)\.py$", diff, re.M):
        path = m.group(1)
        out.add(path[:-len("/__init__")].replace("/", ".") if path.endswith("/__init__")
                else path.replace("/", "."))
    return out


def agent_code_uses(source, package_modules=()):
    """Dotted names ("agent_code.keys.hashkey") a test module reads from agent_code; a module
    it imports by name (`from agent_code import keys`) counts by the names read from it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    bound, uses = {}, set()  # local name -> the agent_code module it is
    imported = set()  # the agent_code modules imported
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and \
                (node.module == "agent_code" or node.module.startswith("agent_code.")):
            for a in node.names:
                full = node.module + "." + a.name
                if full in package_modules:
                    bound[a.asname or a.name] = full
                    imported.add(full)
                elif a.name != "*":
                    uses.add(full)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "agent_code" or a.name.startswith("agent_code."):
                    imported.add(a.name)
                    if a.asname:
                        bound[a.asname] = a.name
                    else:
                        bound["agent_code"] = "agent_code"
    modules = set(bound.values()) | imported
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain, cur = [], node
        while isinstance(cur, ast.Attribute):
            chain.append(cur.attr)
            cur = cur.value
        if not isinstance(cur, ast.Name) or cur.id not in bound:
            continue
        dotted = bound[cur.id] + "." + ".".join(reversed(chain))
        # The shortest prefix that is no imported module: the name read.
        parts = dotted.split(".")
        for i in range(2, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix not in modules:
                uses.add(prefix)
                break
    return uses


def shown(use, md_blocks):
    for imp, source in md_blocks:
        m = re.match(r"from ([\w.]+) import (\w+)$", imp or "")
        if not m:
            continue
        full = m.group(1) + "." + m.group(2)
        if (use == full or use.startswith(full + ".")) and m.group(2) in defined_names(source):
            return True
    return False


def check(task):
    with open(os.path.join(task, "instance.json")) as f:
        instance = json.load(f)
    with open(os.path.join(task, "problem_statement.md")) as f:
        md = f.read()
    found = []
    for line in section(md, "Core Functionality").splitlines():
        if bullet_is_tautology(line):
            found.append(("tautology", "bullet %r" % line.strip()))
    md_blocks = blocks(md)
    seen = set()
    for _, source in md_blocks:
        for qualname, node, method in functions(source):
            for kind, what in doc_findings(qualname, node, method):
                if (kind, what) not in seen:
                    seen.add((kind, what))
                    found.append((kind, what))
    uses = []
    if instance.get("level") == 2:
        f2p = f2p_file(instance)
        try:
            with open(os.path.join(task, "test_patch.diff")) as f:
                diff = f.read()
        except OSError:
            diff = instance.get("test_patch", "")
        try:
            with open(os.path.join(task, "patch.diff")) as f:
                gold = f.read()
        except OSError:
            gold = instance.get("patch", "")
        uses = sorted(agent_code_uses(added_file(diff, f2p), patch_modules(gold))) if f2p else []
        for u in uses:
            if not shown(u, md_blocks):
                found.append(("l2-missing", u))
    return {"task": os.path.basename(task.rstrip("/")), "level": instance.get("level"),
            "interfaces": sum(len(functions(s)) for _, s in md_blocks), "l2_uses": len(uses),
            "findings": [{"kind": k, "what": w} for k, w in found]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--json")
    args = ap.parse_args()
    results = [check(t) for d in args.dirs for t in task_dirs(d)]
    totals = {"tautology": 0, "l2-missing": 0, "untyped": 0}
    for r in results:
        counts = {k: sum(1 for f in r["findings"] if f["kind"] == k) for k in totals}
        for k in totals:
            totals[k] += counts[k]
        print("%s: %d interfaces%s, tautologies %d, untyped %d%s" % (
            r["task"], r["interfaces"],
            ", %d L2 uses" % r["l2_uses"] if r["level"] == 2 else "",
            counts["tautology"], counts["untyped"],
            ", L2 uses without a signature %d" % counts["l2-missing"] if r["level"] == 2 else ""))
        for f in r["findings"]:
            print("  %s: %s" % (f["kind"], f["what"]))
    failing = sum(1 for r in results if r["findings"])
    print("%d task(s), %d with findings; tautologies %d, untyped interfaces %d, L2 uses "
          "without a signature %d" % (len(results), failing, totals["tautology"],
                                      totals["untyped"], totals["l2-missing"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tasks": results, "totals": totals}, f, indent=1, sort_keys=True)
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
