"""A deliberately plain reference tracer (the FeatureBench way): loaded into one pytest
process per test file, it records with a pure-Python sys.setprofile hook every call whose
callee is repository code, from the nearest repository frame (None when there is none),
from plugin import to the end of the session, and writes [[caller, callee, count], ...] to
$REF_OUT. Used by bench/trace_recall.py; independent of fbkit's agent."""
import json
import os
import sys
import threading

ROOT = os.path.realpath(os.environ["REF_ROOT"]) + "/"
CWD = os.getcwd()
_info = {}
_edges = {}


def _id(code):
    r = _info.get(code, False)
    if r is False:
        f = code.co_filename
        real = not f.startswith("<")  # "<frozen abc>", "<string>": no file
        f = os.path.realpath(f if os.path.isabs(f) else os.path.join(CWD, f))
        ok = real and f.startswith(ROOT) and "/site-packages/" not in f and "/dist-packages/" not in f
        r = _info[code] = (f[len(ROOT):], code.co_firstlineno, code.co_name) if ok else None
    return r


def _profile(frame, event, arg):
    if event != "call":
        return
    callee = _id(frame.f_code)
    if callee is None:
        return
    f = frame.f_back
    while f is not None and _id(f.f_code) is None:
        f = f.f_back
    key = (_id(f.f_code) if f is not None else None, callee)
    _edges[key] = _edges.get(key, 0) + 1


sys.setprofile(_profile)
threading.setprofile(_profile)


def pytest_sessionfinish(session, exitstatus):
    sys.setprofile(None)
    with open(os.environ["REF_OUT"], "w") as out:
        json.dump([[a, b, n] for (a, b), n in _edges.items()], out)
