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


def _read_key(fbkit_core):
    """The session's key: on the descriptor FBKIT_TRACE_KEY_FD names, read and closed now,
    before any repository code runs, and sealed in the journal's signer (nothing else keeps it)."""
    key_fd = os.environ.pop("FBKIT_TRACE_KEY_FD", "")
    if not key_fd.isdigit():
        return
    chunks = []
    while True:
        chunk = os.read(int(key_fd), 4096)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(int(key_fd))
    fbkit_core.seal_key(b"".join(chunks))


def _main():
    sys.meta_path.insert(0, _FbkitModules)
    import fbkit_core  # sys.path[0] is still this directory

    _read_key(fbkit_core)
    import fbkit_agent

    sys.path[0] = os.getcwd()
    import pytest

    sys.argv[0] = os.path.join(os.path.dirname(pytest.__file__), "__main__.py")
    try:
        code = pytest.main(sys.argv[1:], plugins=[fbkit_agent])
        sys.stdout.flush()
    except BrokenPipeError:  # as pytest's console_main: output piped to a closed reader
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 1
    raise SystemExit(int(code))


# Only as the main script: a worker multiprocessing starts with "spawn" (or "forkserver")
# imports this file again as __mp_main__, and must not run pytest a second time (pytest's
# own __main__ is guarded the same way).
if __name__ == "__main__":
    _main()
