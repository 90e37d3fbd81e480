"""pytest plugin for bench/bench_trace.py: the floor of tracing (see _fbkit_floor.c).

FBKIT_FLOOR=hook     the empty C profile hook from the plugin's import to the session's end
FBKIT_FLOOR=switch   the same, and per test the work any per-file recorder must do: find
                     the test's file and switch the context when it changed
"""
import os
import threading

import pytest

import _fbkit_floor

_mode = os.environ.get("FBKIT_FLOOR", "")
_current = [None]

if _mode in ("hook", "switch"):
    threading.setprofile(_fbkit_floor.thread_start)
    _fbkit_floor.install()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _mode == "switch":
        path = str(item.path)
        if path != _current[0]:
            _current[0] = path
            _fbkit_floor.set_context(path)
    yield
