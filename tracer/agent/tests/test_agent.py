"""Unit tests of fbkit's tracing agent, Python side (tracer/agent/fbkit_core.py and the pytest
plugin tracer/agent/fbkit_agent.py).

* Recorder.relpath / classify: what counts as repository code, and its identity.
* Recorder's profile callback, driven by real calls into modules written to a temporary
  repository root: caller/callee identity, the nearest in-repo caller across non-repo frames,
  import-time edges, contexts, take() and serialise().
* Journal, env_list, preloaded, load_accelerator, Agent, the child-process bootstrap.
* End to end: `python -m pytest -p fbkit_agent` on small generated repositories, checking the
  journal and that the traced run's outcomes equal the untraced run's.

Tests marked xfail(strict=True) document agent bugs found by these tests; each reason says
what is wrong. When a bug is fixed the test XPASSes, fails the run, and the mark goes.
"""

import gc
import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
import types
import uuid

import pytest

import fbkit_core
from fbkit_core import IMPORT_CONTEXT, SESSION_CONTEXT, Agent, Journal, Recorder

AGENT_DIR = os.path.dirname(os.path.abspath(fbkit_core.__file__))
PYTHON = sys.executable


# -- helpers ----------------------------------------------------------------------------

def _accel_module():
    path = os.environ.get("FBKIT_TEST_ACCEL")
    if not path:
        return None
    module, error = fbkit_core.load_accelerator(path)
    if module is None:
        raise RuntimeError("FBKIT_TEST_ACCEL=%s cannot be loaded: %s" % (path, error))
    return module


@pytest.fixture(params=["python", "accel"])
def impl(request):
    """The recorder implementation under test: the pure-Python callback (always) and the C
    accelerator (when FBKIT_TEST_ACCEL names a compiled _fbkit_accel)."""
    if request.param == "python":
        return None
    module = _accel_module()
    if module is None:
        pytest.skip("set FBKIT_TEST_ACCEL to a compiled _fbkit_accel to test the accelerator")
    return module


class Repo:
    """A temporary repository root holding a uniquely named package `self.name`."""

    def __init__(self, root, name):
        self.root = root
        self.name = name

    def write(self, rel, text):
        """Writes a file; PKG in `rel` and `text` stands for the package name."""
        rel = rel.replace("PKG", self.name)
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n").replace("PKG", self.name),
                        encoding="utf-8")
        return path

    def rel(self, rel):
        return rel.replace("PKG", self.name)

    def line(self, rel, needle):
        """1-based number of the first line of file `rel` that contains `needle`."""
        text = (self.root / self.rel(rel)).read_text(encoding="utf-8")
        for n, line in enumerate(text.splitlines(), 1):
            if needle in line:
                return n
        raise AssertionError("%r not in %s" % (needle, rel))

    def ident(self, rel, needle, name):
        """The code identity (path, firstlineno, name) of the code starting at `needle`."""
        return (self.rel(rel), self.line(rel, needle), name)

    def module(self, dotted):
        return importlib.import_module(dotted.replace("PKG", self.name))


@pytest.fixture
def repo(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    name = "fbkt_" + uuid.uuid4().hex[:12]
    monkeypatch.syspath_prepend(str(root))
    r = Repo(root, name)
    r.write("PKG/__init__.py", "")
    yield r
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]


CORE = '''
import functools
import heapq


def helper(x):
    return x + 1


def key(x):
    return -x


def api(x):
    return helper(x) * 2


def sort_desc(items):
    return sorted(items, key=key)


def smallest(items):
    return heapq.nsmallest(2, items, key=key)


def apply(fn, x):
    return fn(x)


def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)

    return wrapper


@deco
def decorated(x):
    return helper(x)


def shapes(xs):
    def inner(y):
        return helper(y)

    squares = [helper(x) for x in xs]
    table = {x: helper(x) for x in xs}
    total = sum(helper(x) for x in xs)
    lam = (lambda v: helper(v))(1)
    return inner(1), squares, table, total, lam


def lazy():
    from PKG import late

    return late.VALUE


class Box:
    def __init__(self):
        self._w = 0

    @property
    def width(self):
        return helper(self._w)

    @width.setter
    def width(self, value):
        self._w = helper(value)
'''


@pytest.fixture
def core(repo):
    repo.write("PKG/core.py", CORE)
    return repo.module("PKG.core")


def make_recorder(root, accel=None, **kwargs):
    return Recorder(str(root), accel=accel, **kwargs)


def profiled(rec, fn, *args, **kwargs):
    """Calls fn(*args) with the recorder installed as this thread's profile function."""
    old = sys.getprofile()
    if rec.tracer is not None:
        rec.tracer.install()
    else:
        sys.setprofile(rec.profile)
    try:
        return fn(*args, **kwargs)
    finally:
        sys.setprofile(old)


def named(rec, taken):
    """{context: {(caller identity or None, callee identity): n}} from Recorder.take()."""
    out = {}
    for context, edges in taken.items():
        table = out.setdefault(context, {})
        for (caller, callee), n in edges.items():
            key = (None if caller is None else rec.identity(caller), rec.identity(callee))
            table[key] = table.get(key, 0) + n
    return out


def outside_callback(x):
    """Lives outside every temporary root: a non-repository frame between repository ones."""
    return sys.modules[outside_callback.target].helper(x)


# -- Recorder.relpath ---------------------------------------------------------------------

class TestRelpath:
    def test_inside_root(self, tmp_path):
        rec = Recorder(str(tmp_path))
        assert rec.relpath(str(tmp_path / "pkg" / "mod.py")) == "pkg/mod.py"
        assert rec.relpath(str(tmp_path / "top.py")) == "top.py"

    def test_normalises_dots(self, tmp_path):
        rec = Recorder(str(tmp_path))
        assert rec.relpath(str(tmp_path) + "/pkg/../pkg/./mod.py") == "pkg/mod.py"

    def test_root_given_with_trailing_slash(self, tmp_path):
        rec = Recorder(str(tmp_path) + "/")
        assert rec.relpath(str(tmp_path / "a.py")) == "a.py"

    def test_outside_root(self, tmp_path):
        root = tmp_path / "repo"
        root.mkdir()
        rec = Recorder(str(root))
        assert rec.relpath(str(tmp_path / "elsewhere.py")) is None
        assert rec.relpath("/usr/lib/python3.11/json/__init__.py") is None
        assert rec.relpath(str(root)) is None  # the root itself is no file in it

    def test_sibling_sharing_the_prefix_is_outside(self, tmp_path):
        (tmp_path / "repo").mkdir()
        rec = Recorder(str(tmp_path / "repo"))
        assert rec.relpath(str(tmp_path / "repo-other" / "m.py")) is None
        assert rec.relpath(str(tmp_path / "repository.py")) is None

    @pytest.mark.parametrize("name", ["", None, "<string>", "<frozen importlib._bootstrap>",
                                      "<doctest x[0]>", "<stdin>"])
    def test_pseudo_filenames(self, tmp_path, name):
        assert Recorder(str(tmp_path)).relpath(name) is None

    def test_relative_filename_resolves_against_cwd_at_start(self, tmp_path, monkeypatch):
        root = tmp_path / "repo"
        (root / "pkg").mkdir(parents=True)
        monkeypatch.chdir(root)
        rec = Recorder(str(root))
        assert rec.relpath("pkg/mod.py") == "pkg/mod.py"
        # A test that changes directory does not change how relative names resolve.
        monkeypatch.chdir(tmp_path)
        assert rec.relpath("pkg/mod.py") == "pkg/mod.py"
        assert rec.relpath("../outside.py") is None

    def test_root_reached_through_a_symlink(self, tmp_path):
        real = tmp_path / "real"
        (real / "pkg").mkdir(parents=True)
        (real / "pkg" / "mod.py").write_text("")
        link = tmp_path / "link"
        link.symlink_to(real)
        rec = Recorder(str(link))
        assert rec.relpath(str(real / "pkg" / "mod.py")) == "pkg/mod.py"
        assert rec.relpath(str(link / "pkg" / "mod.py")) == "pkg/mod.py"

    def test_symlinked_file_resolves_to_its_target(self, tmp_path):
        root = tmp_path / "repo"
        (root / "src").mkdir(parents=True)
        (root / "src" / "impl.py").write_text("")
        (root / "alias.py").symlink_to(root / "src" / "impl.py")
        outside = tmp_path / "outside.py"
        outside.write_text("")
        (root / "ext.py").symlink_to(outside)
        rec = Recorder(str(root))
        assert rec.relpath(str(root / "alias.py")) == "src/impl.py"
        assert rec.relpath(str(root / "ext.py")) is None  # points out of the repository

    @pytest.mark.parametrize("venv", [".venv/lib/python3.11/site-packages",
                                      "env/lib/python3/dist-packages"])
    def test_site_packages_under_root_are_excluded(self, tmp_path, venv):
        rec = Recorder(str(tmp_path))
        assert rec.relpath(str(tmp_path / venv / "click" / "core.py")) is None
        assert rec.relpath(str(tmp_path / "site-packages.py")) == "site-packages.py"

    def test_root_inside_a_site_packages_directory(self, tmp_path):
        root = tmp_path / "lib" / "site-packages" / "proj"
        root.mkdir(parents=True)
        rec = Recorder(str(root))
        assert rec.relpath(str(root / "proj" / "mod.py")) == "proj/mod.py"
        # only the part below the root is looked at: a virtualenv inside it is still skipped
        assert rec.relpath(str(root / ".venv" / "lib" / "site-packages" / "x.py")) is None

    def test_excludes(self, tmp_path):
        rec = Recorder(str(tmp_path), excludes=[str(tmp_path / "vendor"),
                                                str(tmp_path / "build") + "/"])
        assert rec.relpath(str(tmp_path / "vendor" / "six.py")) is None
        assert rec.relpath(str(tmp_path / "build" / "lib" / "x.py")) is None
        assert rec.relpath(str(tmp_path / "vendored.py")) == "vendored.py"
        assert rec.relpath(str(tmp_path / "src" / "vendor" / "x.py")) == "src/vendor/x.py"


# -- Recorder.classify ----------------------------------------------------------------------

class TestClassify:
    def test_identity_and_module_codes(self, repo):
        path = repo.write("PKG/m.py", "def f():\n    return 1\n")
        code = compile(path.read_text(), str(path), "exec")
        rec = make_recorder(repo.root)
        assert rec.classify(code) == (repo.rel("PKG/m.py"), 1, "<module>")
        f_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
        assert rec.classify(f_code) == (repo.rel("PKG/m.py"), 1, "f")
        assert id(code) in rec._module_ids and id(f_code) not in rec._module_ids

    def test_test_files_are_not_module_codes(self, repo):
        path = repo.write("tests/test_x.py", "x = 1\n")
        rec = make_recorder(repo.root)
        rec.test_files.add("tests/test_x.py")
        code = compile(path.read_text(), str(path), "exec")
        assert rec.classify(code) == ("tests/test_x.py", 1, "<module>")
        assert id(code) not in rec._module_ids

    def test_outside(self, repo):
        rec = make_recorder(repo.root)
        assert rec.classify(json.dumps.__code__) is None
        assert rec.classify(compile("1", "<string>", "eval")) is None

    def test_equal_code_in_two_files(self, repo):
        a = repo.write("PKG/a/__init__.py", "")
        b = repo.write("PKG/b/__init__.py", "")
        code_a = compile("", str(a), "exec")
        code_b = compile("", str(b), "exec")
        assert code_a == code_b  # CPython: equal despite different co_filename
        rec = make_recorder(repo.root)
        assert rec.classify(code_a) == (repo.rel("PKG/a/__init__.py"), 1, "<module>")
        assert rec.classify(code_b) == (repo.rel("PKG/b/__init__.py"), 1, "<module>")

    def test_equal_code_outside_then_inside(self, repo, tmp_path):
        outside = tmp_path / "lib" / "other" / "__init__.py"
        outside.parent.mkdir(parents=True)
        outside.write_text("")
        inside = repo.write("PKG/sub/__init__.py", "")
        rec = make_recorder(repo.root)
        assert rec.classify(compile("", str(outside), "exec")) is None
        assert rec.classify(compile("", str(inside), "exec")) == (
            repo.rel("PKG/sub/__init__.py"), 1, "<module>")


# -- Recorder.profile / the accelerator, driven by real calls --------------------------------

