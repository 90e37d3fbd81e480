"""fbkit: traces Python child processes started by a traced test run.

fb-graph trace puts this directory first on PYTHONPATH, so every Python process of the run
imports this module at startup. The pytest process itself (FBKIT_TRACE_ROLE=main) is
traced by the plugin; it marks the environment so that its children are traced here.
Any other sitecustomize on the path is still run."""

import os
import sys


def _chain_other_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    import importlib.machinery
    import importlib.util
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.origin is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


def _fbkit_bootstrap():
    role = os.environ.get("FBKIT_TRACE_ROLE")
    if role == "main":
        os.environ["FBKIT_TRACE_ROLE"] = "child"
    elif role == "child":
        import fbkit_core
        fbkit_core.start_child()


def _no_bytecode_beside_untrusted_sources():
    """Outcome runs (FBKIT_TRACE_OWN_BYTECODE_ONLY=1): bytecode cached beside a source is read
    only in the interpreter's own library and installed packages, which the sandbox mounts
    read-only. Every other source (the work copy, agent_code) is compiled from its text: a
    planted unchecked-hash .pyc would run without its .py. (PYTHONPYCACHEPREFIX does that for
    every module, and so compiles the whole standard library and pytest again in each run.)"""
    if os.environ.get("FBKIT_TRACE_OWN_BYTECODE_ONLY") != "1":
        return
    import site
    import sysconfig
    external = sys.modules.get("_frozen_importlib_external")
    if external is None:
        import importlib._bootstrap_external as external
    trusted = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    trusted.update(getattr(site, "getsitepackages", lambda: [])())
    trusted = tuple(os.path.realpath(p) + os.sep for p in trusted if p)
    untrusted = tuple(os.path.realpath(p) + os.sep for p in (
        os.environ.get("FBKIT_TRACE_ROOT", ""), os.environ.get("FBKIT_TRACE_L2_SITE", "")) if p)
    default = external.cache_from_source

    def cache_from_source(path, debug_override=None, *, optimization=None):
        cached = default(path, debug_override, optimization=optimization)
        where = os.path.realpath(os.path.dirname(os.path.abspath(path))) + os.sep
        if where.startswith(trusted) and not where.startswith(untrusted):
            return cached
        # Where no file can be: procfs makes none, so nothing is read and the source compiles.
        return "/proc/fbkit-no-bytecode" + os.path.abspath(cached)

    external.cache_from_source = cache_from_source


_no_bytecode_beside_untrusted_sources()
_fbkit_bootstrap()
_chain_other_sitecustomize()
