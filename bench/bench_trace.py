#!/usr/bin/env python3
"""Times `fb-graph trace` against the untraced run and the floor of tracing, in one run.

Phases, run in turn --repeat times (interleaved, so a slow spell of a shared machine hits
all of them; medians reported):
  untraced         pytest as the suite's users run it
  floor: hook      pytest with an empty C profile hook installed from the start
                   (bench/floor/_fbkit_floor.c): what any profile-hook tracer pays on this
                   interpreter before recording anything (CPython builds a frame object and
                   calls the hook on every call and return, Python or C)
  floor: switch    the same plus a per-test pytest hook that switches a context when the
                   test's file changes: what any per-file recorder adds
  fb-graph trace   fbkit end to end: sandbox, agent, C accelerator, journal, trace JSON
  coverage         `coverage run -m pytest` (line tracing) as the familiar anchor
  --with no-accel  fb-graph trace --no-accel (the pure-Python agent)
  --with isolate   fb-graph trace --isolate (one process per test file)
Per phase: wall seconds and CPU seconds (user + system of the children; steadier than wall
on a shared machine), each as a ratio to the untraced run and to the floor with switching.
Never writes into the repository (bytecode off, caches and builds in a temp dir).

  /usr/bin/python3 bench/bench_trace.py --repo /tmp/click --pythonpath src \
      --pythonpath /tmp/click-meta [--repeat 3] [--json OUT]
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


CPUACCT = "/sys/fs/cgroup/cpuacct"


def cpu_meter():
    """A cgroup v1 cpuacct group to count the CPU time of a run and all its descendants
    (rusage misses what runs inside bubblewrap's pid namespace), or None."""
    if not os.access(CPUACCT, os.W_OK):
        return None
    group = os.path.join(CPUACCT, "fbkit-bench-trace-%d" % os.getpid())
    try:
        os.makedirs(group, exist_ok=True)
    except OSError:
        return None
    return group


def timed(cmd, cwd, env, log, group=None):
    """(wall seconds, CPU seconds of the run and its descendants, exit status) of one run."""
    def enter():
        with open(os.path.join(group, "cgroup.procs"), "w") as f:
            f.write("0")

    if group:
        with open(os.path.join(group, "cpuacct.usage"), "w") as f:
            f.write("0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(log, "wb") as out:
        rc = subprocess.call(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, preexec_fn=enter if group else None)
    wall = time.perf_counter() - t0
    if group:
        with open(os.path.join(group, "cpuacct.usage")) as f:
            return wall, int(f.read()) / 1e9, rc
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, rc


def build_floor(python, out_dir):
    """Compiles the floor's extension for `python` (its own headers and suffix) into
    out_dir, next to its pytest plugin."""
    query = ("import sysconfig; print(sysconfig.get_paths()['include']); "
             "print(sysconfig.get_config_var('EXT_SUFFIX'))")
    include, suffix = subprocess.check_output([python, "-c", query], text=True).split()
    src = os.path.join(HERE, "floor")
    subprocess.check_call(["cc", "-O2", "-shared", "-fPIC", "-I" + include,
                           os.path.join(src, "_fbkit_floor.c"),
                           "-o", os.path.join(out_dir, "_fbkit_floor" + suffix)])
    shutil.copy(os.path.join(src, "fbkit_floor.py"), out_dir)


def phases(args, repo, tmp):
    pytest = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"] + args.tests
    trace = [args.fbgraph, "trace", repo, "--python", args.python, "-q"]
    for p in args.pythonpath:
        trace += ["--pythonpath", p]
    for t in args.tests:
        trace += ["--tests", t]
    floor = pytest + ["-p", "fbkit_floor"]
    out = [
        ("untraced", pytest, {}, args.repeat),
        ("floor: hook", floor, {"FBKIT_FLOOR": "hook"}, args.repeat),
        ("floor: switch", floor, {"FBKIT_FLOOR": "switch"}, args.repeat),
        ("fb-graph trace", trace + ["-o", os.path.join(tmp, "t.json")], {}, args.repeat),
    ]
    if "no-accel" in args.with_:
        out.append(("fb-graph trace --no-accel",
                    trace + ["--no-accel", "-o", os.path.join(tmp, "p.json")], {}, args.repeat))
    if "isolate" in args.with_:
        out.append(("fb-graph trace --isolate",
                    trace + ["--isolate", "-o", os.path.join(tmp, "i.json")], {},
                    args.isolate_repeat))
    if "coverage" not in args.skip:
        out.append(("coverage", [args.python, "-m", "coverage", "run", "--data-file",
                                 os.path.join(tmp, "cov")] + pytest[1:], {}, args.repeat))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--fbgraph", default=os.path.join(HERE, "..", "build", "cli", "fb-graph"))
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--pythonpath", action="append", default=[])
    ap.add_argument("--tests", action="append", default=[], help="test paths (default: all)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--isolate-repeat", type=int, default=1)
    ap.add_argument("--with", dest="with_", action="append", default=[],
                    choices=["no-accel", "isolate"], help="add a phase")
    ap.add_argument("--skip", action="append", default=[], choices=["coverage"])
    ap.add_argument("--json", help="write the results here as JSON")
    args = ap.parse_args()
    repo = os.path.realpath(args.repo)
    tmp = tempfile.mkdtemp(prefix="fbkit-bench-trace-")
    floor_dir = os.path.join(tmp, "floor")
    os.mkdir(floor_dir)
    build_floor(args.python, floor_dir)
    pp = [p if os.path.isabs(p) else os.path.join(repo, p) for p in args.pythonpath]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=os.pathsep.join(pp))
    floor_env = dict(env, PYTHONPATH=os.pathsep.join([floor_dir] + pp))
    runs = phases(args, repo, tmp)
    group = cpu_meter()
    # Warm-up (page cache, the accelerator's compile cache), untimed.
    timed(runs[3][1][:-1] + [os.path.join(tmp, "w.json")], repo, env, os.path.join(tmp, "warm.log"))
    wall, cpu = {}, {}
    for r in range(max(args.repeat, args.isolate_repeat)):
        for name, cmd, extra, reps in runs:
            if r >= reps:
                continue
            run_env = dict(floor_env if extra else env, **extra)
            seconds, cpu_s, rc = timed(cmd, repo, run_env, os.path.join(tmp, "run.log"), group)
            if rc != 0:
                sys.exit(f"{name} exited {rc}: see {os.path.join(tmp, 'run.log')}")
            wall.setdefault(name, []).append(seconds)
            cpu.setdefault(name, []).append(cpu_s)
            print(f"[{r + 1}] {name:28s} {seconds:7.2f}s wall {cpu_s:7.2f}s cpu", file=sys.stderr)
    med = {n: (statistics.median(wall[n]), statistics.median(cpu[n])) for n in wall}
    base, floor = med["untraced"], med["floor: switch"]
    table = {n: {"wall": round(w, 3), "cpu": round(c, 3),
                 "wall_x_untraced": round(w / base[0], 3), "cpu_x_untraced": round(c / base[1], 3),
                 "wall_x_floor": round(w / floor[0], 3), "cpu_x_floor": round(c / floor[1], 3),
                 "runs_wall": [round(x, 3) for x in wall[n]]}
             for n, (w, c) in med.items()}
    python = subprocess.check_output([args.python, "-c", "import sys; print(sys.version.split()[0])"],
                                     text=True).strip()
    commit = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    report = {"schema": "fbkit.bench-trace/1", "repo": repo, "commit": commit, "python": python,
              "tests": args.tests, "cpu_meter": "cgroup cpuacct" if group else "rusage", "repeat": args.repeat, "phases": table}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)
            f.write("\n")
    print(f"\n{repo} {commit[:8]} (python {python}, median of {args.repeat})")
    print(f"{'run':28s} {'wall s':>8s} {'cpu s':>8s} {'x untraced':>11s} {'x floor':>8s}"
          f" {'cpu x untraced':>15s} {'cpu x floor':>12s}")
    for n, row in table.items():
        print(f"{n:28s} {row['wall']:8.2f} {row['cpu']:8.2f} {row['wall_x_untraced']:10.2f}x"
              f" {row['wall_x_floor']:7.2f}x {row['cpu_x_untraced']:14.2f}x {row['cpu_x_floor']:11.2f}x")
    shutil.rmtree(tmp, ignore_errors=True)
    if group:
        os.rmdir(group)


if __name__ == "__main__":
    main()
