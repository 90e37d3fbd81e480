"""fbkit's tracing agent as a pytest plugin (`-p fbkit_agent`): switches the recording
context as pytest collects and runs each test file, and journals every report. The
recording itself and the journal format are in fbkit_core."""

import os
import sys

import pytest

from fbkit_core import (IMPORT_CONTEXT, SESSION_CONTEXT, Agent, Journal,  # noqa: F401
                        Recorder, env_list, fixture_context, load_accelerator, preloaded)


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
        _agent.enter_file(rel)


def pytest_collectreport(report):
    if _agent is None or not report.nodeid:
        return
    rel = _relpath(report.fspath) if report.fspath else None
    if rel is None or rel not in _agent.recorder.test_files:
        return  # not a test module (a directory, a package's __init__.py)
    nodeids = [item.nodeid for item in report.result if isinstance(item, pytest.Item)]
    for nodeid in nodeids:
        _agent.file_of[nodeid] = rel
    if report.nodeid.split("::")[0].endswith(".py") and "::" not in report.nodeid:
        error = str(report.longrepr)[-4000:] if report.failed else None
        category = "error" if report.failed else ""
        _agent.journal.write({"type": "collect", "file": rel, "nodeids": nodeids,
                              "error": error, "category": category})
        _agent.enter_file(None)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    if _agent is None:
        return
    selected = {}
    for item in session.items:
        rel = _item_file(item)
        if rel is not None:
            selected[rel] = selected.get(rel, 0) + 1
    _agent.journal.write({"type": "selected", "files": selected})


def _item_file(item):
    rel = _agent.file_of.get(item.nodeid)
    return rel if rel is not None else _relpath(item.path)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _agent is None:
        yield
        return
    rel = _item_file(item)
    _agent.enter_file(rel, running=True)
    if rel is not None:
        _agent.note_fixtures(item, rel)
    tracer_before = sys.gettrace()
    yield
    _agent.ensure_installed(item.nodeid)
    if sys.gettrace() is not tracer_before:
        _agent.journal.write({"type": "warning", "nodeid": item.nodeid,
                              "message": "the test changed the trace function (sys.settrace)"})


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
    if _agent is None:
        return
    category = report.outcome
    status = _agent.config.hook.pytest_report_teststatus(report=report, config=_agent.config)
    if status:
        category = status[0]
    message = None
    if report.failed:
        message = str(report.longrepr)[-2000:]
    _agent.journal.write({"type": "report", "nodeid": report.nodeid,
                          "file": _agent.file_of.get(report.nodeid) or _relpath(report.fspath),
                          "when": report.when, "outcome": report.outcome,
                          "category": category, "duration": round(report.duration, 6),
                          "message": message})


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    if _agent is None:
        return
    _agent.stop()
    _agent.flush()
    _agent.journal.write({"type": "finish", "exitstatus": int(exitstatus)})
    _agent.journal.close()


_agent = _start_from_environment()