class TestProfile:
    def test_caller_and_callee_identity(self, repo, core, impl):
        rec = make_recorder(repo.root, impl)
        profiled(rec, core.api, 1)
        profiled(rec, core.api, 2)
        api = repo.ident("PKG/core.py", "def api", "api")
        helper = repo.ident("PKG/core.py", "def helper", "helper")
        assert named(rec, rec.take()) == {SESSION_CONTEXT: {(None, api): 2, (api, helper): 2}}

    def test_nearest_caller_across_a_builtin(self, repo, core, impl):
        rec = make_recorder(repo.root, impl)
        assert profiled(rec, core.sort_desc, [1, 3, 2]) == [3, 2, 1]
        edges = named(rec, rec.take())[SESSION_CONTEXT]
        sort_desc = repo.ident("PKG/core.py", "def sort_desc", "sort_desc")
        key = repo.ident("PKG/core.py", "def key", "key")
        assert edges == {(None, sort_desc): 1, (sort_desc, key): 3}

    def test_nearest_caller_across_stdlib_frames(self, repo, core, impl):
        rec = make_recorder(repo.root, impl)
        assert profiled(rec, core.smallest, [5, 1, 4, 2]) == [5, 4]
        edges = named(rec, rec.take())[SESSION_CONTEXT]
        smallest = repo.ident("PKG/core.py", "def smallest", "smallest")
        key = repo.ident("PKG/core.py", "def key", "key")
        # heapq.nsmallest (Python code in the stdlib) calls key: the edge skips its frames.
        assert edges == {(None, smallest): 1, (smallest, key): 4}

    def test_nearest_caller_across_an_outside_callback(self, repo, core, impl):
        rec = make_recorder(repo.root, impl)
        outside_callback.target = core.__name__
        assert profiled(rec, core.apply, outside_callback, 1) == 2
        edges = named(rec, rec.take())[SESSION_CONTEXT]
        apply_ = repo.ident("PKG/core.py", "def apply", "apply")
        helper = repo.ident("PKG/core.py", "def helper", "helper")
        assert edges == {(None, apply_): 1, (apply_, helper): 1}

    def test_caller_is_none_when_entered_from_outside(self, repo, core, impl):
        rec = make_recorder(repo.root, impl)
        profiled(rec, core.helper, 1)
        helper = repo.ident("PKG/core.py", "def helper", "helper")
        assert named(rec, rec.take()) == {SESSION_CONTEXT: {(None, helper): 1}}

    def test_a_call_the_garbage_collector_makes_has_no_caller(self, repo, impl):
        # A finalizer runs on top of whichever frame triggered the collection (here `collect`,
        # in a real run any frame whose allocation crossed the threshold): no caller.
        repo.write("PKG/cyc.py", """
            class Cycle:
                def __init__(self):
                    self.me = self

                def __del__(self):
                    finalize()

            def finalize():
                return 1

            def make():
                Cycle()

            def collect():
                gc.collect()

            import gc
        """)
        cyc = repo.module("PKG.cyc")
        rec = make_recorder(repo.root, impl)
        rec.watch_collections()
        enabled = gc.isenabled()
        gc.disable()
        try:
            profiled(rec, lambda: (cyc.make(), cyc.collect()))
        finally:
            rec.unwatch_collections()
            if enabled:
                gc.enable()
        assert rec.collecting is None
        f = "PKG/cyc.py"
        init = repo.ident(f, "def __init__", "__init__")
        dele = repo.ident(f, "def __del__", "__del__")
        finalize = repo.ident(f, "def finalize", "finalize")
        make = repo.ident(f, "def make", "make")
        collect = repo.ident(f, "def collect", "collect")
        assert named(rec, rec.take()) == {SESSION_CONTEXT: {
            (None, make): 1, (make, init): 1, (None, collect): 1, (None, dele): 1,
            (dele, finalize): 1}}
        assert rec.on_gc not in gc.callbacks

    def test_nothing_recorded_for_outside_code(self, repo, impl):
        rec = make_recorder(repo.root, impl)
        profiled(rec, json.dumps, {"a": [1, 2]})
        assert rec.take() == {}

    def test_nested_decorated_comprehensions_lambdas_properties(self, repo, core, impl):
        rec = make_recorder(repo.root, impl)

        def calls():
            core.decorated(1)
            core.shapes([1, 2])
            box = core.Box()
            box.width = 3
            return box.width

        assert profiled(rec, calls) == 5
        edges = named(rec, rec.take())[SESSION_CONTEXT]
        f = "PKG/core.py"
        helper = repo.ident(f, "def helper", "helper")
        wrapper = repo.ident(f, "@functools.wraps(fn)", "wrapper")  # first decorator line
        decorated = repo.ident(f, "@deco", "decorated")
        shapes = repo.ident(f, "def shapes", "shapes")
        inner = repo.ident(f, "def inner", "inner")
        listcomp = repo.ident(f, "squares = [", "<listcomp>")
        dictcomp = repo.ident(f, "table = {", "<dictcomp>")
        genexpr = repo.ident(f, "total = sum(", "<genexpr>")
        lam = repo.ident(f, "lam = (lambda", "<lambda>")
        init = repo.ident(f, "def __init__", "__init__")
        getter = repo.ident(f, "@property", "width")
        setter = repo.ident(f, "@width.setter", "width")
        assert edges == {
            (None, wrapper): 1, (wrapper, decorated): 1, (decorated, helper): 1,
            (None, shapes): 1, (shapes, inner): 1, (inner, helper): 1,
            (shapes, listcomp): 1, (listcomp, helper): 2,
            (shapes, dictcomp): 1, (dictcomp, helper): 2,
            # a generator frame is entered once per resumption: 2 items + the exhaustion
            (shapes, genexpr): 3, (genexpr, helper): 2,
            (shapes, lam): 1, (lam, helper): 1,
            (None, init): 1, (None, setter): 1, (setter, helper): 1,
            (None, getter): 1, (getter, helper): 1,
        }

    def test_thread_started_from_outside(self, repo, core, impl):
        rec = make_recorder(repo.root, impl)
        hook = rec.tracer if rec.tracer is not None else rec.profile
        threading.setprofile(hook)
        try:
            t = threading.Thread(target=core.api, args=(1,))
            t.start()
            t.join()
        finally:
            threading.setprofile(None)
        api = repo.ident("PKG/core.py", "def api", "api")
        helper = repo.ident("PKG/core.py", "def helper", "helper")
        assert named(rec, rec.take()) == {SESSION_CONTEXT: {(None, api): 1, (api, helper): 1}}

    def test_import_time_edges_go_to_the_import_context(self, repo, core, impl):
        repo.write("PKG/mod_a.py", """
            from PKG.core import helper
            from PKG import mod_b

            VALUE = helper(1)


            class Shape:
                SIZE = helper(2)
        """)
        repo.write("PKG/mod_b.py", """
            from PKG.core import api

            B = api(3)
        """)
        rec = make_recorder(repo.root, impl)

        def import_then_call():
            repo.module("PKG.mod_a")
            return core.helper(0)

        profiled(rec, import_then_call)
        got = named(rec, rec.take())
        mod_a = (repo.rel("PKG/mod_a.py"), 1, "<module>")
        mod_b = (repo.rel("PKG/mod_b.py"), 1, "<module>")
        shape = repo.ident("PKG/mod_a.py", "class Shape", "Shape")
        helper = repo.ident("PKG/core.py", "def helper", "helper")
        api = repo.ident("PKG/core.py", "def api", "api")
        assert got == {
            IMPORT_CONTEXT: {
                (None, mod_a): 1, (mod_a, mod_b): 1, (mod_b, api): 1, (api, helper): 1,
                (mod_a, helper): 1, (mod_a, shape): 1, (shape, helper): 1,
            },
            # after the import, calls count in the current context again
            SESSION_CONTEXT: {(None, helper): 1},
        }

    def test_import_inside_a_function(self, repo, core, impl):
        repo.write("PKG/late.py", """
            from PKG.core import helper

            VALUE = helper(10)
        """)
        rec = make_recorder(repo.root, impl)
        rec.set_context("tests/test_x.py")
        assert profiled(rec, core.lazy) == 11
        got = named(rec, rec.take())
        lazy = repo.ident("PKG/core.py", "def lazy", "lazy")
        late = (repo.rel("PKG/late.py"), 1, "<module>")
        helper = repo.ident("PKG/core.py", "def helper", "helper")
        assert got == {"tests/test_x.py": {(None, lazy): 1},
                       IMPORT_CONTEXT: {(lazy, late): 1, (late, helper): 1}}

    def test_import_depth_restored_after_a_failing_import(self, repo, core, impl):
        repo.write("PKG/bad.py", """
            from PKG.core import helper

            helper(1)
            raise RuntimeError("broken module")
        """)
        rec = make_recorder(repo.root, impl)

        def import_bad_then_call():
            with pytest.raises(RuntimeError):
                repo.module("PKG.bad")
            return core.api(1)

        profiled(rec, import_bad_then_call)
        got = named(rec, rec.take())
        bad = (repo.rel("PKG/bad.py"), 1, "<module>")
        helper = repo.ident("PKG/core.py", "def helper", "helper")
        api = repo.ident("PKG/core.py", "def api", "api")
        assert got == {IMPORT_CONTEXT: {(None, bad): 1, (bad, helper): 1},
                       SESSION_CONTEXT: {(None, api): 1, (api, helper): 1}}

    def test_test_module_code_is_not_import_context(self, repo, core, impl):
        repo.write("tests/test_imp.py", """
            from PKG.core import helper

            X = helper(1)


            def test_it():
                assert helper(X) == 3
        """)
        rec = make_recorder(repo.root, impl)
        rec.test_files.add("tests/test_imp.py")
        rec.set_context("tests/test_imp.py")
        path = repo.root / "tests" / "test_imp.py"
        ns = {"__name__": "test_imp_" + repo.name}
        profiled(rec, exec, compile(path.read_text(), str(path), "exec"), ns)
        profiled(rec, ns["test_it"])
        got = named(rec, rec.take())
        module = ("tests/test_imp.py", 1, "<module>")
        test_it = repo.ident("tests/test_imp.py", "def test_it", "test_it")
        helper = repo.ident("PKG/core.py", "def helper", "helper")
        assert got == {"tests/test_imp.py": {(None, module): 1, (module, helper): 1,
                                             (None, test_it): 1, (test_it, helper): 1}}

    def test_take_returns_code_ids(self, repo, core, impl):
        rec = make_recorder(repo.root, impl)
        profiled(rec, core.api, 1)
        api, helper = id(core.api.__code__), id(core.helper.__code__)
        # ids of the code objects (from the C accelerator too), resolved by identity()
        assert rec.take() == {SESSION_CONTEXT: {(None, api): 1, (api, helper): 1}}
        assert rec.identity(api) == repo.ident("PKG/core.py", "def api", "api")
        assert rec.identity(helper) == repo.ident("PKG/core.py", "def helper", "helper")

    def test_set_context_and_take(self, repo, core, impl):
        rec = make_recorder(repo.root, impl)
        helper = repo.ident("PKG/core.py", "def helper", "helper")
        rec.set_context("tests/test_a.py")
        profiled(rec, core.helper, 1)
        rec.set_context("<fixture>tests::db")
        profiled(rec, core.helper, 1)
        rec.set_context("tests/test_a.py")
        profiled(rec, core.helper, 1)
        rec.set_context("tests/test_b.py")  # stays empty: not returned
        assert rec.context == "tests/test_b.py"
        assert named(rec, rec.take()) == {"tests/test_a.py": {(None, helper): 2},
                                          "<fixture>tests::db": {(None, helper): 1}}
        assert rec.take() == {}
        # take() clears, and recording goes on in the current context
        profiled(rec, core.helper, 1)
        assert named(rec, rec.take()) == {"tests/test_b.py": {(None, helper): 1}}

    def test_equal_functions_in_two_files_stay_apart(self, repo, impl):
        source = "def same(x):\n    return x\n"
        repo.write("PKG/one.py", source)
        repo.write("PKG/two.py", source)
        one, two = repo.module("PKG.one"), repo.module("PKG.two")
        rec = make_recorder(repo.root, impl)

        def calls():
            one.same(1)
            two.same(2)
            two.same(3)

        profiled(rec, calls)
        assert named(rec, rec.take()) == {SESSION_CONTEXT: {
            (None, (repo.rel("PKG/one.py"), 1, "same")): 1,
            (None, (repo.rel("PKG/two.py"), 1, "same")): 2}}


TYPED = '''
def scale(x, factor=2, *rest, **opts):
    return [x * factor]


def fails(x):
    raise ValueError(x)


def nothing(x):
    return None


def gen(n):
    yield n


def caller(v):
    try:
        fails(v)
    except ValueError:
        pass
    return nothing(v)


class Thing:
    def get(self, key):
        return {key: 1}
'''


HELD = '''
class Tracked:
    def __init__(self, dead):
        self.dead = dead

    def make(self, name):
        dead = self.dead

        class Item(str):
            def __del__(self):
                dead.append(str(self))
        return Item(name)


def names(items):
    for item in items:
        yield str(item)

'''


def types_of(rec, taken):
    """take_types() with code ids as identities: {context: {ident: (params, returns)}}."""
    return {c: {rec.identity(k): v for k, v in t.items()} for c, t in taken.items()}


