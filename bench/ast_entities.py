#!/usr/bin/env python3
"""Reference implementation of `fb-graph entities` on top of CPython's ast.

    ast_entities.py [entities] ROOT [-o FILE] [--jobs N] [--exclude GLOB]...
                    [--cache DIR] [--no-cache]

Writes fbkit.entities/1 JSON computed with CPython's own parser. It is an
independent oracle for the tree-sitter parser (and a stand-in binary for
bench_entities.py / tests while fb-graph is being built): --jobs, --cache and
--no-cache are accepted and ignored. Exit status 3 when some files did not
parse (their entry carries parse_errors and only the module entity), else 0.

Conventions this oracle picks where the schema leaves room (the C++ side may
differ; ast_agreement.py only checks qualname/lines and id/kind/parent):
  * walk (mirrors parser/source_files.cc): os.walk without following
    directory symlinks; skips .git .hg .svn __pycache__ node_modules .venv .tox
    .nox .eggs .mypy_cache .pytest_cache .fbkit-cache and directories holding
    pyvenv.cfg; file symlinks to regular files are included under their own
    path, dangling ones dropped; --exclude globs: fnmatch(3) on the relative
    path ('*' crosses '/'), globs without '/' also on the base name.
  * module: dotted chain of enclosing packages (src/lib/sub/deep.py ->
    lib.sub.deep; tests/test_x.py -> test_x).
  * lines follow CPython: \\n, \\r\\n and a lone \\r all end a line.
  * start_byte/end_byte are offsets into the raw file bytes (BOM and
    non-UTF-8 encodings accounted for); start_byte is at the first decorator's
    '@' (or the def/class/async keyword), end_byte is the end of the last
    statement of the body (half-open).
  * module entity: start_line 1, def_line 1, end_line = max(1, number of lines),
    bytes [0, len(file)), signature "".
  * signature: "(" params ")" [" -> " ann]; annotation/default text is the
    source segment; "name=default" without annotation, "name: ann = default"
    with one. Classes: "(bases, kw=v)" from source text, "" without parens.
  * docstring: CPython's value cleaned by inspect.cleandoc (= ast.get_docstring).
  * decorators: source text of each decorator expression (no '@').
  * imports: {line, module, names:[{name, alias}], level, is_from}; a `from`
    statement is one record (module "" for `from . import x`); `import a.b as
    c, d` gives one record per module
    (module "a.b", names [{a.b, c}]). Imports at any depth are listed.
  * all: list of strings from `__all__ = [...]`/`(...)`, `+= [...]`,
    `.extend([...])`, `.append("x")` at module level; null when never assigned.
  * assignments: module-level targets {line, name, kind: assign|annassign|
    augassign} in source order (tuple targets flattened).
"""
import argparse
import ast
import fnmatch
import hashlib
import io
import json
import os
import re
import sys
import tokenize
import warnings

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", ".tox", ".nox",
             ".eggs", ".mypy_cache", ".pytest_cache", ".fbkit-cache"}
_NL_BYTES = re.compile(rb"\r\n|\r|\n")


def walk(root, excludes):
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        keep = []
        for d in dirnames:
            full = os.path.join(dirpath, d)
            rel = rel_dir + d
            if d in SKIP_DIRS or os.path.islink(full):
                continue
            if os.path.exists(os.path.join(full, "pyvenv.cfg")):
                continue
            if excluded(rel, excludes):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in filenames:
            if not name.endswith(".py"):
                continue
            rel = rel_dir + name
            if excluded(rel, excludes):
                continue
            if os.path.isfile(os.path.join(dirpath, name)):  # drops dangling links
                out.append(rel)
    return sorted(out)


def excluded(rel, excludes):
    # fnmatch(3) without flags: '*' also matches '/'; a pattern without '/' is
    # also tried against the base name.
    base = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, g) or ("/" not in g and fnmatch.fnmatchcase(base, g))
               for g in excludes)


def module_name(root, rel):
    """Dotted import name: the path below the parent of the topmost package dir.

    The topmost ancestor directory holding __init__.py (scanning from ROOT
    down) is the top-level package; everything below it counts, including
    PEP 420 namespace dirs inside it: src/lib/nsdir/ns_module.py ->
    lib.nsdir.ns_module, src/lib/sub/deep.py -> lib.sub.deep. With no
    package ancestor the name is the file's stem (tests/test_x.py -> test_x).
    ROOT itself counts when it holds __init__.py (then its basename leads)."""
    parts = rel[:-3].split("/")
    dirs, stem = parts[:-1], parts[-1]
    chain = [os.path.basename(os.path.abspath(root))] + dirs
    top = None
    for i in range(len(chain)):
        if os.path.isfile(os.path.join(root, *dirs[:i], "__init__.py")):
            top = i
            break
    names = chain[top:] if top is not None else []
    if stem != "__init__" or not names:
        names = names + [stem]
    return ".".join(names)


