#!/usr/bin/env python3
"""What outcome runs pay for ignoring bytecode, measured in one run: `fb-extract eval TASKS
--gold` on a copy of the tasks as they are (only the work copy's and agent_code's sources are
compiled from text; the agent's sitecustomize.py) and on a copy whose repo settings add
PYTHONPYCACHEPREFIX=/tmp/fbkit-pycache, the rule before session 35, which compiled the
standard library and pytest again in every pytest process. Interleaved (new, old, new, ...)
so that the machine's noise falls on both alike; the median wall time of each and their ratio.
Both must resolve the same instances, or no ratio is reported.

  /usr/bin/python3 bench/bench_bytecode.py --fb-extract build/cli/fb-extract \
      --tasks build/tests/eval-data/tasks [--repeat 5]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def eval_gold(fb_extract, tasks, out):
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    r = subprocess.run([fb_extract, "eval", tasks, "--gold", "-o", out, "-q"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if r.returncode not in (0, 3):
        sys.exit("eval failed (%d): %s" % (r.returncode, r.stderr[-2000:]))
    with open(os.path.join(out, "summary.json")) as f:
        return seconds, sorted(json.load(f)["models"]["gold"]["resolved_ids"])


def with_old_rule(tasks, dest):
    shutil.copytree(tasks, dest, symlinks=True)
    for name in sorted(os.listdir(dest)):
        path = os.path.join(dest, name, "instance.json")
        if not os.path.isfile(path):
            continue
        with open(path) as f:
            inst = json.load(f)
        settings = json.loads(inst["repo_settings"])
        settings["env"]["PYTHONPYCACHEPREFIX"] = "/tmp/fbkit-pycache"
        inst["repo_settings"] = json.dumps(settings, separators=(",", ":"), sort_keys=True)
        with open(path, "w") as f:
            json.dump(inst, f, indent=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fb-extract", required=True)
    ap.add_argument("--tasks", required=True, help="task directories (fb-extract task/all output)")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        new_tasks, old_tasks = os.path.join(tmp, "new"), os.path.join(tmp, "old")
        shutil.copytree(a.tasks, new_tasks, symlinks=True)
        with_old_rule(a.tasks, old_tasks)
        times = {"new": [], "old": []}
        resolved = {}
        for _ in range(a.repeat):
            for mode, tasks in (("new", new_tasks), ("old", old_tasks)):
                s, ids = eval_gold(a.fb_extract, tasks, os.path.join(tmp, "run-" + mode))
                times[mode].append(s)
                resolved.setdefault(mode, ids)
        if resolved["new"] != resolved["old"]:
            sys.exit("the two rules resolved different instances: %s / %s" %
                     (resolved["new"], resolved["old"]))
        new, old = statistics.median(times["new"]), statistics.median(times["old"])
        print("instances resolved: %d (both rules)" % len(resolved["new"]))
        print("median eval --gold: own bytecode only %.2f s, PYTHONPYCACHEPREFIX %.2f s, "
              "ratio %.2f" % (new, old, new / old))


if __name__ == "__main__":
    main()