class TestObservedTypes:
    def test_arguments_and_results(self, repo, impl):
        repo.write("PKG/typed.py", TYPED)
        mod = repo.module("PKG.typed")
        rec = make_recorder(repo.root, impl)
        profiled(rec, mod.scale, 3)
        profiled(rec, mod.scale, "a", 3, None, b=1.5)
        profiled(rec, mod.Thing().get, "k")
        got = types_of(rec, rec.take_types())[SESSION_CONTEXT]
        scale = repo.ident("PKG/typed.py", "def scale", "scale")
        assert got[scale] == ({"x": {"int", "str"}, "factor": {"int"}, "*rest": {"NoneType"},
                               "**opts": {"float"}}, {"list"})
        get = repo.ident("PKG/typed.py", "    def get", "get")
        assert got[get] == ({"key": {"str"}}, {"dict"})  # no `self`
        assert rec.take_types() == {}

    def test_a_raise_records_no_result_a_return_none_does(self, repo, impl):
        repo.write("PKG/typed.py", TYPED)
        mod = repo.module("PKG.typed")
        rec = make_recorder(repo.root, impl)
        profiled(rec, mod.caller, 1)
        got = types_of(rec, rec.take_types())[SESSION_CONTEXT]
        assert got[repo.ident("PKG/typed.py", "def fails", "fails")] == ({"x": {"int"}}, set())
        assert got[repo.ident("PKG/typed.py", "def nothing", "nothing")] == (
            {"x": {"int"}}, {"NoneType"})

    def test_generators_are_not_sampled(self, repo, impl):
        # Each resumption is a call event: a generator's locals are never read.
        repo.write("PKG/typed.py", TYPED)
        mod = repo.module("PKG.typed")
        rec = make_recorder(repo.root, impl)
        profiled(rec, lambda: list(mod.gen(1)))
        got = types_of(rec, rec.take_types()).get(SESSION_CONTEXT, {})
        assert repo.ident("PKG/typed.py", "def gen", "gen") not in got

    def test_sampling_keeps_nothing_alive(self, repo, impl):
        # more-itertools' test_early_free: a value a generator or a function let go of is
        # freed at once, sampled or not (reading f_locals left a snapshot holding it).
        repo.write("PKG/held.py", HELD)
        mod = repo.module("PKG.held")
        rec = make_recorder(repo.root, impl)
        dead = []

        def run():
            gen = mod.names(map(mod.Tracked(dead).make, "ABC"))
            assert next(gen) == "A"
            assert next(gen) == "B"
            gc.collect()
            assert dead == ["A"]
        profiled(rec, run)
        assert dead[0] == "A"

    def test_sampling_is_capped_per_edge(self, repo, impl):
        repo.write("PKG/typed.py", TYPED)
        mod = repo.module("PKG.typed")
        rec = make_recorder(repo.root, impl)

        def many():
            for i in range(fbkit_core.TYPE_SAMPLES):
                mod.nothing(i)
            mod.nothing("late")  # beyond the samples of this edge: not seen
        profiled(rec, many)
        got = types_of(rec, rec.take_types())[SESSION_CONTEXT]
        assert got[repo.ident("PKG/typed.py", "def nothing", "nothing")][0] == {"x": {"int"}}

    def test_the_samples_do_not_depend_on_when_edges_are_taken(self, repo, impl):
        # The agent takes the edges every quarter second: the calls sampled must be the
        # first of each edge in its context all the same (traces stay reproducible).
        repo.write("PKG/typed.py", TYPED)
        mod = repo.module("PKG.typed")
        rec = make_recorder(repo.root, impl)

        def calls(values):
            for v in values:
                mod.nothing(v)
        first = list(range(fbkit_core.TYPE_SAMPLES - 1))
        profiled(rec, calls, first)
        assert rec.take()
        profiled(rec, calls, [1.5, "late"])  # the last sample, then one beyond
        rec.set_context("tests/test_other.py")  # another context samples afresh
        profiled(rec, calls, [b"x"])
        got = types_of(rec, rec.take_types())
        nothing = repo.ident("PKG/typed.py", "def nothing", "nothing")
        assert got[SESSION_CONTEXT][nothing][0] == {"x": {"int", "float"}}
        assert got["tests/test_other.py"][nothing][0] == {"x": {"bytes"}}

    def test_the_names_kept_do_not_depend_on_when_types_are_taken(self, repo, impl):
        # The agent flushes every quarter second, in the middle of a context: the cap of
        # names per parameter holds over the whole context all the same (a cap per flush let
        # more names through when a flush fell between the calls: click's traces differed
        # from run to run in their `**attrs` lists).
        repo.write("PKG/kw.py", "def take(**kw):\n    return None\n")
        mod = repo.module("PKG.kw")
        values = [1, "s", 1.5, b"b", None, [], {}, (), set(), frozenset(), 1j, True]
        calls = [dict(zip("abc", values[i:i + 3])) for i in range(0, 12, 3)]

        def run(split):
            rec = make_recorder(repo.root, impl)
            names = set()
            for i, kw in enumerate(calls):
                if split and i == 2:
                    assert rec.take_types(keep=SESSION_CONTEXT) == {}
                profiled(rec, lambda: mod.take(**kw))
            for taken in types_of(rec, rec.take_types()).values():
                for params, _ in taken.values():
                    names |= params.get("**kw", set())
            return names
        whole = run(split=False)
        assert len(whole) == fbkit_core.TYPE_NAMES_CAP
        assert run(split=True) == whole

    def test_serialised_sorted_beside_the_edges(self, repo, impl):
        repo.write("PKG/typed.py", TYPED)
        mod = repo.module("PKG.typed")
        rec = make_recorder(repo.root, impl)
        rec.set_context("tests/test_t.py")
        profiled(rec, mod.scale, 3)
        profiled(rec, mod.scale, "a")
        types = rec.take_types()
        record = rec.serialise("tests/test_t.py", rec.take()["tests/test_t.py"],
                               types["tests/test_t.py"])
        scale = list(repo.ident("PKG/typed.py", "def scale", "scale"))
        [[code, params, returns]] = record["types"]
        assert record["codes"][code] == scale
        assert params == {"x": ["int", "str"], "factor": ["int"]} and returns == ["list"]


class TestSerialise:
    def test_shape(self, repo, core, impl):
        rec = make_recorder(repo.root, impl)
        rec.set_context("tests/test_s.py")
        profiled(rec, core.api, 1)
        profiled(rec, core.sort_desc, [2, 1])
        taken = rec.take()
        record = rec.serialise("tests/test_s.py", taken["tests/test_s.py"])
        assert set(record) == {"type", "context", "codes", "edges"}
        assert record["type"] == "edges" and record["context"] == "tests/test_s.py"
        codes = record["codes"]
        assert all(isinstance(c, list) and len(c) == 3 for c in codes)
        assert all(isinstance(p, str) and isinstance(n, int) and isinstance(q, str)
                   for p, n, q in codes)
        assert len({tuple(c) for c in codes}) == len(codes)  # one entry per code
        rows = record["edges"]
        assert rows == sorted(rows)
        for caller, callee, n in rows:
            assert -1 <= caller < len(codes) and 0 <= callee < len(codes) and n >= 1
        assert json.loads(json.dumps(record)) == record
        decoded = {(None if a < 0 else tuple(codes[a]), tuple(codes[b])): n for a, b, n in rows}
        assert decoded == named(rec, taken)["tests/test_s.py"]
        api = repo.ident("PKG/core.py", "def api", "api")
        assert decoded[(None, api)] == 1

    def test_empty(self, repo):
        rec = make_recorder(repo.root)
        assert rec.serialise("<session>", {}) == {"type": "edges", "context": "<session>",
                                                   "codes": [], "edges": []}


# -- Journal, helpers ---------------------------------------------------------------------

class TestJournal:
    def test_lines_are_flushed_sorted_and_utf8(self, tmp_path):
        path = tmp_path / "j.jsonl"
        journal = Journal(str(path))
        journal.write({"type": "report", "nodeid": "t.py::test[a b [c] é]", "b": 1, "a": 2})
        assert path.read_bytes() == b""  # buffered until a flush
        journal.write({"type": "begin", "file": "t.py"}, flush=True)
        # readable before close once flushed: a crash loses nothing already flushed
        raw = path.read_bytes().split(b"\n", 1)[0] + b"\n"
        assert raw.endswith(b"\n") and raw.count(b"\n") == 1
        assert "é".encode("utf-8") in raw
        line = raw.decode("utf-8")
        assert line.index('"a"') < line.index('"b"') < line.index('"nodeid"')
        assert json.loads(line)["nodeid"] == "t.py::test[a b [c] é]"
        journal.close()

    def test_appends(self, tmp_path):
        path = tmp_path / "j.jsonl"
        path.write_text('{"type": "earlier"}\n')
        journal = Journal(str(path))
        journal.write({"type": "start"})
        journal.close()
        assert [json.loads(x)["type"] for x in path.read_text().splitlines()] == [
            "earlier", "start"]

    def test_threads_write_whole_lines(self, tmp_path):
        path = tmp_path / "j.jsonl"
        journal = Journal(str(path))

        def writer(k):
            for i in range(200):
                journal.write({"type": "warning", "nodeid": "%d-%d" % (k, i), "message": "x" * 300})

        threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        journal.close()
        lines = path.read_text().splitlines()
        assert len(lines) == 800 and all(json.loads(x)["type"] == "warning" for x in lines)

    def test_lone_surrogate(self, tmp_path):
        path = tmp_path / "j.jsonl"
        journal = Journal(str(path))
        journal.write({"type": "report", "message": "bad name \udcff"})
        journal.write({"type": "after"})  # the journal still works
        journal.close()
        lines = path.read_text(encoding="utf-8").splitlines()  # valid UTF-8
        assert json.loads(lines[0])["message"] == "bad name ?"  # replaced, not fatal
        assert json.loads(lines[1]) == {"type": "after"}


class TestSigner:
    """The journal's signer (fbkit_core.seal_key): the key sealed in it, lines signed in order,
    and, once armed, verdict records only from a stack of the code it was armed with."""
    KEY = b"k" * 32

    def journal(self, tmp_path):
        fbkit_core.seal_key(self.KEY)
        path = tmp_path / "j.jsonl"
        return Journal(str(path), fbkit_core._take_signer()), path

    def lines(self, path):
        import hmac
        out = []
        for line in path.read_text().splitlines():
            body, sig = line.rsplit("\t", 1)
            assert hmac.new(self.KEY, body.encode(), "sha256").hexdigest() == sig
            out.append(json.loads(body))
        return out

    def arm(self, journal, trusted_codes, writer=None):
        bottom = sys._getframe(0)
        while bottom.f_back is not None:
            bottom = bottom.f_back
        trusted = {id(c): (c, g) for c, g in trusted_codes}
        up = sys._getframe(1).f_code  # the test that writes through write_report
        writers = {"report": ({id(writer): writer}, {id(up): up})} if writer is not None else {}
        journal.write(("arm", threading.get_ident(), bottom, trusted, None, writers, {}, {}))

    def stack(self):
        frame, out = sys._getframe(1), []
        while frame is not None:
            out.append((frame.f_code, frame.f_globals))
            frame = frame.f_back
        return out

    def test_signed_in_order_and_the_key_kept_nowhere_else(self, tmp_path):
        journal, path = self.journal(tmp_path)
        journal.write({"type": "start"})
        journal.write({"type": "report", "nodeid": "t"}, flush=True)
        assert [(r["type"], r["seq"]) for r in self.lines(path)] == [("start", 1), ("report", 2)]
        assert not hasattr(fbkit_core, "SESSION_KEY") and fbkit_core._take_signer() is None
        assert all(v != self.KEY for v in vars(journal).values())

    def test_only_the_journals_writer_gets_a_signature(self, tmp_path):
        journal, path = self.journal(tmp_path)
        assert journal._signer.send({"type": "report", "nodeid": "t"}) is None
        journal.write({"type": "note", "message": "m"}, flush=True)
        assert [r["seq"] for r in self.lines(path)] == [1]

    def test_armed_verdicts_need_the_trusted_stack(self, tmp_path):
        journal, path = self.journal(tmp_path)
        self.arm(journal, [])  # nothing trusted: this test's own code asks
        for nodeid in ("a", "b"):  # the same refusal (same place), said once
            journal.write({"type": "report", "nodeid": nodeid})
        journal.write({"type": "note", "message": "any caller"}, flush=True)
        records = self.lines(path)
        assert [r["type"] for r in records] == ["integrity", "note"]
        assert "a report record was asked of fbkit's journal writer from" in records[0]["message"]
        assert "test_agent.py" in records[0]["message"]

    def test_armed_verdicts_from_the_trusted_stack_are_signed_not_from_a_thread(self, tmp_path):
        journal, path = self.journal(tmp_path)
        self.arm(journal, self.stack() + [(self.write_report.__code__, globals())],
                 self.write_report.__code__)
        self.write_report(journal, "a")
        journal.write({"type": "report", "nodeid": "c"})  # trusted stack, not the writer
        thread = threading.Thread(target=self.write_report, args=(journal, "b"))
        thread.start()
        thread.join()
        journal.flush()
        records = self.lines(path)
        assert [(r["type"], r.get("nodeid")) for r in records] == [
            ("report", "a"), ("integrity", None), ("integrity", None)]
        assert "not the plugin's writer of that record" in records[1]["message"]
        assert "from a thread other than pytest's" in records[2]["message"]

    def test_what_is_thrown_in_is_swallowed_without_the_signers_frame(self, tmp_path):
        journal, path = self.journal(tmp_path)
        error = ValueError("peek")
        assert journal._signer.throw(error) is None
        assert error.__traceback__ is None
        journal.write({"type": "note", "message": "still signing"}, flush=True)
        assert [r["seq"] for r in self.lines(path)] == [1]

    def test_the_encoding_is_json_dumps_sorted(self, tmp_path):
        journal, path = self.journal(tmp_path)
        record = {"type": "report", "message": "é \u2028 \"q\"", "n": [1, 2.5, None, True], "a": {"z": 1, "b": 2}}
        journal.write(record, flush=True)
        body = path.read_text().split("\n")[0].rsplit("\t", 1)[0]  # U+2028 is no line end
        assert body == json.dumps(dict(record, seq=1), sort_keys=True, ensure_ascii=False)

    @staticmethod
    def write_report(journal, nodeid):
        journal.write({"type": "report", "nodeid": nodeid})

    def test_a_type_that_is_not_a_plain_string_is_a_verdict(self, tmp_path):
        class Sly(str):
            __hash__ = str.__hash__

            def __eq__(self, other):
                return False
        journal, path = self.journal(tmp_path)
        self.arm(journal, [])
        journal.write({"type": Sly("report"), "nodeid": "a"}, flush=True)
        assert [r["type"] for r in self.lines(path)] == ["integrity"]