class Source:
    """Maps CPython positions (line, utf-8 column) to raw byte offsets."""

    def __init__(self, data):
        self.data = data
        try:
            self.encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError:
            self.encoding = "utf-8"
        self.bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        self.line_starts = [self.bom] + [m.end() for m in _NL_BYTES.finditer(data)]
        if self.line_starts[-1] == len(data) and len(self.line_starts) > 1:
            self.line_starts.pop()  # the file ends with a newline
        self.n_lines = len(self.line_starts) if data[self.bom:] else 0
        enc = "utf-8" if self.encoding == "utf-8-sig" else self.encoding
        self.enc = enc
        try:
            self.text = data[self.bom:].decode(enc)
        except (UnicodeDecodeError, LookupError):
            self.text = None

    def raw_line(self, lineno):
        start = self.line_starts[lineno - 1]
        end = self.line_starts[lineno] if lineno < len(self.line_starts) else len(self.data)
        return start, self.data[start:end]

    def byte(self, lineno, utf8_col):
        start, raw = self.raw_line(lineno)
        if self.enc.replace("_", "-").lower() in ("utf-8", "utf8"):
            return start + utf8_col
        line = raw.decode(self.enc, "replace")
        chars = len(line.encode("utf-8")[:utf8_col].decode("utf-8", "replace"))
        return start + len(line[:chars].encode(self.enc, "replace"))

    def segment(self, node):
        """Like ast.get_source_segment, without re-splitting the file per call."""
        if self.text is None or getattr(node, "end_lineno", None) is None:
            return None
        if not hasattr(self, "_lines"):
            self._lines = [ln.encode("utf-8") for ln in re.split(r"\r\n|\r|\n", self.text)]
            self._lines_raw = re.split(r"\r\n|\r|\n", self.text)
        lo, hi = node.lineno - 1, node.end_lineno - 1
        if lo == hi:
            return self._lines[lo][node.col_offset:node.end_col_offset].decode("utf-8")
        first = self._lines[lo][node.col_offset:].decode("utf-8")
        last = self._lines[hi][:node.end_col_offset].decode("utf-8")
        return "\n".join([first] + self._lines_raw[lo + 1:hi] + [last])


def find_at_sign(src, deco):
    """Byte offset of the '@' that introduces decorator expression `deco`."""
    pos = src.byte(deco.lineno, deco.col_offset)
    i = pos - 1
    data = src.data
    while i >= 0:
        c = data[i:i + 1]
        if c == b"@":
            return i
        if c in b" \t\f\r\n\\(":
            i -= 1
            continue
        break
    return pos  # should not happen


def render_signature(src, fn):
    a = fn.args
    parts = []

    def param(arg, default=None, prefix=""):
        s = prefix + arg.arg
        if arg.annotation is not None:
            s += ": " + (src.segment(arg.annotation) or ast.unparse(arg.annotation))
            if default is not None:
                s += " = " + (src.segment(default) or ast.unparse(default))
        elif default is not None:
            s += "=" + (src.segment(default) or ast.unparse(default))
        return s

    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, arg in enumerate(positional):
        parts.append(param(arg, defaults[i]))
        if a.posonlyargs and i == len(a.posonlyargs) - 1:
            parts.append("/")
    if a.vararg is not None:
        parts.append(param(a.vararg, prefix="*"))
    elif a.kwonlyargs:
        parts.append("*")
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        parts.append(param(arg, d))
    if a.kwarg is not None:
        parts.append(param(a.kwarg, prefix="**"))
    sig = "(" + ", ".join(parts) + ")"
    if fn.returns is not None:
        sig += " -> " + (src.segment(fn.returns) or ast.unparse(fn.returns))
    return sig


def docstring_of(node):
    # CPython's value, cleaned like inspect.cleandoc (ast.get_docstring default)
    try:
        return ast.get_docstring(node, clean=True)
    except TypeError:
        return None


def class_signature(src, cls):
    """'(Base, Mixin, metaclass=Meta)' (source text of each item), '' without parens."""
    items = [src.segment(b) or ast.unparse(b) for b in cls.bases]
    items += [("**" if k.arg is None else k.arg + "=") + (src.segment(k.value) or ast.unparse(k.value))
              for k in cls.keywords]
    if items:
        return "(" + ", ".join(items) + ")"
    # `class C():` keeps its empty parens
    if src.text is not None:
        line = re.split(r"\r\n|\r|\n", src.text)[cls.lineno - 1]
        if re.match(r"\s*class\s+\w+\s*\(\s*\)", line):
            return "()"
    return ""


