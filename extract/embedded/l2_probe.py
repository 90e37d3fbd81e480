
import importlib, json, os, pkgutil, sys, types


def _under(root, path):
    return bool(path) and os.path.isabs(path) and os.path.realpath(path).startswith(root)


def _defined_in(value):
    """The file `value` was defined in, or None: only real code objects, classes and modules
    say (whatever a module exposes as `__code__` or `__module__` may be anything)."""
    try:
        code = getattr(getattr(value, "__func__", value), "__code__", None)
        if isinstance(code, types.CodeType):
            return code.co_filename
        if isinstance(value, type):
            module = type.__dict__["__module__"].__get__(value)
            path = getattr(sys.modules.get(module) if isinstance(module, str) else None,
                           "__file__", None)
            return path if isinstance(path, str) else None
        if isinstance(value, types.ModuleType):
            path = getattr(value, "__file__", None)
            return path if isinstance(path, str) else None
    except Exception:
        return None
    return None


def _probe(root):
    # Conftests may have imported the original library already: forget it, so that what
    # importing agent_code loads from the repository shows (the process ends after this).
    for name in [n for n, m in sys.modules.items() if _under(root, getattr(m, "__file__", None))]:
        del sys.modules[name]
    before = set(sys.modules)
    try:
        pkg = importlib.import_module("agent_code")
    except BaseException as e:
        return {"error": "%s: %s" % (type(e).__name__, e)}
    mods = [pkg]
    for info in pkgutil.walk_packages(getattr(pkg, "__path__", []), "agent_code."):
        try:
            mods.append(importlib.import_module(info.name))
        except BaseException:
            pass
    modules = [name for name in sorted(set(sys.modules) - before)
               if _under(root, getattr(sys.modules[name], "__file__", None))]
    objects = []
    for mod in mods:
        for attr, value in sorted(vars(mod).items()):
            path = _defined_in(value)
            if _under(root, path):
                objects.append("%s.%s (%s)" % (mod.__name__, attr, os.path.relpath(path, root)))
    return {"modules": modules, "objects": objects}


def pytest_configure(config):
    result = _probe(os.path.realpath(os.environ["FBKIT_PROBE_ROOT"]) + os.sep)
    with open(os.environ["FBKIT_PROBE_OUT"], "w") as f:
        json.dump(result, f)
    sys.stdout.flush()
    os._exit(0)
