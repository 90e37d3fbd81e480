#!/usr/bin/env python3
"""bubblewrap's start-up against the number of read-only file mounts it makes, measured in
one run: `bwrap ... -- true` with N files each bound read-only over a writable tree (as
fbkit binds the grader's files), N = 0 and the given sizes interleaved round by round so
the machine's noise falls on all alike. Reports the median wall time of each N and its
ratio to N = 0. This is why the sandbox binds directories whole past 256 protected files
(sandbox/sandbox.cc, ProtectMounts).

  /usr/bin/python3 bench/bench_protect_mounts.py [--sizes 100,256,500,1000] [--repeat 5] [--json]
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


def command(bwrap, tree, n):
    args = [bwrap, "--die-with-parent", "--unshare-all", "--ro-bind", "/usr", "/usr",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev",
            "--bind", tree, tree]
    for i in range(n):
        f = os.path.join(tree, "tests", "case_%05d.txt" % i)
        args += ["--ro-bind", f, f]
    return args + ["--", "/bin/true"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,256,500,1000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    bwrap = shutil.which("bwrap")
    if not bwrap:
        sys.exit("bwrap is not installed")
    sizes = [0] + [int(s) for s in a.sizes.split(",") if s]
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "tests"))
        for i in range(max(sizes)):
            with open(os.path.join(tmp, "tests", "case_%05d.txt" % i), "w") as f:
                f.write("%d\n" % i)
        times = {n: [] for n in sizes}
        for _ in range(a.repeat):
            for n in sizes:
                cmd = command(bwrap, tmp, n)
                t0 = time.perf_counter()
                r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                times[n].append(time.perf_counter() - t0)
                if r.returncode != 0:
                    sys.exit("bwrap failed with %d mounts: %s" % (n, r.stderr[-500:]))
    base = statistics.median(times[0])
    rows = [{"mounts": n, "median_s": round(statistics.median(times[n]), 4),
             "ratio": round(statistics.median(times[n]) / base, 2)} for n in sizes]
    if a.json:
        print(json.dumps(rows, indent=2))
    else:
        print("%8s %10s %8s" % ("mounts", "median s", "ratio"))
        for r in rows:
            print("%8d %10.4f %8.2f" % (r["mounts"], r["median_s"], r["ratio"]))


if __name__ == "__main__":
    main()