def test_env_list(monkeypatch):
    monkeypatch.setenv("FBKIT_T_LIST", os.pathsep.join(["/a", "", "/b c", ""]))
    assert fbkit_core.env_list("FBKIT_T_LIST") == ["/a", "/b c"]
    monkeypatch.delenv("FBKIT_T_LIST")
    assert fbkit_core.env_list("FBKIT_T_LIST") == []


def test_preloaded(repo, monkeypatch):
    rec = make_recorder(repo.root)
    inside = types.ModuleType("fbkt_pre_in")
    inside.__file__ = str(repo.root / "pre" / "mod.py")
    outside = types.ModuleType("fbkt_pre_out")
    outside.__file__ = "/usr/lib/python3.11/json/__init__.py"
    nofile = types.ModuleType("fbkt_pre_none")
    monkeypatch.setitem(sys.modules, "fbkt_pre_in", inside)
    monkeypatch.setitem(sys.modules, "fbkt_pre_out", outside)
    monkeypatch.setitem(sys.modules, "fbkt_pre_none", nofile)
    assert fbkit_core.preloaded(rec) == {"pre/mod.py"}


def test_load_accelerator_fallback(tmp_path):
    assert fbkit_core.load_accelerator(None) == (None, "not requested")
    assert fbkit_core.load_accelerator("") == (None, "not requested")
    bogus = tmp_path / "_fbkit_accel.so"
    bogus.write_bytes(b"not a shared object")
    module, reason = fbkit_core.load_accelerator(str(bogus))
    assert module is None and reason.startswith("ImportError")
    module, reason = fbkit_core.load_accelerator(str(tmp_path / "missing.so"))
    assert module is None and reason


# -- Agent (in-process) ----------------------------------------------------------------------

@pytest.fixture
def agent_env(monkeypatch):
    monkeypatch.delenv("FBKIT_TRACE_CONTEXT", raising=False)
    old_profile = sys.getprofile()
    yield
    sys.setprofile(old_profile)
    threading.setprofile(None)


def read_journal(path):
    return [json.loads(line) for line in open(path, encoding="utf-8").read().splitlines()]


class TestAgent:
    def test_start_install_stop(self, repo, core, tmp_path, agent_env):
        journal = tmp_path / "j.jsonl"
        agent = Agent(str(repo.root), str(journal))
        assert agent.accelerated is False
        agent.start(["b.py", "a.py"])
        try:
            assert sys.getprofile() is agent.profile
            core.api(1)
        finally:
            agent.stop()
        assert sys.getprofile() is None
        agent.flush()
        agent.journal.close()
        records = read_journal(journal)
        start = records[0]
        assert start["type"] == "start" and start["pid"] == os.getpid()
        assert start["python"] == sys.version and start["accelerated"] is False
        assert start["preloaded"] == ["a.py", "b.py"]
        edges = [r for r in records if r["type"] == "edges"]
        assert [r["context"] for r in edges] == [SESSION_CONTEXT]
        api = list(repo.ident("PKG/core.py", "def api", "api"))
        assert api in edges[0]["codes"]

    def test_enter_context_and_enter_file(self, repo, core, tmp_path, agent_env):
        journal = tmp_path / "j.jsonl"
        agent = Agent(str(repo.root), str(journal))
        rel = "tests/test_a.py"
        collect = fbkit_core.collect_context(rel)
        assert collect == "<collect>tests/test_a.py"
        agent.enter_context(collect, rel)  # collecting the file: no begin
        assert agent.recorder.context == collect and agent.current_file == rel
        assert os.environ["FBKIT_TRACE_CONTEXT"] == rel  # children count for the file
        profiled(agent.recorder, core.helper, 1)
        agent.enter_context(collect, rel)  # unchanged: nothing flushed
        assert read_journal(journal) == []
        # its tests run: a begin record, although the collection context was that file's
        agent.enter_file(rel)
        assert agent.recorder.context == rel and agent.running_file == rel
        profiled(agent.recorder, core.helper, 2)
        agent.enter_file(rel)  # unchanged: nothing written
        agent.enter_context(SESSION_CONTEXT)
        assert agent.recorder.context == SESSION_CONTEXT and agent.current_file is None
        assert os.environ["FBKIT_TRACE_CONTEXT"] == SESSION_CONTEXT
        agent.enter_file(rel)  # the running file did not change: no second begin
        agent.enter_file("tests/test_b.py")
        agent.enter_file(None)
        assert agent.recorder.context == SESSION_CONTEXT
        assert os.environ["FBKIT_TRACE_CONTEXT"] == SESSION_CONTEXT
        agent.journal.close()
        records = read_journal(journal)
        assert [(r["type"], r.get("file") or r.get("context")) for r in records] == [
            ("edges", collect), ("begin", rel), ("edges", rel), ("begin", "tests/test_b.py")]
        helper = list(repo.ident("PKG/core.py", "def helper", "helper"))
        assert records[0]["codes"] == [helper] and records[0]["edges"] == [[-1, 0, 1]]
        assert records[2]["codes"] == [helper] and records[2]["edges"] == [[-1, 0, 1]]

    def test_flush_now_and_then(self, repo, core, tmp_path, agent_env):
        journal = tmp_path / "j.jsonl"
        agent = Agent(str(repo.root), str(journal))
        agent.enter_file("tests/test_a.py")

        def kinds():
            return [r["type"] for r in read_journal(journal)]

        profiled(agent.recorder, core.helper, 1)
        agent.last_flush = time.monotonic()
        agent.flush_now_and_then(3600)  # the last flush is recent: nothing written
        assert kinds() == ["begin"]
        before = agent.last_flush
        agent.flush_now_and_then(0)
        assert kinds() == ["begin", "edges"] and agent.last_flush >= before
        agent.flush_now_and_then(0)  # nothing recorded since: no empty records
        assert kinds() == ["begin", "edges"]
        profiled(agent.recorder, core.helper, 1)
        agent.last_flush = time.monotonic() - 1.0
        agent.flush_now_and_then()  # default: flushes when the last is 0.25 s old
        assert kinds() == ["begin", "edges", "edges"]
        agent.journal.close()

    def test_ensure_installed(self, repo, tmp_path, agent_env):
        journal = tmp_path / "j.jsonl"
        agent = Agent(str(repo.root), str(journal))
        agent.start([])
        try:
            agent.ensure_installed("t.py::test_quiet")
            sys.setprofile(None)
            agent.ensure_installed("t.py::test_rude")
            assert sys.getprofile() is agent.profile
        finally:
            agent.stop()
        agent.journal.close()
        warnings = [r for r in read_journal(journal) if r["type"] == "warning"]
        assert [w["nodeid"] for w in warnings] == ["t.py::test_rude"]
        assert "profile" in warnings[0]["message"]


# -- child processes (sitecustomize bootstrap) -------------------------------------------------

