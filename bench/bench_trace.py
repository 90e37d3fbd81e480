#!/usr/bin/env python3
"""Times `fb-graph trace` against the untraced pytest run of the same suite, in one run.

Runs, each --repeat times (median reported): untraced pytest; fb-graph trace (C accelerator);
fb-graph trace --no-accel (pure-Python agent); fb-graph trace --isolate (one process per
test file; --isolate-repeat times); `coverage run -m pytest` as the anchor. Prints seconds
and ratios to the untraced run. Never writes into the repository (bytecode off, caches in a
temp dir).

  /usr/bin/python3 bench/bench_trace.py --repo /tmp/click --pythonpath src \
      --pythonpath /tmp/click-meta [--repeat 3] [--json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd, cwd, env, log):
    t0 = time.perf_counter()
    with open(log, "wb") as out:
        rc = subprocess.call(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
    return time.perf_counter() - t0, rc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--fbgraph", default=os.path.join(os.path.dirname(__file__), "..", "build", "cli", "fb-graph"))
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--pythonpath", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--isolate-repeat", type=int, default=1)
    ap.add_argument("--skip", action="append", default=[], help="phase to skip (isolate, coverage, ...)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    repo = os.path.realpath(args.repo)
    tmp = tempfile.mkdtemp(prefix="fbkit-bench-trace-")
    pp = [p if os.path.isabs(p) else os.path.join(repo, p) for p in args.pythonpath]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=os.pathsep.join(pp))
    pytest = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    trace = [args.fbgraph, "trace", repo, "--python", args.python, "-q"]
    for p in args.pythonpath:
        trace += ["--pythonpath", p]
    phases = [
        ("untraced pytest", pytest, args.repeat),
        ("fb-graph trace", trace + ["-o", os.path.join(tmp, "t.json")], args.repeat),
        ("fb-graph trace --no-accel", trace + ["--no-accel", "-o", os.path.join(tmp, "p.json")], args.repeat),
        ("fb-graph trace --isolate", trace + ["--isolate", "-o", os.path.join(tmp, "i.json")], args.isolate_repeat),
        ("coverage run -m pytest", [args.python, "-m", "coverage", "run", "--data-file",
                                    os.path.join(tmp, "cov")] + pytest[1:], args.repeat),
    ]
    # Warm-up (page cache, the accelerator's compile cache), untimed.
    timed(trace + ["-o", os.path.join(tmp, "w.json")], repo, env, os.path.join(tmp, "warm.log"))
    results = {}
    for r in range(max(args.repeat, args.isolate_repeat)):
        for name, cmd, reps in phases:
            if r >= reps or any(s in name for s in args.skip):
                continue
            seconds, rc = timed(cmd, repo, env, os.path.join(tmp, "run.log"))
            results.setdefault(name, []).append(seconds)
            print(f"[{r + 1}] {name:28s} {seconds:7.2f}s (exit {rc})", file=sys.stderr)
    base = statistics.median(results["untraced pytest"])
    table = {name: {"seconds": round(statistics.median(v), 3),
                    "ratio": round(statistics.median(v) / base, 2)} for name, v in results.items()}
    if args.json:
        print(json.dumps({"repo": repo, "phases": table}, indent=1, sort_keys=True))
    else:
        print(f"\nrepo {repo} (median of {args.repeat})")
        print(f"{'run':30s} {'seconds':>8s} {'x untraced':>11s}")
        for name, row in table.items():
            print(f"{name:30s} {row['seconds']:8.2f} {row['ratio']:10.2f}x")


if __name__ == "__main__":
    main()
