"""pytest plugin of fbkit's verifiers (Harbor's tests/, SWE-bench's eval_script): every test's
outcome, by node id, into the JSON file $FBKIT_OUTCOMES (passed, failed, error, skipped,
xfailed, xpassed; the worst phase wins), and printed last as "STATUS NODE_ID" lines (every
skipped test named, no " - reason" after an id: what SWE-bench's pytest log parsers read)."""
import json
import os

_RANK = {"passed": 0, "skipped": 1, "xfailed": 1, "xpassed": 1, "failed": 2, "error": 3}
_outcomes = {}


def _outcome(report):
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed"
    if report.when != "call" and report.failed:
        return "error"
    return report.outcome


def pytest_runtest_logreport(report):
    if report.when != "call" and report.passed:
        return
    outcome = _outcome(report)
    old = _outcomes.get(report.nodeid)
    if old is None or _RANK[outcome] > _RANK[old]:
        _outcomes[report.nodeid] = outcome


_PRINTED = {"passed": "PASSED", "failed": "FAILED", "error": "ERROR", "skipped": "SKIPPED",
            "xfailed": "XFAIL", "xpassed": "XFAIL"}


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_sep("=", "fbkit outcomes")
    for nodeid in sorted(_outcomes):
        terminalreporter.write_line(f"{_PRINTED[_outcomes[nodeid]]} {nodeid}")


def pytest_sessionfinish(session):
    path = os.environ.get("FBKIT_OUTCOMES")
    if path:
        with open(path, "w") as f:
            json.dump(_outcomes, f, sort_keys=True, indent=1)