_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
           ast.ExceptHandler, ast.Match, ast.match_case) + \
    ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def entities_of(rel, modname, src, tree):
    mod_id = f"{rel}::<module>"
    ents = [{
        "id": mod_id, "kind": "module", "name": modname.rsplit(".", 1)[-1],
        "qualname": "<module>", "parent": None, "start_line": 1, "def_line": 1,
        "end_line": max(1, src.n_lines), "start_byte": 0, "end_byte": len(src.data),
        "is_async": False, "decorators": [], "signature": "",
        "docstring": docstring_of(tree),
    }]
    counts = {}

    def visit(node, scope, in_class, parent_id):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = ".".join(scope + [child.name])
                counts[q] = counts.get(q, 0) + 1
                eid = f"{rel}::{q}" + (f"#{counts[q]}" if counts[q] > 1 else "")
                is_class = isinstance(child, ast.ClassDef)
                if child.decorator_list:
                    start_line = child.decorator_list[0].lineno
                    start_byte = find_at_sign(src, child.decorator_list[0])
                else:
                    start_line = child.lineno
                    start_byte = src.byte(child.lineno, child.col_offset)
                ents.append({
                    "id": eid,
                    "kind": "class" if is_class else ("method" if in_class else "function"),
                    "name": child.name, "qualname": q,
                    "parent": parent_id,
                    "start_line": start_line, "def_line": child.lineno,
                    "end_line": child.end_lineno,
                    "start_byte": start_byte,
                    "end_byte": src.byte(child.end_lineno, child.end_col_offset),
                    "is_async": isinstance(child, ast.AsyncFunctionDef),
                    "decorators": [src.segment(d) or ast.unparse(d) for d in child.decorator_list],
                    "signature": class_signature(src, child) if is_class
                    else render_signature(src, child),
                    "docstring": docstring_of(child),
                })
                visit(child, scope + [child.name], is_class, eid)
            else:
                visit(child, scope, in_class and isinstance(child, _BLOCKS), parent_id)

    visit(tree, [], False, None)
    return ents


def imports_of(tree):
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):  # one record per imported module
            for a in n.names:
                out.append({"line": n.lineno, "module": a.name, "level": 0, "is_from": False,
                            "names": [{"name": a.name, "alias": a.asname}]})
        elif isinstance(n, ast.ImportFrom):
            out.append({"line": n.lineno, "module": n.module or "", "level": n.level,
                        "is_from": True,
                        "names": [{"name": a.name, "alias": a.asname} for a in n.names]})
    out.sort(key=lambda r: r["line"])
    return out


def _strs(node):
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def all_of(tree):
    result = None
    for st in tree.body:
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                              for t in st.targets):
            result = _strs(st.value)
        elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) \
                and st.target.id == "__all__" and st.value is not None:
            result = _strs(st.value)
        elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) \
                and st.target.id == "__all__" and isinstance(st.op, ast.Add):
            result = (result or []) + _strs(st.value)
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) \
                and isinstance(st.value.func, ast.Attribute) \
                and isinstance(st.value.func.value, ast.Name) \
                and st.value.func.value.id == "__all__" and st.value.args:
            if st.value.func.attr == "extend":
                result = (result or []) + _strs(st.value.args[0])
            elif st.value.func.attr == "append" and isinstance(st.value.args[0], ast.Constant):
                result = (result or []) + [st.value.args[0].value]
    return result


def assignments_of(tree):
    out = []

    def names(t):
        if isinstance(t, ast.Name):
            yield t.id
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                yield from names(e)
        elif isinstance(t, ast.Starred):
            yield from names(t.value)

    for st in tree.body:
        if isinstance(st, ast.Assign):
            for t in st.targets:
                out += [{"line": st.lineno, "name": n, "kind": "assign"} for n in names(t)]
        elif isinstance(st, ast.AnnAssign):
            out += [{"line": st.lineno, "name": n, "kind": "annassign"} for n in names(st.target)]
        elif isinstance(st, ast.AugAssign):
            out += [{"line": st.lineno, "name": n, "kind": "augassign"} for n in names(st.target)]
    return out


def process(root, rel):
    with open(os.path.join(root, *rel.split("/")), "rb") as fh:
        data = fh.read()
    src = Source(data)
    modname = module_name(root, rel)
    entry = {"path": rel, "module": modname, "sha256": hashlib.sha256(data).hexdigest(),
             "parse_errors": [], "entities": [], "imports": [], "all": None, "assignments": []}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
    except (SyntaxError, ValueError) as e:
        entry["parse_errors"] = [{"line": getattr(e, "lineno", None) or 1,
                                  "column": getattr(e, "offset", None) or 1,
                                  "message": str(getattr(e, "msg", e))}]
        entry["entities"] = entities_of(rel, modname, src, ast.Module(body=[], type_ignores=[]))
        return entry
    entry["entities"] = entities_of(rel, modname, src, tree)
    entry["imports"] = imports_of(tree)
    entry["all"] = all_of(tree)
    entry["assignments"] = assignments_of(tree)
    return entry


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "entities":
        argv = argv[1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root")
    ap.add_argument("-o", "--output")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--exclude", action="append", default=[])
    ap.add_argument("--cache")
    ap.add_argument("--no-cache", action="store_true")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    files = [process(root, rel) for rel in walk(root, args.exclude)]
    doc = {"files": files, "root": root, "schema": "fbkit.entities/1"}
    text = json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 3 if any(f["parse_errors"] for f in files) else 0


if __name__ == "__main__":
    sys.exit(main())
