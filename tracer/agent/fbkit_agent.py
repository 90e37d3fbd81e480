"""fbkit's tracing agent as a pytest plugin (`-p fbkit_agent`): switches the recording
context as pytest collects and runs each test file, and journals every report. The
recording itself and the journal format are in fbkit_core."""

import os
import sys

import pytest

from fbkit_core import (IMPORT_CONTEXT, SESSION_CONTEXT, Agent, Journal,  # noqa: F401
                        Recorder, collect_context, env_list, fixture_context,
                        load_accelerator, preloaded)

_collecting = {}  # nodeid of a test module being collected -> its file

# Hooks through which a conftest or plugin can change what is collected or how outcomes
# are reported; implementations in repository code are journaled (graders check them).
_WATCHED_HOOKS = (
    "pytest_addoption", "pytest_configure", "pytest_collection", "pytest_collect_file",
    "pytest_collection_modifyitems", "pytest_deselected", "pytest_generate_tests",
    "pytest_ignore_collect", "pytest_itemcollected", "pytest_pycollect_makeitem",
    "pytest_pycollect_makemodule", "pytest_report_teststatus", "pytest_runtest_call",
    "pytest_runtest_logreport", "pytest_runtest_makereport", "pytest_runtest_protocol",
    "pytest_runtest_setup", "pytest_runtest_teardown", "pytest_sessionfinish",
    "pytest_unconfigure",
)


def _relpath(path):
    return _agent.recorder.relpath(str(path)) if _agent else None


def _start_from_environment():
    """Starts recording as soon as pytest imports this plugin (before conftests load)."""
    journal = os.environ.get("FBKIT_TRACE_JOURNAL")
    root = os.environ.get("FBKIT_TRACE_ROOT")
    if not journal or not root:
        return None
    agent = Agent(root, journal, env_list("FBKIT_TRACE_EXCLUDE"),
                  os.environ.get("FBKIT_TRACE_ACCEL"))
    agent.start(preloaded(agent.recorder))
    return agent


def pytest_configure(config):
    if _agent is not None:
        _agent.config = config


def pytest_collectstart(collector):
    # Test modules only (pytest 7's Package is a Module too: its __init__.py is no test file).
    if (_agent is None or not isinstance(collector, pytest.Module)
            or isinstance(collector, pytest.Package)):
        return
    rel = _relpath(collector.path)
    if rel is not None:
        _agent.recorder.test_files.add(rel)
        _collecting[collector.nodeid] = rel
        _agent.enter_context(collect_context(rel), rel)


def pytest_collectreport(report):
    if _agent is None:
        return
    rel = _collecting.pop(report.nodeid, None)
    if rel is None:
        return  # not a test module (a directory, a package, a class)
    error = str(report.longrepr)[-4000:] if report.failed else None
    _agent.journal.write({"type": "collect", "file": rel, "error": error,
                          "category": "error" if report.failed else ""})
    _agent.enter_context(SESSION_CONTEXT)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    """The tests that will run (after deselection), per file, in order."""
    if _agent is None:
        return
    _agent.enter_context(SESSION_CONTEXT)
    selected = {}
    for item in session.items:
        rel = _relpath(item.path)
        if rel is not None:
            _agent.file_of[item.nodeid] = rel
            selected.setdefault(rel, []).append(item.nodeid)
    _agent.journal.write({"type": "selected", "files": [[f, ids] for f, ids in selected.items()]})
    _journal_hooks(session.config)


def _journal_hooks(config):
    """Writes which repository files implement the watched hooks."""
    prefix = os.path.realpath(os.environ.get("FBKIT_TRACE_ROOT", "")) + os.sep
    found = set()
    for name in _WATCHED_HOOKS:
        hook = getattr(config.pluginmanager.hook, name, None)
        for impl in (hook.get_hookimpls() if hook is not None else ()):
            code = getattr(impl.function, "__code__", None)
            path = os.path.realpath(code.co_filename) if code is not None else ""
            if path.startswith(prefix):
                found.add((path[len(prefix):], name))
    _agent.journal.write({"type": "hooks", "hooks": sorted(found)})


def _item_file(item):
    rel = _agent.file_of.get(item.nodeid)
    return rel if rel is not None else _relpath(item.path)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _agent is None:
        yield
        return
    rel = _item_file(item)
    _agent.enter_file(rel)
    if rel is not None:
        _agent.note_fixtures(item, rel)
    tracer_before = sys.gettrace()
    yield
    _agent.ensure_installed(item.nodeid)
    if sys.gettrace() is not tracer_before:
        _agent.journal.write({"type": "warning", "nodeid": item.nodeid,
                              "message": "the test changed the trace function (sys.settrace)"})
    _agent.flush_now_and_then()


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    if _agent is None or fixturedef.scope not in ("session", "package"):
        yield
        return
    recorder = _agent.recorder
    saved = recorder.context
    recorder.set_context(fixture_context(fixturedef))
    try:
        yield
    finally:
        recorder.set_context(saved)


def pytest_runtest_logreport(report):
    if _agent is None or (report.passed and report.when != "call"):
        return  # a setup or teardown that passed: nothing to count or show
    category = report.outcome
    status = _agent.config.hook.pytest_report_teststatus(report=report, config=_agent.config)
    if status:
        category = status[0]
    if category == "" and report.when != "call":
        return  # a setup or teardown that passed: nothing to count or show
    message = None
    if report.failed:
        message = str(report.longrepr)[-2000:]
    _agent.journal.write({"type": "report", "nodeid": report.nodeid,
                          "file": _agent.file_of.get(report.nodeid),
                          "when": report.when, "outcome": report.outcome,
                          "category": category, "duration": round(report.duration, 6),
                          "message": message})


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    if _agent is None:
        return
    _agent.stop()
    _agent.flush()
    _agent.journal.flush()
    _journal_hooks(session.config)
    _agent.journal.write({"type": "finish", "exitstatus": int(exitstatus)})
    _agent.journal.close()


_agent = _start_from_environment()
