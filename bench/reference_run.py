"""Runs the reference tracer (bench/reference_trace_plugin.py) on one test file; shared by
bench/trace_recall.py and bench/graph_recall.py. (A module of its own: importing the plugin
would install its profiler.)"""
import json
import os
import subprocess


def run_reference(python, repo, pythonpath, test_file, out):
    """Runs pytest on `test_file` of `repo` under the reference plugin and returns its edges
    ([[caller, callee, count], ...]), or None when the run wrote nothing. `pythonpath`
    entries are relative to the repo unless absolute."""
    here = os.path.dirname(os.path.abspath(__file__))
    pp = [here] + [p if os.path.isabs(p) else os.path.join(repo, p) for p in pythonpath]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=os.pathsep.join(pp),
               REF_ROOT=repo, REF_OUT=out)
    if os.path.exists(out):
        os.remove(out)
    subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                    "reference_trace_plugin", test_file], cwd=repo, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not os.path.exists(out):
        return None
    with open(out) as f:
        return json.load(f)