def trace_env(root, journal=None, child_dir=None, role=None, pythonpath=(), **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FBKIT_", "PYTEST_"))}
    env["PYTHONPATH"] = os.pathsep.join([AGENT_DIR] + [str(p) for p in pythonpath])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["FBKIT_TRACE_ROOT"] = str(root)
    if journal is not None:
        env["FBKIT_TRACE_JOURNAL"] = str(journal)
    if child_dir is not None:
        env["FBKIT_TRACE_CHILD_DIR"] = str(child_dir)
    if role is not None:
        env["FBKIT_TRACE_ROLE"] = role
    env.update(extra)
    return env


def merged_edges(records):
    """{context: {(caller identity or None, callee identity): n}} over all edges records."""
    out = {}
    for r in records:
        if r["type"] != "edges":
            continue
        codes = [tuple(c) for c in r["codes"]]
        table = out.setdefault(r["context"], {})
        for a, b, n in r["edges"]:
            key = (None if a < 0 else codes[a], codes[b])
            table[key] = table.get(key, 0) + n
    return out


def callees(table):
    return {callee[2] for (_, callee) in table}


def test_child_process_is_traced_in_its_parents_context(repo, core, tmp_path):
    child_dir = tmp_path / "children"
    env = trace_env(repo.root, child_dir=child_dir, role="child", pythonpath=[repo.root],
                    FBKIT_TRACE_CONTEXT="tests/test_x.py")
    code = "import PKG.core as c; assert c.api(1) == 4".replace("PKG", repo.name)
    proc = subprocess.run([PYTHON, "-X", "dev", "-W", "error", "-c", code], env=env,
                          cwd=str(repo.root), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no warnings (-X dev -W error: ResourceWarning too)
    journals = sorted(child_dir.iterdir())
    assert len(journals) == 1 and re.fullmatch(r"child-\d+\.jsonl", journals[0].name)
    records = read_journal(journals[0])
    assert records[0]["type"] == "start"
    edges = merged_edges(records)
    api = repo.ident("PKG/core.py", "def api", "api")
    helper = repo.ident("PKG/core.py", "def helper", "helper")
    # A child's import time is its own, so it belongs to the test that started it: no
    # "<import>" context in children.
    assert IMPORT_CONTEXT not in edges
    child = edges["tests/test_x.py"]
    assert child[(None, api)] == 1 and child[(api, helper)] == 1
    assert (None, (repo.rel("PKG/core.py"), 1, "<module>")) in child


def test_no_child_tracing_without_role(repo, core, tmp_path):
    child_dir = tmp_path / "children"
    env = trace_env(repo.root, child_dir=child_dir, pythonpath=[repo.root])
    code = "import PKG.core as c; c.api(1)".replace("PKG", repo.name)
    subprocess.run([PYTHON, "-c", code], env=env, check=True, timeout=60)
    assert not child_dir.exists()


# -- end to end: python -m pytest -p fbkit_agent ------------------------------------------------

PYPROJECT = """
[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
filterwarnings = ["error"]
"""

MINI = {
    "pyproject.toml": PYPROJECT,
    "src/mini/__init__.py": """
        from mini.core import norm

        NAME = norm(" Mini ")
    """,
    "src/mini/core.py": """
        def norm(s):
            return s.strip().lower()


        def double(x):
            return 2 * x


        def fail_lookup(name):
            return {}[name]


        def after_profile_removed():
            return double(5)


        def child_only(x):
            return double(x)
    """,
    "src/mini/extra.py": """
        from mini.core import double


        def only_b(x):
            return double(x) + 1


        def in_thread(out):
            out.append(double(21))
    """,
    "tests/conftest.py": """
        import pytest

        from mini import core


        @pytest.fixture
        def value():
            return core.double(2)


        @pytest.fixture
        def broken():
            return core.fail_lookup("missing")
    """,
    "tests/test_a.py": """
        import sys

        import pytest

        import mini
        from mini import core


        def test_pass(value):
            assert value == 4 and mini.NAME == "mini"


        def test_fail():
            assert core.double(2) == 5


        def test_error(broken):
            pass


        @pytest.mark.xfail(reason="expected", strict=True)
        def test_xfail():
            assert core.double(1) == 3


        @pytest.mark.xfail(reason="not strict")
        def test_xpass():
            assert core.double(1) == 2


        @pytest.mark.skip(reason="on purpose")
        def test_skip():
            core.double(1)


        @pytest.mark.parametrize("x", [pytest.param(1, id="a b [c] é"), pytest.param(2, id="[x]::y")])
        def test_param(x):
            assert core.double(x) == 2 * x


        class TestGroup:
            def test_method(self):
                assert core.norm(" A ") == "a"


        def test_setprofile_none():
            sys.setprofile(None)
            assert core.after_profile_removed() == 10
    """,
    "tests/test_b.py": """
        import os
        import subprocess
        import sys
        import threading

        import mini
        from mini import core, extra


        def test_uses_extra():
            assert extra.only_b(1) == 3


        def test_thread():
            out = []
            t = threading.Thread(target=extra.in_thread, args=(out,))
            t.start()
            t.join()
            assert out == [42]


        def test_subprocess():
            src = os.path.dirname(os.path.dirname(os.path.abspath(mini.__file__)))
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([src] + [p for p in [env.get("PYTHONPATH")] if p])
            code = "from mini import core; assert core.child_only(3) == 6"
            subprocess.run([sys.executable, "-c", code], check=True, env=env)


        def test_settrace_left_installed():
            sys.settrace(lambda frame, event, arg: None)  # the last test: left installed
            assert core.norm("B") == "b"
    """,
}


def make_repo(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def run_pytest(root, args=(), traced=True, work=None, accel=None):
    """Runs pytest in `root`; returns (completed process, journal records, child records)."""
    argv = [PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "-rA"] + list(args)
    if traced:
        argv[3:3] = ["-p", "fbkit_agent"]
        journal = work / "journal.jsonl"
        child_dir = work / "children"
        env = trace_env(root, journal=journal, child_dir=child_dir, role="main")
        if accel:
            env["FBKIT_TRACE_ACCEL"] = accel
    else:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FBKIT_", "PYTEST_"))}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPATH", None)
    # errors="replace": pytest prints undecodable bytes (e.g. os.fsdecode'd names) as they are
    proc = subprocess.run(argv, cwd=str(root), env=env, capture_output=True, text=True,
                          errors="replace", timeout=120)
    if not traced:
        return proc, None, None
    records = read_journal(journal) if journal.exists() else []
    children = []
    if child_dir.exists():
        for path in sorted(child_dir.iterdir()):
            children.extend(read_journal(path))
    return proc, records, children


def summary(stdout):
    """pytest's final summary counts, e.g. {'passed': 7, 'failed': 1}."""
    line = stdout.strip().splitlines()[-1]
    return {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", line.split(" in ")[0])}


class E2E:
    def __init__(self, tmp):
        self.root = make_repo(tmp / "mini", MINI)
        self.work = tmp / "work"
        self.work.mkdir()
        self.plain, _, _ = run_pytest(self.root, traced=False)
        self.collect_only, _, _ = run_pytest(self.root, ["--collect-only", "-q"], traced=False)
        self.proc, self.records, self.children = run_pytest(self.root, work=self.work)

    def of(self, kind):
        return [r for r in self.records if r["type"] == kind]


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    return E2E(tmp_path_factory.mktemp("e2e"))


def ident(path, name, files=MINI):
    """Identity of a function in generated sources: its first decorator's line, or its def's
    (CPython's co_firstlineno)."""
    lines = textwrap.dedent(files[path]).lstrip("\n").splitlines()
    for n, line in enumerate(lines):
        if line.lstrip().startswith("def %s(" % name):
            while n > 0 and lines[n - 1].lstrip().startswith("@"):
                n -= 1
            return (path, n + 1, name)
    raise AssertionError("no def %s in %s" % (name, path))


def test_e2e_outcomes_equal_untraced(e2e):
    assert e2e.plain.returncode == 1, e2e.plain.stdout
    assert e2e.proc.returncode == e2e.plain.returncode, e2e.proc.stdout + e2e.proc.stderr
    assert summary(e2e.proc.stdout) == summary(e2e.plain.stdout) == {
        "failed": 1, "passed": 9, "skipped": 1, "xfailed": 1, "xpassed": 1, "error": 1}
    for text in (e2e.proc.stdout, e2e.proc.stderr):
        assert "INTERNALERROR" not in text
        assert "warnings summary" not in text and "Warning" not in text
    # the same test results, line by line (-rA lists every test)
    def results(out):
        return sorted(x.split(" - ")[0] for x in out.splitlines()
                      if re.match(r"(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) ", x))
    assert results(e2e.proc.stdout) == results(e2e.plain.stdout)


def test_e2e_nothing_written_into_the_repository(e2e):
    written = [str(p.relative_to(e2e.root)) for p in e2e.root.rglob("*")
               if p.name in ("__pycache__", ".pytest_cache") or p.suffix == ".pyc"]
    assert written == []


def test_e2e_start_and_finish(e2e):
    start, finish = e2e.records[0], e2e.records[-1]
    assert start["type"] == "start"
    assert isinstance(start["pid"], int) and start["python"] == sys.version
    assert start["accelerated"] is False and start["preloaded"] == []
    assert finish == {"type": "finish", "exitstatus": 1}
    assert [r["type"] for r in e2e.records].count("start") == 1


def test_e2e_collect_records(e2e):
    collect = e2e.of("collect")
    # one per test module (not conftest.py, not a class), when its collection report arrives
    assert [c["file"] for c in collect] == ["tests/test_a.py", "tests/test_b.py"]
    assert all(c == {"type": "collect", "file": c["file"], "error": None, "category": ""}
               for c in collect)


def selected_nodeids(record):
    return [n for _, ids in record["files"] for n in ids]


def test_e2e_selected_record(e2e):
    selected = e2e.of("selected")
    assert len(selected) == 1 and set(selected[0]) == {"type", "files"}
    files = selected[0]["files"]
    assert [f for f, _ in files] == ["tests/test_a.py", "tests/test_b.py"]
    assert all(n.startswith(f + "::") for f, ids in files for n in ids)
    assert [len(ids) for _, ids in files] == [10, 4]
    nodeids = selected_nodeids(selected[0])
    assert "tests/test_a.py::test_param[a b [c] \\xe9]" in nodeids  # pytest escapes non-ASCII
    assert "tests/test_a.py::test_param[[x]::y]" in nodeids
    assert "tests/test_b.py::test_settrace_left_installed" in nodeids
    # run order: the reports come in the same order
    reported = []
    for r in e2e.of("report"):
        if r["nodeid"] not in reported:
            reported.append(r["nodeid"])
    assert reported == nodeids
    # after collection, before the first test runs
    kinds = [r["type"] for r in e2e.records]
    assert kinds.index("selected") > max(i for i, k in enumerate(kinds) if k == "collect")
    assert kinds.index("selected") < kinds.index("begin")


def test_e2e_selected_lists_class_tests(e2e):
    expected = [x for x in e2e.collect_only.stdout.splitlines() if "::" in x]
    assert "tests/test_a.py::TestGroup::test_method" in expected
    assert selected_nodeids(e2e.of("selected")[0]) == expected


def test_e2e_begin_records(e2e):
    types_ = [(r["type"], r.get("file")) for r in e2e.records if r["type"] in ("begin", "report")]
    begins = [i for i, (t, _) in enumerate(types_) if t == "begin"]
    assert [types_[i][1] for i in begins] == ["tests/test_a.py", "tests/test_b.py"]
    assert begins[0] == 0
    # every report follows its file's begin
    for t, f in types_[begins[0]:begins[1]]:
        assert f == "tests/test_a.py"
    for t, f in types_[begins[1]:]:
        assert f == "tests/test_b.py"


def test_e2e_report_categories(e2e):
    phases = {}
    for r in e2e.of("report"):
        phases.setdefault(r["nodeid"], {})[r["when"]] = r
    a = "tests/test_a.py::"

    def cat(name, when):
        return phases[a + name][when]["category"]

    # setups and teardowns that passed are not journaled (nothing to count or show)
    assert "setup" not in phases[a + "test_pass"] and cat("test_pass", "call") == "passed"
    assert cat("test_fail", "call") == "failed"
    assert "assert 4 == 5" in phases[a + "test_fail"]["call"]["message"]
    assert cat("test_error", "setup") == "error" and "call" not in phases[a + "test_error"]
    assert "KeyError" in phases[a + "test_error"]["setup"]["message"]
    assert cat("test_xfail", "call") == "xfailed"
    assert cat("test_xpass", "call") == "xpassed"
    assert cat("test_skip", "setup") == "skipped" and "call" not in phases[a + "test_skip"]
    assert cat("test_param[a b [c] \\xe9]", "call") == "passed"
    assert cat("TestGroup::test_method", "call") == "passed"
    for nodeid, by_when in phases.items():
        for report in by_when.values():
            assert report["file"] == nodeid.split("::")[0]
        assert set(by_when) <= {"setup", "call", "teardown"} and by_when
        for r in by_when.values():
            assert r["outcome"] in ("passed", "failed", "skipped")
            assert isinstance(r["duration"], (int, float))
            assert (r["message"] is None) == (r["outcome"] != "failed")
    counts = {}
    for r in e2e.of("report"):
        if r["category"]:
            counts[r["category"]] = counts.get(r["category"], 0) + 1
    assert counts == summary(e2e.plain.stdout)


def test_e2e_edges(e2e):
    edges = merged_edges(e2e.records)
    a, b = edges["tests/test_a.py"], edges["tests/test_b.py"]
    core, extra = "src/mini/core.py", "src/mini/extra.py"
    double = ident(core, "double")
    test_pass = ident("tests/test_a.py", "test_pass")
    value = ident("tests/conftest.py", "value")
    assert a[(None, test_pass)] == 1
    assert a[(None, value)] == 1 and a[(value, double)] == 1
    assert (ident("tests/test_a.py", "test_fail"), double) in a
    assert (ident("tests/conftest.py", "broken"), ident(core, "fail_lookup")) in a
    assert (ident("tests/test_a.py", "test_method"), ident(core, "norm")) in a
    assert a[(ident("tests/test_a.py", "test_param"), double)] == 2
    assert (ident("tests/test_a.py", "test_skip"), double) not in a
    # test_b's own module, not test_a's
    only_b = ident(extra, "only_b")
    assert (ident("tests/test_b.py", "test_uses_extra"), only_b) in b and (only_b, double) in b
    assert "only_b" not in callees(a) and "test_pass" not in callees(b)
    # a thread's target is entered from outside the repository
    in_thread = ident(extra, "in_thread")
    assert b[(None, in_thread)] == 1 and b[(in_thread, double)] == 1
    # the test file's own module code runs at collection, in its collection context
    collect_a = edges[fbkit_core.collect_context("tests/test_a.py")]
    assert (None, ("tests/test_a.py", 1, "<module>")) in collect_a
    assert (None, ("tests/test_a.py", 1, "<module>")) not in a
    assert (None, ("tests/test_b.py", 1, "<module>")) in edges["<collect>tests/test_b.py"]
    assert not any(code[0] == "tests/test_a.py" for _, code in edges["<collect>tests/test_b.py"])
    # import-time code of other modules goes to the import context
    imp = edges[IMPORT_CONTEXT]
    init = ("src/mini/__init__.py", 1, "<module>")
    assert (init, ident(core, "norm")) in imp and (init, ("src/mini/core.py", 1, "<module>")) in imp
    assert (None, ("tests/conftest.py", 1, "<module>")) in imp
    assert (("tests/test_b.py", 1, "<module>"), ("src/mini/extra.py", 1, "<module>")) in imp
    # every identity is repository code, root-relative
    for table in edges.values():
        for caller, callee in table:
            for code in (caller, callee):
                if code is not None:
                    assert code[0].startswith(("src/mini/", "tests/")) and code[1] >= 1


def test_e2e_profile_replaced_or_trace_changed_warns(e2e):
    warnings = {(w["nodeid"], "profile" in w["message"]) for w in e2e.of("warning")}
    assert warnings == {("tests/test_a.py::test_setprofile_none", True),
                        ("tests/test_b.py::test_settrace_left_installed", False)}
    # calls made while the profile function was removed are lost (and the warning says so)
    assert "after_profile_removed" not in callees(merged_edges(e2e.records)["tests/test_a.py"])
    # ...but the agent was restored: test_b was recorded
    assert "only_b" in callees(merged_edges(e2e.records)["tests/test_b.py"])


def test_e2e_child_process(e2e):
    assert e2e.children, "no child journal was written"
    edges = merged_edges(e2e.children)
    assert set(edges) <= {"tests/test_b.py", IMPORT_CONTEXT}
    child_only = ident("src/mini/core.py", "child_only")
    assert edges["tests/test_b.py"][(None, child_only)] == 1
    assert edges["tests/test_b.py"][(child_only, ident("src/mini/core.py", "double"))] == 1


def test_e2e_accelerated_equals_pure_python(e2e, tmp_path):
    accel = os.environ.get("FBKIT_TEST_ACCEL")
    if not accel:
        pytest.skip("set FBKIT_TEST_ACCEL to a compiled _fbkit_accel to test the accelerator")
    proc, records, children = run_pytest(e2e.root, work=tmp_path, accel=accel)
    assert records[0]["accelerated"] is True, records[0]
    assert proc.returncode == e2e.proc.returncode
    assert merged_edges(records) == merged_edges(e2e.records)
    assert merged_edges(children) == merged_edges(e2e.children)

    def outcomes(recs):
        return sorted((r["nodeid"], r["when"], r["category"]) for r in recs if r["type"] == "report")

    assert outcomes(records) == outcomes(e2e.records)
    assert [r for r in records if r["type"] == "warning"] == e2e.of("warning")


# Smaller end-to-end runs, one aspect each.

def test_e2e_collection_error(tmp_path):
    root = make_repo(tmp_path / "r", {
        "pyproject.toml": PYPROJECT,
        "src/mini/__init__.py": "",
        "tests/test_ok.py": "def test_ok():\n    pass\n",
        "tests/test_broken.py": "import mini.does_not_exist\n",
    })
    (tmp_path / "w").mkdir()
    proc, records, _ = run_pytest(root, work=tmp_path / "w")
    collect = {c["file"]: c for c in records if c["type"] == "collect"}
    assert collect["tests/test_ok.py"]["error"] is None
    broken = collect["tests/test_broken.py"]
    assert set(broken) == {"type", "file", "error", "category"}
    assert broken["category"] == "error"
    assert "ModuleNotFoundError" in broken["error"] and "does_not_exist" in broken["error"]
    assert [r for r in records if r["type"] == "selected"] == [
        {"type": "selected", "files": [["tests/test_ok.py", ["tests/test_ok.py::test_ok"]]]}]
    assert not [r for r in records if r["type"] == "begin"]  # pytest stops before running
    assert records[-1] == {"type": "finish", "exitstatus": 2} and proc.returncode == 2


def test_e2e_tests_package_is_not_a_test_file(tmp_path):
    root = make_repo(tmp_path / "r", {
        "pyproject.toml": PYPROJECT,
        "src/mini/__init__.py": "def f():\n    return 1\n",
        "tests/__init__.py": "import mini\n\nX = mini.f()\n",
        "tests/test_p.py": "import mini\n\n\ndef test_p():\n    assert mini.f() == 1\n",
    })
    (tmp_path / "w").mkdir()
    proc, records, _ = run_pytest(root, work=tmp_path / "w")
    assert proc.returncode == 0, proc.stdout
    assert [c["file"] for c in records if c["type"] == "collect"] == ["tests/test_p.py"]
    assert [r["file"] for r in records if r["type"] == "begin"] == ["tests/test_p.py"]
    edges = merged_edges(records)
    assert set(edges) <= {"tests/test_p.py", "<collect>tests/test_p.py", IMPORT_CONTEXT,
                          SESSION_CONTEXT}
    init = ("tests/__init__.py", 1, "<module>")
    assert (init, ("src/mini/__init__.py", 1, "f")) in edges[IMPORT_CONTEXT]
    assert edges["<collect>tests/test_p.py"] == {(None, ("tests/test_p.py", 1, "<module>")): 1}
    assert (("tests/test_p.py", 4, "test_p"), ("src/mini/__init__.py", 1, "f")) in edges[
        "tests/test_p.py"]


SESSION_FIXTURE_REPO = {
    "pyproject.toml": PYPROJECT,
    "src/mini/__init__.py": "def build(n):\n    return list(range(n))\n",
    "tests/conftest.py": """
        import pytest

        import mini


        @pytest.fixture(scope="session")
        def catalogue():
            return mini.build(3)
    """,
    "tests/test_one.py": "def test_one(catalogue):\n    assert catalogue == [0, 1, 2]\n",
    "tests/test_two.py": "def test_two(catalogue):\n    assert len(catalogue) == 3\n",
}


def test_e2e_session_fixture(tmp_path):
    root = make_repo(tmp_path / "r", SESSION_FIXTURE_REPO)
    (tmp_path / "w").mkdir()
    proc, records, _ = run_pytest(root, work=tmp_path / "w")
    assert "INTERNALERROR" not in proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stdout
    context = "<fixture>tests::catalogue"
    uses = sorted((r["file"], r["context"]) for r in records if r["type"] == "uses")
    assert uses == [("tests/test_one.py", context), ("tests/test_two.py", context)]
    edges = merged_edges(records)
    fixture = ident("tests/conftest.py", "catalogue", SESSION_FIXTURE_REPO)
    assert fixture == ("tests/conftest.py", 6, "catalogue")
    build = ident("src/mini/__init__.py", "build", SESSION_FIXTURE_REPO)
    assert edges[context] == {(None, fixture): 1, (fixture, build): 1}
    assert "build" not in callees(edges.get("tests/test_one.py", {}))


def test_e2e_surrogate_in_failure_message(tmp_path):
    root = make_repo(tmp_path / "r", {
        "pyproject.toml": PYPROJECT,
        "src/mini/__init__.py": "",
        "tests/test_s.py": """
            import os


            def test_fsdecoded_name():
                assert os.fsdecode(b"caf\\xff") == "cafe"


            def test_after():
                pass
        """,
    })
    (tmp_path / "w").mkdir()
    proc, records, _ = run_pytest(root, work=tmp_path / "w")
    assert "INTERNALERROR" not in proc.stdout + proc.stderr
    assert proc.returncode == 1
    reports = {(r["nodeid"].split("::")[1], r["when"]): r for r in records
               if r["type"] == "report"}
    failed = reports[("test_fsdecoded_name", "call")]
    assert failed["category"] == "failed" and "caf" in failed["message"]
    assert reports[("test_after", "call")]["category"] == "passed"
    assert records[-1] == {"type": "finish", "exitstatus": 1}


NODE_ID_REPO = {
    "pyproject.toml": PYPROJECT,
    "src/mini/__init__.py": "def f():\n    return 1\n",
    "tests/test_a.py": """
        import mini


        def test_x():
            assert mini.f() == 1


        def test_y():
            pass


        class TestK:
            def test_m(self):
                pass

            def test_n(self):
                assert mini.f() == 1
    """,
}


def test_e2e_selected_by_node_id(tmp_path):
    root = make_repo(tmp_path / "r", NODE_ID_REPO)
    (tmp_path / "w").mkdir()
    chosen = ["tests/test_a.py::TestK::test_n", "tests/test_a.py::test_x"]
    proc, records, _ = run_pytest(root, chosen, work=tmp_path / "w")
    assert proc.returncode == 0, proc.stdout
    assert [r for r in records if r["type"] == "selected"] == [
        {"type": "selected", "files": [["tests/test_a.py", chosen]]}]
    # pytest (7.x) sends no collection report for a module reached by node id unless its
    # collection fails, so a "collect" record is optional; "selected" and "begin" are not
    collect = [r for r in records if r["type"] == "collect"]
    assert collect in ([], [{"type": "collect", "file": "tests/test_a.py", "error": None,
                             "category": ""}])
    kinds = [r["type"] for r in records]
    assert kinds.count("begin") == 1
    assert kinds.index("selected") < kinds.index("begin") < kinds.index("report")
    assert [r["file"] for r in records if r["type"] == "begin"] == ["tests/test_a.py"]
    reports = [r for r in records if r["type"] == "report"]
    assert {r["file"] for r in reports} == {"tests/test_a.py"}
    assert sorted({r["nodeid"] for r in reports}) == sorted(chosen)
    # the collection context was left: the module code counts at collection, the tests in
    # the file's own context
    edges = merged_edges(records)
    module = ("tests/test_a.py", 1, "<module>")
    f = ident("src/mini/__init__.py", "f", NODE_ID_REPO)
    test_k = ("tests/test_a.py", 12, "TestK")  # the class body runs at import too
    assert edges["<collect>tests/test_a.py"] == {(None, module): 1, (module, test_k): 1}
    assert edges["tests/test_a.py"] == {
        (None, ident("tests/test_a.py", "test_x", NODE_ID_REPO)): 1,
        (ident("tests/test_a.py", "test_x", NODE_ID_REPO), f): 1,
        (None, ident("tests/test_a.py", "test_n", NODE_ID_REPO)): 1,
        (ident("tests/test_a.py", "test_n", NODE_ID_REPO), f): 1}


UNITTEST_REPO = {
    "pyproject.toml": PYPROJECT,
    "src/mini/__init__.py": "def f():\n    return 1\n",
    "tests/test_ok.py": "def test_ok():\n    pass\n",
    "tests/test_u.py": """
        import unittest

        import mini


        class TestCaseU(unittest.TestCase):
            def test_one(self):
                self.assertEqual(mini.f(), 1)

            def test_two(self):
                pass


        class TestPlain:
            def test_m(self):
                pass


        def test_f():
            pass


        def test_skipme():
            pass
    """,
}


def test_e2e_selected_lists_unittest_tests_after_deselection(tmp_path):
    root = make_repo(tmp_path / "r", UNITTEST_REPO)
    (tmp_path / "w").mkdir()
    args = ["-k", "not skipme"]
    plain, _, _ = run_pytest(root, ["--collect-only", "-q"] + args, traced=False)
    expected = [x for x in plain.stdout.splitlines() if "::" in x]
    assert "tests/test_u.py::TestCaseU::test_one" in expected
    assert "tests/test_u.py::test_skipme" not in expected
    proc, records, _ = run_pytest(root, args, work=tmp_path / "w")
    assert proc.returncode == 0, proc.stdout
    selected = [r for r in records if r["type"] == "selected"]
    assert len(selected) == 1 and selected_nodeids(selected[0]) == expected
    assert [f for f, _ in selected[0]["files"]] == ["tests/test_ok.py", "tests/test_u.py"]
    # one collect record per test module: classes are collected too, but are no modules
    assert [r["file"] for r in records if r["type"] == "collect"] == [
        "tests/test_ok.py", "tests/test_u.py"]
    reports = {r["nodeid"]: r["file"] for r in records if r["type"] == "report"}
    assert sorted(reports) == sorted(expected)
    assert all(file == nodeid.split("::")[0] for nodeid, file in reports.items())
    test_one = ident("tests/test_u.py", "test_one", UNITTEST_REPO)
    edges = merged_edges(records)["tests/test_u.py"]
    assert edges[(test_one, ident("src/mini/__init__.py", "f", UNITTEST_REPO))] == 1


def test_e2e_rootdir_differs_from_cwd(tmp_path):
    root = make_repo(tmp_path / "r", {
        "src/mini/__init__.py": "",
        "tests/test_a.py": "def test_x():\n    pass\n",
    })
    (tmp_path / "w").mkdir()
    proc, records, _ = run_pytest(root, ["--rootdir=tests", "tests/test_a.py"],
                                  work=tmp_path / "w")
    assert proc.returncode == 0, proc.stdout
    assert {r["file"] for r in records if r["type"] == "report"} == {"tests/test_a.py"}
    kinds = [(r["type"], r.get("file")) for r in records if r["type"] in ("collect", "begin")]
    assert kinds == [("collect", "tests/test_a.py"), ("begin", "tests/test_a.py")]
    # node ids are relative to pytest's rootdir; files to the repository root
    selected = [r for r in records if r["type"] == "selected"]
    assert selected == [{"type": "selected", "files": [["tests/test_a.py", ["test_a.py::test_x"]]]}]
    edges = merged_edges(records)
    assert (None, ("tests/test_a.py", 1, "test_x")) in edges["tests/test_a.py"]
    assert (None, ("tests/test_a.py", 1, "<module>")) in edges["<collect>tests/test_a.py"]


def _run_with_sitecustomize(tree, flag, roots):
    """VALUE of module m in `tree`, imported by a fresh interpreter whose sitecustomize is the
    agent's, with outcome runs' bytecode rule on or off."""
    agent_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=agent_dir + ":" + str(tree), PYTHONDONTWRITEBYTECODE="1",
               FBKIT_TRACE_OWN_BYTECODE_ONLY=flag, FBKIT_TRACE_ROOT=roots)
    env.pop("FBKIT_TRACE_ROLE", None)
    out = subprocess.run([sys.executable, "-c", "import json, m; print(m.VALUE, json.__cached__)"],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    return int(out[0]), out[1]


def test_outcome_runs_read_no_bytecode_beside_the_work_copys_sources(tmp_path):
    import py_compile
    import importlib.util
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "m.py").write_text("VALUE = 2\n")
    py_compile.compile(str(tree / "m.py"), cfile=importlib.util.cache_from_source(str(tree / "m.py")),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    (tree / "m.py").write_text("VALUE = 1\n")  # the .pyc no longer matches; unchecked, it runs
    assert _run_with_sitecustomize(tree, "0", str(tree))[0] == 2
    value, json_cached = _run_with_sitecustomize(tree, "1", str(tree))
    assert value == 1
    # The standard library keeps its own cache.
    assert json_cached == importlib.util.cache_from_source(json.__file__)
    # A tree that is no installed package is untrusted even when fbkit names no root.
    assert _run_with_sitecustomize(tree, "1", "")[0] == 1


def test_a_helper_counts_as_decorated_only_by_its_top_level_def(tmp_path):
    # The package's own wrapper may stand for a helper its file decorates; a nested def of
    # the same name elsewhere in the file is another object and allows nothing.
    import fbkit_agent
    nested = tmp_path / "nested_helpers.py"
    nested.write_text(textwrap.dedent("""\
        import functools

        def close(a, b):
            return abs(a - b) < 1e-9

        def factory(f):
            @functools.wraps(f)
            def close(*args):
                return f(*args)
            return close
        """))
    top = tmp_path / "top_helpers.py"
    top.write_text(textwrap.dedent("""\
        import functools

        try:
            @functools.lru_cache(None)
            def close(a, b):
                return abs(a - b) < 1e-9
        except ImportError:
            pass
        """))
    assert not fbkit_agent._decorated([str(nested)], "close")
    assert fbkit_agent._decorated([str(top)], "close")


def test_an_installed_package_inside_the_stdlib_directory_is_not_the_stdlib(monkeypatch, tmp_path):
    # An interpreter without a venv (pyenv's, python.org's) keeps site-packages inside its
    # stdlib directory: pytest-asyncio's runtest there is a plugin's, and standing between
    # pytest's frames it is no stdlib function swallowing the call (issue 65: every async
    # test was flagged).
    import fbkit_agent
    stdlib = tmp_path / "lib" / "python3.11"
    site = stdlib / "site-packages"
    (site / "pytest_asyncio").mkdir(parents=True)
    (stdlib / "asyncio").mkdir()
    monkeypatch.setattr(fbkit_agent, "_stdlib_dirs", (str(stdlib),))
    monkeypatch.setattr(fbkit_agent, "_site_dirs", (str(site),))
    assert fbkit_agent._in_stdlib(str(stdlib / "asyncio" / "base_events.py"))
    assert not fbkit_agent._in_stdlib(str(site / "pytest_asyncio" / "plugin.py"))
    plugin = site / "pytest_asyncio" / "plugin.py"
    plugin.write_text("def runtest(self):\n    return 1\n")
    code = compile(plugin.read_text(), str(plugin), "exec")
    runtest = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    assert not fbkit_agent._genuine_stdlib(runtest)
    real = stdlib / "asyncio" / "runners.py"
    real.write_text("def run(main):\n    return main\n")
    code = compile(real.read_text(), str(real), "exec")
    run = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    assert fbkit_agent._genuine_stdlib(run)


def test_a_doctest_counts_as_its_files_only_when_the_file_holds_its_docstring(tmp_path):
    import fbkit_agent
    test_file = tmp_path / "test_d.py"
    test_file.write_text('"""Doc.\n\n>>> 1 + 1\n2\n"""\n\ndef f():\n    """\n    >>> f()\n    """\n')
    item = types.SimpleNamespace(path=test_file, dtest=types.SimpleNamespace(
        filename=str(test_file), docstring="Doc.\n\n>>> 1 + 1\n2\n"))
    assert fbkit_agent._doctest_from_file(item)
    item.dtest.docstring = "\n    >>> f()\n    "
    assert fbkit_agent._doctest_from_file(item)
    item.dtest.docstring = "Doc.\n\n>>> 1 + 1\n3\n"  # examples the file does not hold
    assert not fbkit_agent._doctest_from_file(item)
    item.dtest.filename = str(tmp_path / "other.py")
    item.dtest.docstring = "Doc.\n\n>>> 1 + 1\n2\n"
    assert not fbkit_agent._doctest_from_file(item)


_HELPERS_HEAD = '''\
import abc
import dataclasses
import enum
import functools
import typing

TOLERANCE = 1e-9


def close(a, b, tol=TOLERANCE):
    return abs(a - b) <= tol

'''

_HONEST_CLASSES = {
    "plain": "class Approx:\n    TOL = 1e-9\n\n    def __init__(self, x, tol=TOLERANCE):\n        self.x, self.tol = x, tol\n\n    def __eq__(self, o):\n        return close(o, self.x, self.tol)\n",
    "dataclass": "@dataclasses.dataclass\nclass Approx:\n    x: float\n    tol: float = TOLERANCE\n\n    def __eq__(self, o):\n        return close(o, self.x, self.tol)\n",
    "frozen": "@dataclasses.dataclass(frozen=True, order=True)\nclass Approx:\n    x: float\n    tol: float = 1e-9\n",
    "namedtuple": "class Approx(typing.NamedTuple):\n    x: float\n    tol: float = TOLERANCE\n\n    def __eq__(self, o):\n        return close(o, self.x, self.tol)\n",
    "total_ordering": "@functools.total_ordering\nclass Approx:\n    def __init__(self, x):\n        self.x = x\n\n    def __eq__(self, o):\n        return close(o, self.x)\n\n    def __lt__(self, o):\n        return self.x < o\n",
    "slots_abc": "class Approx(abc.ABC):\n    __slots__ = ('x',)\n\n    def __init__(self, x):\n        self.x = x\n",
    "enum": "class Approx(enum.Enum):\n    FINE = 1e-9\n    ROUGH = 1e-3\n",
}


def _helper_class(tmp_path, source, monkeypatch):
    """The class Approx of a helper module written from `source`, loaded, with its file."""
    import importlib
    import fbkit_agent
    path = tmp_path / "fbkit_test_helpers_mod.py"
    path.write_text(_HELPERS_HEAD + source)
    monkeypatch.setenv("FBKIT_TRACE_ROOT", str(tmp_path))
    monkeypatch.syspath_prepend(str(tmp_path))
    for cache in (fbkit_agent._parsed, fbkit_agent._helper_bindings, fbkit_agent._helper_constants,
                  fbkit_agent._attributes_set_cache, fbkit_agent._class_constants_cache):
        cache.clear()
    sys.modules.pop("fbkit_test_helpers_mod", None)
    module = importlib.import_module("fbkit_test_helpers_mod")
    return module, [str(path)], {os.path.realpath(path)}


@pytest.mark.parametrize("kind", sorted(_HONEST_CLASSES))
def test_helper_classes_the_standard_library_makes_are_the_files_own(tmp_path, monkeypatch, kind):
    # Gold patches were flagged for a dataclass, NamedTuple or total_ordering helper (their
    # makers compile or add functions the file does not hold); each is the file's own class.
    import fbkit_agent
    module, files, paths = _helper_class(tmp_path, _HONEST_CLASSES[kind], monkeypatch)
    assert fbkit_agent._class_own(module.Approx, files, "Approx", paths)


def test_forged_helper_classes_are_not_the_files_own(tmp_path, monkeypatch):
    # Red team s48: a mock in place of a method, a class whose behaviour comes from another
    # base, a dataclass with another default tolerance or a forged __init__, a class
    # constant changed.
    import dataclasses
    import fbkit_agent
    from unittest import mock
    forgeries = {}
    module, files, paths = _helper_class(tmp_path, _HONEST_CLASSES["plain"], monkeypatch)
    genuine = module.Approx
    forgeries["mock __eq__"] = type("Approx", (), dict(vars(genuine), __eq__=mock.MagicMock(return_value=True)))
    yes = type("Yes", (), {"__eq__": lambda self, other: True})
    forgeries["another base"] = type("Approx", (yes,), {"__module__": genuine.__module__})
    forgeries["class constant"] = type("Approx", (), dict(vars(genuine), TOL=1e300))
    forgeries["a C callable"] = type("Approx", (), dict(vars(genuine), __ne__=max))
    for what, forged in forgeries.items():
        assert not fbkit_agent._class_own(forged, files, "Approx", paths), what
    module, files, paths = _helper_class(tmp_path, _HONEST_CLASSES["dataclass"], monkeypatch)
    genuine = module.Approx
    loose = dataclasses.make_dataclass("Approx", [("x", float), ("tol", float, dataclasses.field(default=1e300))],
                                       namespace={"__eq__": genuine.__eq__, "__module__": genuine.__module__})
    assert not fbkit_agent._class_own(loose, files, "Approx", paths), "a looser default tolerance"
    ns = {}
    exec(compile("def __init__(self, x, tol=1e-9):\n    self.x, self.tol = x, 1e300\n", "<string>", "exec"), ns)
    forged_init = type("Approx", (), dict(vars(genuine), __init__=ns["__init__"]))
    assert not fbkit_agent._class_own(forged_init, files, "Approx", paths), "a forged __init__"


def test_a_helper_modules_literal_is_what_its_file_writes(tmp_path, monkeypatch):
    # Red team s48: the library set the helper module's TOLERANCE to 1e300 before the tests
    # were collected, and rebuilt close with it as its default.
    import fbkit_agent
    module, files, paths = _helper_class(tmp_path, _HONEST_CLASSES["plain"], monkeypatch)
    found = []
    monkeypatch.setattr(fbkit_agent, "_integrity", lambda message, flush=False: found.append(message))
    fbkit_agent._check_constants("fbkit_test_helpers_mod.py", module)
    assert found == []
    module.TOLERANCE = 1e300
    fbkit_agent._check_constants("fbkit_test_helpers_mod.py", module)
    assert found and "TOLERANCE" in found[0]
    rebuilt = types.FunctionType(module.close.__code__, dict(vars(module)), "close", (1e-9,))
    assert not fbkit_agent._globals_from_files(rebuilt, paths), "a copy of its namespace"
    assert fbkit_agent._globals_from_files(module.close, paths)


def test_a_helper_modules_own_definitions_are_its_files(tmp_path, monkeypatch):
    # Red team s48: close forged in the helper's own namespace, reached by a test only
    # through the genuine close_pair.
    import fbkit_agent
    module, files, paths = _helper_class(tmp_path, _HONEST_CLASSES["dataclass"], monkeypatch)
    found = []
    monkeypatch.setattr(fbkit_agent, "_integrity", lambda message, flush=False: found.append(message))
    fbkit_agent._check_own_definitions("fbkit_test_helpers_mod.py", module)
    assert found == []
    module.close = lambda *a, **k: True
    fbkit_agent._check_own_definitions("fbkit_test_helpers_mod.py", module)
    assert found == ["fbkit_test_helpers_mod.py's close is not that file's"]


def test_the_stdlib_the_tests_use_is_checked_but_not_its_settings(monkeypatch):
    # Red team s48: math.isclose made always true by the library. Process hooks and how
    # warnings are shown are settings (pytest's catch_warnings swaps them around the session's
    # end; a CLI library installs an excepthook): not compared.
    import math
    import warnings
    import fbkit_agent
    state = fbkit_agent._stdlib_state({"math": math, "sys": sys, "warnings": warnings})
    labels = {label for _, _, _, label in state}
    assert "math.isclose" in labels and "warnings.warn" in labels
    assert "sys.excepthook" not in labels and "warnings._showwarnmsg_impl" not in labels
    monkeypatch.setattr(fbkit_agent, "_stdlib_at_start", state)
    found = []
    monkeypatch.setattr(fbkit_agent, "_integrity", lambda message, flush=False: found.append(message))
    fbkit_agent._check_stdlib_used()
    assert found == []
    monkeypatch.setattr(sys, "excepthook", lambda *a: None)
    monkeypatch.setattr(math, "isclose", lambda *a, **k: True)
    fbkit_agent._check_stdlib_used()
    assert found == ["the standard library's math.isclose was replaced while the tests ran"]


def test_an_installed_function_stands_for_a_stdlib_one_only_under_its_own_name():
    # Red team s48 round 2: pytest's saferepr (truthy for any pair) as math.isclose.
    import fbkit_agent
    from _pytest._io.saferepr import saferepr
    assert not fbkit_agent._patched_by_installed_code(saferepr, "isclose")
    assert fbkit_agent._patched_by_installed_code(saferepr, "saferepr")
    assert not fbkit_agent._patched_by_installed_code(lambda *a, **k: True, "isclose")


def test_a_unittest_test_that_raises_should_stop_unfailed_is_named(monkeypatch):
    # Red team s48 round 2: unittest counts a test method that raised _ShouldStop as a pass.
    import unittest
    import unittest.case
    import fbkit_agent
    found = []
    monkeypatch.setattr(fbkit_agent, "_integrity", lambda message, flush=False: found.append(message))
    monkeypatch.setattr(unittest.case.TestCase, "_callTestMethod", unittest.case.TestCase._callTestMethod)
    fbkit_agent._watch_unittest_stop()

    class Case(unittest.TestCase):
        def test_stops(self):
            raise unittest.case._ShouldStop()

        def test_fails(self):
            self.assertEqual(1, 2)

    result = unittest.TestResult()
    Case("test_stops").run(result)
    assert result.wasSuccessful()  # what unittest says
    assert len(found) == 1 and "test_stops raised unittest's _ShouldStop" in found[0]
    Case("test_fails").run(result)
    assert len(found) == 1 and len(result.failures) == 1


def test_a_helper_classs_methods_run_with_their_namespace_and_written_defaults(tmp_path, monkeypatch):
    # Red team s48 round 2: __eq__'s own code given a namespace whose close is always true;
    # __init__ rebuilt with a looser default tolerance.
    import fbkit_agent
    module, files, paths = _helper_class(tmp_path, _HONEST_CLASSES["plain"], monkeypatch)
    genuine = module.Approx
    eq, init = vars(genuine)["__eq__"], vars(genuine)["__init__"]
    namespace = dict(vars(module), close=lambda *a, **k: True)
    forged_eq = types.FunctionType(eq.__code__, namespace, "__eq__")
    forged_init = types.FunctionType(init.__code__, vars(module), "__init__", (1e300,))
    for what, key, value in (("namespace", "__eq__", forged_eq), ("defaults", "__init__", forged_init)):
        forged = type("Approx", (), dict(vars(genuine), **{key: value}))
        assert not fbkit_agent._class_own(forged, files, "Approx", paths), what
    assert fbkit_agent._class_own(genuine, files, "Approx", paths)
    # Its literal TOL changed after collection is a change in place; a counter the file sets
    # is not.
    before = fbkit_agent._file_objects_shape(module, "fbkit_test_helpers_mod.py")
    monkeypatch.setattr(genuine, "TOL", 1e300)
    after = fbkit_agent._file_objects_shape(module, "fbkit_test_helpers_mod.py")
    assert fbkit_agent._shape_changed(before["Approx"], after["Approx"])


def _stdlib_findings(monkeypatch, modules, change):
    """What _check_stdlib_used finds once `change()` ran, with `modules` snapshotted first."""
    import fbkit_agent
    state = fbkit_agent._stdlib_state(modules)
    monkeypatch.setattr(fbkit_agent, "_stdlib_at_start", state)
    monkeypatch.setattr(fbkit_agent, "_stdlib_extras_at_start", fbkit_agent._stdlib_extras(modules, state))
    found = []
    monkeypatch.setattr(fbkit_agent, "_integrity", lambda message, flush=False: found.append(message))
    fbkit_agent._check_stdlib_used()
    assert found == []  # nothing changed yet
    change()
    fbkit_agent._check_stdlib_used()
    return found


def test_stdlib_code_changed_in_place_is_found(monkeypatch):
    # Red team s49 round 3: assertAlmostEqual's defaults and assertEqual's code replaced in
    # place, the function objects kept.
    import unittest
    case = unittest.TestCase

    def change():
        monkeypatch.setattr(case.assertAlmostEqual, "__defaults__", (-400, None, None))
        monkeypatch.setattr(case.assertEqual, "__code__", (lambda self, a, b, msg=None: None).__code__)

    found = _stdlib_findings(monkeypatch, {"unittest": unittest}, change)
    assert sorted(found) == [
        "the standard library's unittest.TestCase.assertAlmostEqual was changed while the tests "
        "ran (its code, in place)",
        "the standard library's unittest.TestCase.assertEqual was changed while the tests ran "
        "(its code, in place)"]


def test_code_added_to_a_stdlib_class_is_found_not_its_data(monkeypatch):
    # Red team s49 round 3: a __getattribute__ added to unittest.TestCase made every assert a
    # no-op. copyreg caches __slotnames__ (data) on classes it copies: no finding.
    import unittest

    def change():
        monkeypatch.setattr(unittest.TestCase, "__getattribute__",
                            lambda self, name: object.__getattribute__(self, name), raising=False)
        monkeypatch.setattr(unittest.TestCase, "__slotnames__", [], raising=False)

    found = _stdlib_findings(monkeypatch, {"unittest": unittest}, change)
    assert found == ["the standard library's unittest.TestCase gained __getattribute__ while "
                     "the tests ran"]


def test_a_stdlib_module_given_another_type_or_entry_is_found(monkeypatch):
    # Red team s49 round 3: math's __class__ set to a ModuleType subclass serving a forged
    # isclose; then a proxy put in sys.modules["math"].
    import math

    class Forging(types.ModuleType):
        pass

    def change():
        monkeypatch.setattr(math, "__class__", Forging)
    found = _stdlib_findings(monkeypatch, {"math": math}, change)
    assert found == ["the standard library's module math was replaced while the tests ran"]
    monkeypatch.undo()
    found = _stdlib_findings(monkeypatch, {"math": math},
                             lambda: monkeypatch.setitem(sys.modules, "math", types.SimpleNamespace()))
    assert found == ["the standard library's module math was replaced while the tests ran"]


def test_a_stdlib_value_of_a_type_made_later_is_found(monkeypatch):
    # Red team s49 round 3: re's cache swapped for a dict subclass whose lookups lie. A value
    # of a type known at the start (or a C type) is no finding.
    import re

    class Lying(dict):
        def get(self, key, default=None):
            return default

    found = _stdlib_findings(monkeypatch, {"re": re},
                             lambda: monkeypatch.setattr(re, "_cache", Lying()))
    assert found == ["the standard library's re._cache holds a %s.%s made while the tests ran"
                     % (__name__, Lying.__qualname__)]
    monkeypatch.undo()
    assert _stdlib_findings(monkeypatch, {"re": re},
                            lambda: monkeypatch.setattr(re, "_cache", {1: 2})) == []


def test_a_grader_modules_stdlib_names_and_bases_are_the_standard_librarys(tmp_path, monkeypatch):
    # Red team s49 round 3: `import math` bound a proxy the library had put in sys.modules;
    # `class T(unittest.TestCase)` derived from a TestCase whose asserts pass. A name bound
    # by two imports (`try: import simplejson as json` ...) is not judged.
    import ast
    import math
    import unittest
    import fbkit_agent
    modules = {"math": math, "unittest": unittest}
    state = fbkit_agent._stdlib_state(modules)
    monkeypatch.setattr(fbkit_agent, "_stdlib_modules_used", modules)
    monkeypatch.setattr(fbkit_agent, "_stdlib_at_start", state)
    source = ("import math\nimport unittest\nfrom math import isclose\n"
              "try:\n    import simplejson as json\nexcept ImportError:\n    import json\n\n"
              "class T(unittest.TestCase):\n    pass\n")
    (tmp_path / "test_m.py").write_text(source)
    monkeypatch.setenv("FBKIT_TRACE_ROOT", str(tmp_path))
    module = types.ModuleType("test_m")

    class Fake(unittest.TestCase):
        pass

    # Round 4: a lenient class put before TestCase (a thread set __bases__ while the module
    # loaded) is a base the statement does not write.
    for forged in (False, True):
        space = {"math": types.SimpleNamespace() if forged else math, "unittest": unittest,
                 "isclose": math.isclose, "json": object(),
                 "T": type("T", (Fake, unittest.TestCase) if forged else (unittest.TestCase,), {})}
        module.__dict__.update(space)
        found = []
        monkeypatch.setattr(fbkit_agent, "_integrity", lambda message, flush=False: found.append(message))
        fbkit_agent._helper_bindings.clear()
        fbkit_agent._check_stdlib_bindings("test_m.py", module, ast.parse(source))
        assert found == ([] if not forged else [
            "test_m.py's math is not the standard library's math",
            "test_m.py's class T has bases its class statement does not write: " + Fake.__qualname__])


def test_pytest_classes_public_data_is_machinery():
    # Red team s49 round 3: approx's default tolerances set to 1e300 made every approx true.
    import fbkit_agent
    names = {name for _, _, _, name in fbkit_agent._machinery_entries()}
    scalar = type(pytest.approx(1.0))  # ApproxScalar, in _pytest.python_api or _pytest.approx
    assert scalar.__module__ + ".ApproxScalar.DEFAULT_RELATIVE_TOLERANCE" in names
    assert not any(n.endswith("._config") for n in names)  # pytest's own state: private


def test_l2_check_names_the_originals_sources_agent_code_opens(tmp_path):
    # Red team s49 round 3: agent_code compiled and ran the original's modules from their
    # sources under its own file names. Data files and others' reads are not its.
    import fbkit_agent
    site, original = tmp_path / "site", tmp_path / "presolved" / "shapes"
    (site / "agent_code").mkdir(parents=True)
    original.mkdir(parents=True)
    (original / "codec.py").write_text("X = 1\n")
    (original / "data.json").write_text("{}\n")
    check = fbkit_agent._L2Check(str(site), [str(original)])
    reader = site / "agent_code" / "borrow.py"
    reader.write_text("def read(path):\n    with open(path) as f:\n        return f.read()\n")
    space = {}
    exec(compile(reader.read_text(), str(reader), "exec"), space)
    hook = check.audit
    hook("open", (str(original / "codec.py"), "r", 0))  # from this test: not agent_code's
    assert check.read == set()
    sys.addaudithook(lambda e, a: hook(e, a) if hook is not None else None)
    space["read"](str(original / "data.json"))
    space["read"](str(original / "codec.py"))
    hook = None
    assert check.read == {os.path.realpath(str(original / "codec.py"))}


def test_a_module_given_another_type_is_named_before_the_call(monkeypatch):
    # Red team s49 round 3: pytest's, math's and a helper module's __class__ set to a
    # ModuleType subclass whose __getattribute__ served forged attributes; named once each.
    import fbkit_agent
    helper, test_module = types.ModuleType("helpers"), types.ModuleType("test_x")
    import re
    fake = types.ModuleType("_pytest.fake")
    fake.re = re
    monkeypatch.setattr(fbkit_agent, "_module_types_at_start", {"pytest": (pytest, type(pytest)),
                                                               "_pytest.fake": (fake, type(fake))})
    monkeypatch.setattr(fbkit_agent, "_pytest_names_at_start", {"pytest": dict(vars(pytest)),
                                                               "_pytest.fake": dict(vars(fake))})
    monkeypatch.setitem(sys.modules, "_pytest.fake", fake)
    monkeypatch.setattr(fbkit_agent, "_stdlib_extras_at_start", {})
    monkeypatch.setattr(fbkit_agent, "_namespaces", {"tests/helpers.py": (helper, {}, set(), True)})
    monkeypatch.setattr(fbkit_agent, "_module_types_flagged", set())
    found = []
    monkeypatch.setattr(fbkit_agent, "_integrity", lambda message, flush=False: found.append(message))
    item = types.SimpleNamespace(module=test_module, nodeid="tests/test_x.py::test_a")
    fbkit_agent._check_module_types(item)
    assert found == []

    class Serving(types.ModuleType):
        pass

    helper.__class__ = Serving
    test_module.__class__ = Serving
    fbkit_agent._check_module_types(item)
    fbkit_agent._check_module_types(item)
    assert found == ["the module tests/helpers.py was given another type while the tests ran (Serving)",
                     "the module tests/test_x.py was given another type while the tests ran (Serving)"]
    # Round 4: a builtin's name added to a pytest module, a module name of it rebound, the
    # module itself replaced in sys.modules.
    found.clear()
    fake.abs = lambda x: 0
    fake.re = types.SimpleNamespace(search=lambda *a: True)
    monkeypatch.setitem(sys.modules, "_pytest.fake", types.ModuleType("_pytest.fake"))
    fbkit_agent._check_module_types(item)
    fbkit_agent._check_module_types(item)
    assert sorted(found) == [
        "pytest's _pytest.fake.re (the module re) was replaced while the tests ran",
        "pytest's module _pytest.fake gained abs, a builtin's name, while the tests ran",
        "the module _pytest.fake was replaced in sys.modules while the tests ran"]


def test_a_class_claiming_a_module_loaded_at_start_is_no_installed_patch():
    # Red team s49 round 4: a class naming itself _pytest.python_api's, holding pytest's own
    # __init__, put in math.isclose's place (any call is a truthy instance).
    import fbkit_agent
    scalar = type(pytest.approx(1.0))  # in _pytest.python_api, or _pytest.approx (pytest 9)
    forged = type("isclose", (), {"__init__": scalar.__init__, "__module__": scalar.__module__})
    assert not fbkit_agent._patched_by_installed_code(forged, "isclose")


def test_code_a_closure_cell_holds_is_part_of_a_functions_innards():
    # Red team s49 round 4: the function a stdlib decorator's wrapper calls, set in its cell.
    import fbkit_agent

    def make(inner):
        count = 0

        def wrapper(*a):
            nonlocal count
            count += 1
            return inner(*a)
        return wrapper

    wrapped = make(lambda x: x > 0)
    then = {"w": fbkit_agent._innards(wrapped)}
    wrapped(1)  # the counter (data) changes: no finding
    assert fbkit_agent._innards_changed({"w": wrapped}, then) == []
    cell = wrapped.__closure__[[c for c in wrapped.__code__.co_freevars].index("inner")]
    cell.cell_contents = lambda x: True
    assert fbkit_agent._innards_changed({"w": wrapped}, then) == ["w"]


def test_the_stdlib_snapshot_takes_the_imported_packages_loaded_submodules(tmp_path, monkeypatch):
    # Red team s49 round 4: unittest.case._addError and re._compiler.compile replaced; the
    # tests import only unittest and pytest's raises uses re.
    import unittest.case
    import fbkit_agent
    (tmp_path / "test_u.py").write_text("import unittest\n")
    monkeypatch.setenv("FBKIT_TRACE_ROOT", str(tmp_path))
    monkeypatch.setattr(fbkit_agent, "_PROTECTED", {"test_u.py"})
    used = fbkit_agent._stdlib_used()
    assert "unittest.case" in used
    assert any(name.startswith("re.") for name in used)  # re._compiler (3.11+)
    labels = {label for _, _, _, label in fbkit_agent._stdlib_state(used)}
    assert "unittest.case._addError" in labels and "unittest.case._Outcome" in labels


def test_bases_a_namedtuple_or_generic_statement_gives_are_written():
    # HonestE2E R6: `class Pair(NamedTuple)` has the base tuple (NamedTuple is a function whose
    # __mro_entries__ gives it), `class Box(Generic[T])` has Generic: neither is flagged.
    import ast
    import typing
    import fbkit_agent
    source = "class Pair(NamedTuple):\n    x: int\n\nclass Box(Generic[T]):\n    pass\n"
    T = typing.TypeVar("T")

    class Pair(typing.NamedTuple):
        x: int

    class Box(typing.Generic[T]):
        pass

    space = {"NamedTuple": typing.NamedTuple, "Generic": typing.Generic, "T": T}
    tree = ast.parse(source)
    assert fbkit_agent._bases_not_written(Pair, tree.body[0], space) == set()
    assert fbkit_agent._bases_not_written(Box, tree.body[1], space) == set()
