#!/usr/bin/env python3
"""Recall of `fb-graph trace` against a one-process-per-file reference tracer.

For every test file that fb-graph traced with status ok, runs pytest on that file alone
with bench/reference_trace_plugin.py, and checks that each (caller, callee) edge the
reference recorded is in fbkit's trace for that file: the file's own context, the import
context, the session context, or a fixture context the file uses. Also compares fbkit's
per-category test counts with pytest's own summary line of an untraced run.

  /usr/bin/python3 bench/trace_recall.py --repo /tmp/click --trace click.json \
      --pythonpath src --pythonpath /tmp/click-meta
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from reference_run import run_reference


def key(code):
    return None if code is None else tuple(code)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--trace", required=True, help="fbkit.trace/1 JSON of the same repo")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--pythonpath", action="append", default=[])
    ap.add_argument("--examples", type=int, default=10)
    args = ap.parse_args()
    repo = os.path.realpath(args.repo)
    trace = json.load(open(args.trace))
    pp = [p if os.path.isabs(p) else os.path.join(repo, p) for p in args.pythonpath]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=os.pathsep.join(pp))
    shared = set()
    for name, edges in trace["contexts"].items():
        if not name.startswith("<fixture>"):
            shared |= {(key(a), key(b)) for a, b, _ in edges}
    fixtures = {name: {(key(a), key(b)) for a, b, _ in edges}
                for name, edges in trace["contexts"].items() if name.startswith("<fixture>")}
    total = found = 0
    missing = []
    tmp = tempfile.mkdtemp(prefix="fbkit-recall-")
    for f in trace["files"]:
        if f["status"] != "ok" or not f["tests"]:
            continue
        edges = run_reference(args.python, repo, args.pythonpath, f["file"],
                              os.path.join(tmp, "ref.json"))
        ref = {(key(a), key(b)) for a, b, _ in edges or []}
        ours = {(key(a), key(b)) for a, b, _ in f["edges"]} | shared
        for c in f["fixture_contexts"]:
            ours |= fixtures.get(c, set())
        hit = ref & ours
        total += len(ref)
        found += len(hit)
        missing += [(f["file"], e) for e in sorted(ref - ours, key=str)]
        print(f"{f['file']:60s} reference {len(ref):6d}  found {len(hit):6d}", file=sys.stderr)
    recall = found / total if total else 1.0
    print(f"\nedges recorded by the reference: {total}, found by fb-graph trace: {found}, "
          f"recall {100 * recall:.3f}%")
    for file, (a, b) in missing[:args.examples]:
        print(f"  missing in {file}: {a} -> {b}")
    # Outcomes: pytest's own summary of an untraced run against fbkit's counts.
    run = subprocess.run([args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo,
                         env=env, capture_output=True, text=True)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    pytest_counts = {m.group(2): int(m.group(1))
                     for m in re.finditer(r"(\d+) (passed|failed|skipped|xfailed|xpassed|error)s?", summary)}
    ours_counts = {k: v for k, v in trace["counts"].items()}
    print(f"pytest summary: {summary}")
    print(f"fbkit counts:   {ours_counts}  -> {'MATCH' if pytest_counts == ours_counts else 'DIFFER'}")
    return 0 if pytest_counts == ours_counts else 1


if __name__ == "__main__":
    sys.exit(main())
