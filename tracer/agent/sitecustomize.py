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


_fbkit_bootstrap()
_chain_other_sitecustomize()
