#!/usr/bin/env python3
"""Tasks per minute of `fb-extract all` on a traced repository, split into fbkit's own time
(planning, cutting, git, writing) and the time spent in pytest runs (post-verification),
with the pytest invocations per emitted task directory. Baseline of the same run: the
pytest time itself (fbkit's overhead is reported as a share of it).

usage: bench_extract.py FB_EXTRACT ROOT GRAPH TRACE [fb-extract options...]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    binary, root, graph, trace = sys.argv[1:5]
    extra = sys.argv[5:]
    out = tempfile.mkdtemp(prefix="fbkit-bench-extract-")
    try:
        start = time.monotonic()
        p = subprocess.run([binary, "all", root, "--graph", graph, "--trace", trace, "-o", out, "-q"]
                           + extra, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wall = time.monotonic() - start
        if p.returncode != 0:
            sys.exit(p.stdout)
        s = json.load(open(os.path.join(out, "summary.json")))
        dirs = [d for d in os.listdir(out) if os.path.exists(os.path.join(out, d, "instance.json"))]
        tried = max(1, s["tried"])
        print(p.stdout.strip())
        print()
        print(f"wall time                         {wall:8.1f} s")
        print(f"candidates tried                  {s['tried']:8d}")
        print(f"task directories emitted          {len(dirs):8d} (from {s['emitted']} F2P files)")
        print(f"tasks per minute                  {len(dirs) / wall * 60:8.2f}")
        print(f"fbkit seconds per candidate       {s['fbkit_ms'] / 1000 / tried:8.3f}"
              f"  (pytest runs excluded)")
        print(f"pytest seconds per candidate      {s['pytest_ms'] / 1000 / tried:8.3f}")
        print(f"fbkit share of the pytest time    {s['fbkit_ms'] / max(1, s['pytest_ms']):8.3f}"
              f"  (baseline: the pytest runs of the same run)")
        print(f"pytest invocations per task dir   {s['pytest_runs'] / max(1, len(dirs)):8.2f}"
              f"  (all runs, rejected tasks included)")
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
