#!/usr/bin/env python3
"""A change's cost on graded runs: `fb-extract eval TASKS --gold` with a baseline build and
with the build under test, interleaved (base, new, base, new, ...) so that the machine's
noise falls on both alike. Reports the median wall time of each and their ratio, and
compares the verdicts (resolved and suspicious per instance), so a ratio is never reported
for runs that judged differently.

  /usr/bin/python3 bench/bench_ab.py --base /work/rt/bin-before --new build/cli \
      --tasks /tmp/run-click/tasks [--repeat 3] [--jobs 1] [--json]

--base and --new are directories holding an fb-extract binary (copy the baseline's aside
before rebuilding: the tracing agent is compiled into it)."""
import argparse
import json
import os
import statistics
import tempfile

from bench_sandbox import timed  # the same run-and-time, beside it

HERE = os.path.dirname(os.path.abspath(__file__))


def verdicts(run_dir):
    out = {}
    for name in sorted(os.listdir(run_dir)):
        report = os.path.join(run_dir, name, "report.json")
        if os.path.exists(report):
            r = json.load(open(report))
            out[name] = (r["resolved"], r["suspicious"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="directory of the baseline's fb-extract")
    ap.add_argument("--new", default=os.path.join(HERE, "..", "build", "cli"))
    ap.add_argument("--tasks", required=True, help="a directory of task directories")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="fbkit-bench-ab-")
    builds = {"base": args.base, "new": args.new}
    times = {b: [] for b in builds}
    outputs = {}
    for i in range(args.repeat):
        for build, where in builds.items():
            out = os.path.join(tmp, "%s-%d" % (build, i))
            seconds, _ = timed([os.path.join(where, "fb-extract"), "eval", args.tasks,
                                "--gold", "-q", "-j", str(args.jobs), "-o", out])
            times[build].append(seconds)
            outputs.setdefault(build, verdicts(out))
    base, new = statistics.median(times["base"]), statistics.median(times["new"])
    result = {"base_s": round(base, 3), "new_s": round(new, 3), "ratio": round(new / base, 4),
              "runs": times, "same_verdicts": outputs["base"] == outputs["new"],
              "instances": len(outputs["new"])}
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
        return
    print("%10s %10s %8s %10s %s" % ("base s", "new s", "ratio", "instances", "same verdicts"))
    print("%10.3f %10.3f %8.4f %10d %s" % (base, new, result["ratio"], result["instances"],
                                           result["same_verdicts"]))


if __name__ == "__main__":
    main()
