#!/usr/bin/env python3
"""What recording observed types costs the tracing agent: a suite run in-process under the
agent's Recorder (C accelerator, else the pure-Python hook) with type sampling on and off,
interleaved --repeat times; medians and minima of CPU seconds and their ratios (the minimum
is the steadier on a shared machine).

  /usr/bin/python3 bench/bench_trace_types.py --repo /work/rt/real/cachetools \
      --pythonpath src [--tests tests] [--repeat 5] [--accel PATH.so]

The accelerator is compiled from tracer/agent/_fbkit_accel.c into a temp dir unless --accel
names one. Never writes into the repository (bytecode off; pytest's cache off)."""
import argparse
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.join(HERE, "..", "tracer", "agent")

CHILD = r"""
import os, sys, time, resource
sys.path.insert(0, os.environ["AGENT"])
import fbkit_core, pytest
accel = None
if os.environ.get("ACCEL"):
    accel, err = fbkit_core.load_accelerator(os.environ["ACCEL"])
    assert accel is not None, err
if os.environ["TYPES"] == "0":
    fbkit_core.TYPE_SAMPLES = 0
rec = fbkit_core.Recorder(os.environ["ROOT"], accel=accel)
if accel is not None and os.environ["TYPES"] == "0":
    rec.tracer.set_sampler(rec.sample_call, rec.sample_return, 0)
rec.set_context("tests")
start = resource.getrusage(resource.RUSAGE_SELF)
if rec.tracer is not None:
    rec.tracer.install()
else:
    sys.setprofile(rec.profile)
code = pytest.main(["-q", "-p", "no:cacheprovider", os.environ["TESTS"]])
sys.setprofile(None)
end = resource.getrusage(resource.RUSAGE_SELF)
types = sum(len(t) for t in rec.take_types().values())
print("CPU %.4f TYPES %d EXIT %d" % (end.ru_utime - start.ru_utime + end.ru_stime - start.ru_stime, types, code))
"""


def compile_accel(tmp):
    include = sysconfig.get_paths()["include"]
    out = os.path.join(tmp, "_fbkit_accel.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-I" + include, "-o", out,
                    os.path.join(AGENT, "_fbkit_accel.c")], check=True)
    return out


def run(args, accel, types):
    env = dict(os.environ, AGENT=AGENT, ROOT=args.repo, TESTS=args.tests, TYPES=types,
               ACCEL=accel or "", PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join(os.path.join(args.repo, p) for p in args.pythonpath))
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=args.repo, env=env,
                         capture_output=True, text=True)
    line = [l for l in out.stdout.splitlines() if l.startswith("CPU ")]
    if not line:
        sys.exit("run failed:\n" + out.stdout[-2000:] + out.stderr[-2000:])
    parts = line[-1].split()
    return float(parts[1]), int(parts[3])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--pythonpath", action="append", default=[])
    ap.add_argument("--tests", default="tests")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--accel")
    ap.add_argument("--no-accel", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        accel = None if args.no_accel else (args.accel or compile_accel(tmp))
        off, on, seen = [], [], 0
        for _ in range(args.repeat):
            off.append(run(args, accel, "0")[0])
            cpu, seen = run(args, accel, "1")
            on.append(cpu)
    a, b = statistics.median(off), statistics.median(on)
    print("recorder: %s; %d interleaved runs each" % ("C accelerator" if accel else "pure Python",
                                                     args.repeat))
    print("median: types off %.3f s CPU, on %.3f s CPU (%d code objects typed): ratio %.3f" % (
        a, b, seen, b / a))
    print("minimum: types off %.3f s CPU, on %.3f s CPU: ratio %.3f" % (
        min(off), min(on), min(on) / min(off)))


if __name__ == "__main__":
    main()
