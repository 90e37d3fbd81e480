#!/usr/bin/env python3
"""fbkit through a large repository, stage by stage: trace --isolate, build, all.

For each stage: wall seconds and the peak of the summed resident memory of the stage's whole
process tree (sampled every 0.2 s from /proc, sandboxed processes included); then the
trace's files and tests, the graph's size, the tasks `all` emitted and its rejections by
reason. With --shards N it traces the same files again as N shards, one after another
(`--shard K/N`, balanced by file size, or by the unsharded run's durations with
--by-durations), and reports each shard's time, max / mean (1.0: perfectly balanced) and
whether `fb-graph merge` of the shards has the unsharded trace's files and outcomes (byte
equality is the ctest's and bench/README's business: call counts of a large suite vary
between any two runs).

  /usr/bin/python3 bench/whole_repo.py --repo /tmp/sympy --spec docs/specs/sympy.toml \
      --tests sympy/core --tests sympy/sets -j 2 --shards 2 --work /var/tmp/w --json OUT
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def tree_rss(root_pid):
    """Summed RSS (bytes) of root_pid and its descendants."""
    children, rss = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            children.setdefault(int(fields[1]), []).append(int(name))
            rss[int(name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
    total, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += children.get(pid, [])
    return total


def run(name, cmd, log, ok=(0,)):
    """Runs cmd; returns {seconds, peak_rss_mb, exit}. Exits when the status is not in ok."""
    print(f"{name}: {' '.join(cmd)}", file=sys.stderr, flush=True)
    peak = [0]
    t0 = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        done = threading.Event()

        def sample():
            while not done.wait(0.2):
                peak[0] = max(peak[0], tree_rss(proc.pid))

        sampler = threading.Thread(target=sample)
        sampler.start()
        rc = proc.wait()
        done.set()
        sampler.join()
    seconds = time.perf_counter() - t0
    if rc not in ok:
        sys.exit(f"{name} exited {rc}: see {log}")
    print(f"{name}: {seconds:.1f} s, peak {peak[0] / 2**20:.0f} MB (exit {rc})", file=sys.stderr, flush=True)
    return {"seconds": round(seconds, 1), "peak_rss_mb": round(peak[0] / 2**20), "exit": rc}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--tests", action="append", default=[], help="test paths (default: the whole suite)")
    ap.add_argument("--work", required=True)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--shards", type=int, default=0)
    ap.add_argument("--by-durations", action="store_true")
    ap.add_argument("--until", choices=["trace", "build", "all"], default="all",
                    help="the last stage to run (default all)")
    ap.add_argument("--trace-arg", action="append", default=[],
                    help="extra fb-graph trace argument, e.g. --trace-arg=--total-timeout=1800")
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "build", "cli"))
    ap.add_argument("--json")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    w = lambda *p: os.path.join(args.work, *p)
    graph_bin, extract_bin = os.path.join(args.bin, "fb-graph"), os.path.join(args.bin, "fb-extract")
    common = ["--spec", args.spec]
    tests = [a for t in args.tests for a in ("--tests", t)]
    stages = {}
    trace_cmd = [graph_bin, "trace", args.repo, *common, "--isolate", "-j", str(args.jobs), *tests, "-q",
                 *args.trace_arg]
    stages["trace"] = run("trace", trace_cmd + ["--details", "-o", w("trace.json")], w("trace.log"), ok=(0, 3))
    if args.until != "trace":
        stages["build"] = run("build", [graph_bin, "build", args.repo, *common, "--trace", w("trace.json"),
                                        "-j", str(args.jobs), "-q", "-o", w("graph.json")], w("build.log"))
    if args.until == "all":
        stages["all"] = run("all", [extract_bin, "all", args.repo, *common, "--graph", w("graph.json"),
                                    "--trace", w("trace.json"), "-o", w("tasks"), "-j", str(args.jobs),
                                    "-q"], w("all.log"))
    trace = json.load(open(w("trace.json")))
    graph = json.load(open(w("graph.json"))) if args.until != "trace" else {}
    summary = json.load(open(w("tasks", "summary.json"))) if args.until == "all" else {}
    report = {
        "schema": "fbkit.bench-whole-repo/1",
        "repo": args.repo,
        "commit": subprocess.run(["git", "-C", args.repo, "rev-parse", "HEAD"], capture_output=True,
                                 text=True).stdout.strip(),
        "tests": args.tests, "jobs": args.jobs, "stages": stages,
        "trace": {"files": len(trace.get("files", [])), "counts": trace.get("counts"),
                  "statuses": {st: sum(1 for f in trace.get("files", []) if f.get("status") == st)
                               for st in sorted({f.get("status") for f in trace.get("files", [])})}},
        "graph": {"nodes": len(graph.get("nodes", [])), "edges": len(graph.get("edges", [])),
                  "test_files": len(graph.get("test_files", [])),
                  "bytes": os.path.getsize(w("graph.json")) if graph else 0},
        "all": {k: summary.get(k) for k in ("test_files", "candidates", "tried", "emitted", "rejected", "level2", "repaired",
                          "pytest_runs", "pytest_ms", "fbkit_ms")
                if k in summary},
    }
    if args.shards:
        parts, weights = [], (["--shard-weights", w("trace.json")] if args.by_durations else [])
        for k in range(1, args.shards + 1):
            out = w(f"trace.{k}-of-{args.shards}.json")
            parts.append(out)
            r = run(f"trace shard {k}/{args.shards}", trace_cmd + ["--shard", f"{k}/{args.shards}", *weights,
                                                                 "-o", out], w(f"shard{k}.log"), ok=(0, 3))
            report.setdefault("shards", []).append(r)
        run("merge", [graph_bin, "merge", *parts, "-o", w("trace.merged.json")], w("merge.log"))
        merged = json.load(open(w("trace.merged.json")))
        times = [s["seconds"] for s in report["shards"]]

        def outcomes(t):  # per file: path and outcome counts (edges' call counts vary per run)
            return [(f.get("file"), f.get("counts"), f.get("status")) for f in t.get("files", [])]

        report["shard_balance"] = {
            "max_over_mean": round(max(times) / (sum(times) / len(times)), 3),
            "sum_seconds": round(sum(times), 1),
            "merged_same_files_and_outcomes": outcomes(merged) == outcomes(trace),
        }
    text = json.dumps(report, indent=1, sort_keys=True)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
