#!/usr/bin/env python3
"""The sandbox's cost, measured in one run: the same commands with `--sandbox bwrap` and
`--sandbox none` (and, with --images, `--sandbox container` for eval), interleaved (bwrap,
none, container, bwrap, ...) so that the machine's noise falls on all alike. Reports the
median wall time of each and its ratio to none.

Phases (each --repeat times):
  eval:  `fb-extract eval TASKS --gold` (every task's gold patch, -j JOBS)
  trace: `fb-graph trace ROOT --spec SPEC` (one session)

  /usr/bin/python3 bench/bench_sandbox.py --tasks /tmp/run-click/tasks \
      --repo /tmp/click --spec docs/specs/click.toml [--repeat 3] [--jobs 2] [--json]
      [--images OUT/images.json]   (fb-extract images TASKS -o OUT --engine podman)

The outputs of both modes are also compared (eval: resolved per instance; trace: the trace
document), so a ratio is never reported for runs that did different work.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode not in (0, 3):
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr[-2000:]))
    return time.perf_counter() - t0, r.stdout


def resolved(run_dir):
    out = {}
    for name in sorted(os.listdir(run_dir)):
        report = os.path.join(run_dir, name, "report.json")
        if os.path.exists(report):
            out[name] = json.load(open(report))["resolved"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", help="a directory of task directories (fb-extract all's -o)")
    ap.add_argument("--repo", help="the repository to trace")
    ap.add_argument("--spec", help="its repo spec")
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "build", "cli"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--images", help="eval also in containers: the tasks' images.json")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="fbkit-bench-sandbox-")
    phases = {}
    if args.tasks:
        def eval_cmd(mode, i):
            return [os.path.join(args.bin, "fb-extract"), "eval", args.tasks, "--gold", "-q",
                    "-j", str(args.jobs), "--rerun", "--sandbox", mode,
                    "-o", os.path.join(tmp, "eval-%s-%d" % (mode, i))] + (
                        ["--images", args.images] if mode == "container" else [])
        phases["eval --gold"] = (eval_cmd, lambda mode, i: resolved(os.path.join(tmp, "eval-%s-%d" % (mode, i))))
    if args.repo:
        def trace_cmd(mode, i):
            cmd = [os.path.join(args.bin, "fb-graph"), "trace", args.repo, "-q", "--sandbox", mode,
                   "-o", os.path.join(tmp, "trace-%s-%d.json" % (mode, i))]
            return cmd + (["--spec", args.spec] if args.spec else [])
        def trace_doc(mode, i):
            doc = json.load(open(os.path.join(tmp, "trace-%s-%d.json" % (mode, i))))
            doc.pop("accel_error", None)
            return doc
        phases["trace"] = (trace_cmd, trace_doc)
    if not phases:
        sys.exit("give --tasks and/or --repo")
    results = {}
    for name, (cmd, output) in phases.items():
        modes = ["bwrap", "none"] + (["container"] if args.images and name.startswith("eval") else [])
        times = {m: [] for m in modes}
        outputs = {}
        for i in range(args.repeat):
            for mode in modes:
                seconds, _ = timed(cmd(mode, i))
                times[mode].append(seconds)
                outputs.setdefault(mode, output(mode, i))
        n = statistics.median(times["none"])
        r = {"same_output": all(outputs[m] == outputs["bwrap"] for m in modes), "runs": times,
             "none_s": round(n, 3)}
        for m in modes:
            if m != "none":
                r[m + "_s"] = round(statistics.median(times[m]), 3)
                r[m + "_ratio"] = round(statistics.median(times[m]) / n, 4)
        results[name] = r
    if args.json:
        print(json.dumps(results, indent=2, sort_keys=True))
        return
    print("%-14s %10s %10s %8s %12s %8s %s" % ("phase", "none s", "bwrap s", "ratio", "container s",
                                              "ratio", "same output"))
    for name, r in results.items():
        c = ("%12.3f %8.4f" % (r["container_s"], r["container_ratio"])) if "container_s" in r else "%12s %8s" % ("-", "-")
        print("%-14s %10.3f %10.3f %8.4f %s %s" % (name, r["none_s"], r["bwrap_s"], r["bwrap_ratio"], c,
                                                  r["same_output"]))


if __name__ == "__main__":
    main()
