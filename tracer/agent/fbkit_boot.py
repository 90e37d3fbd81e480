"""fbkit: starts pytest as `python -m pytest` would, with fbkit's own modules bound to this
directory by name before anything of the repository can load.

fb-graph runs `python AGENT_DIR/fbkit_boot.py ARGS`. The plugin is imported here, from
this directory, and handed to pytest as a plugin object (not named with `-p`, which pytest
resolves through `sys.path`, where the repository root comes first, as with `python -m`):
no module of the repository can stand in for it. A finder first on `sys.meta_path` keeps answering fbkit's module
names from this directory. Then `sys.path[0]` becomes the working directory, as `python -m
pytest` has it, and pytest runs."""

import importlib.machinery
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_OWN = ("fbkit_agent", "fbkit_core")


class _FbkitModules:
    """fbkit's module names resolve to fbkit's files, whatever sys.path holds."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name in _OWN:
            return importlib.machinery.PathFinder.find_spec(name, [_HERE])
        return None


sys.meta_path.insert(0, _FbkitModules)
import fbkit_core  # noqa: E402  (sys.path[0] is still this directory)

# The session's key: on the descriptor FBKIT_TRACE_KEY_FD names, read and closed now, before
# any repository code runs; only fbkit's journal writer keeps it.
_key_fd = os.environ.pop("FBKIT_TRACE_KEY_FD", "")
if _key_fd.isdigit():
    _chunks = []
    while True:
        _chunk = os.read(int(_key_fd), 4096)
        if not _chunk:
            break
        _chunks.append(_chunk)
    os.close(int(_key_fd))
    fbkit_core.SESSION_KEY = b"".join(_chunks)
    del _chunks, _chunk
del _key_fd

import fbkit_agent  # noqa: E402,F401

sys.path[0] = os.getcwd()

import pytest  # noqa: E402

sys.argv[0] = os.path.join(os.path.dirname(pytest.__file__), "__main__.py")
try:
    _code = pytest.main(sys.argv[1:], plugins=[fbkit_agent])
    sys.stdout.flush()
except BrokenPipeError:  # as pytest's console_main: output piped to a closed reader
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    _code = 1
raise SystemExit(int(_code))
