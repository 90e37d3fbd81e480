#!/usr/bin/env python3
"""Time `fb-graph entities` against a single-process CPython `ast` baseline.

    bench_entities.py [--fbgraph PATH] [--corpus DIR] [--repeat N] [--jobs N]
                      [--json] [--keep] [--check]

Per repetition (medians reported):
  baseline  a fresh `python3` process walks CORPUS, reads each .py file's bytes,
            ast.parse()s it and collects every class/def with its qualname and
            lines into a list (what a user without fbkit would do);
  cold      `fb-graph entities CORPUS -o OUT --jobs N --cache EMPTY_DIR`;
  warm      the same command again with the now-populated cache dir.
Each measurement is one subprocess; wall time is taken around it and the peak
RSS from os.wait4()'s rusage (ru_maxrss, KiB on Linux). An untimed warm-up
pass first reads every corpus file so all runs see a warm page cache.
All outputs go to a temp dir (removed unless --keep); the corpus is only read.
fb-graph exit codes 0 and 3 (output written, some files had syntax errors)
count as success.
"""
import argparse
import ast
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# Directory names the baseline does not descend into (mirrors what a repo
# walker is expected to skip; a dir holding pyvenv.cfg is a virtualenv).
SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", ".tox", ".nox",
             ".eggs", ".mypy_cache", ".pytest_cache", ".fbkit-cache"}


# --------------------------------------------------------------------------
# Baseline (runs in a child process: `bench_entities.py --_baseline DIR`)
# --------------------------------------------------------------------------
def iter_py_files(root):
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        keep = []
        for d in dirnames:
            full = os.path.join(dirpath, d)
            if d in SKIP_DIRS or os.path.islink(full):
                continue
            if os.path.exists(os.path.join(full, "pyvenv.cfg")):
                continue
            keep.append(d)
        dirnames[:] = sorted(keep)
        for name in sorted(filenames):
            if name.endswith(".py"):
                full = os.path.join(dirpath, name)
                if os.path.isfile(full):
                    yield full


def baseline(root):
    t0 = time.perf_counter()
    table = []   # (relpath, qualname, kind, start_line, def_line, end_line)
    n_files = n_fail = 0
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    warnings.simplefilter("ignore")
    for full in iter_py_files(root):
        n_files += 1
        rel = os.path.relpath(full, root).replace(os.sep, "/")
        try:
            with open(full, "rb") as fh:
                tree = ast.parse(fh.read())
        except (SyntaxError, ValueError, RecursionError, MemoryError, OSError):
            n_fail += 1
            continue
        stack = [(tree, "")]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, defs):
                    q = prefix + child.name
                    start = child.decorator_list[0].lineno if child.decorator_list else child.lineno
                    table.append((rel, q, type(child).__name__, start, child.lineno,
                                  child.end_lineno))
                    stack.append((child, q + "."))
                else:
                    stack.append((child, prefix))
    dt = time.perf_counter() - t0
    json.dump({"files": n_files, "ast_failed": n_fail, "defs": len(table),
               "inner_seconds": dt}, sys.stdout)


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------
def run_measured(cmd, stdout_path, timeout):
    """Run cmd; return (wall_seconds, exit_code, maxrss_kib).

    Blocks in os.wait4 (no polling, so short runs are timed exactly); a timer
    kills the child after `timeout` seconds. The peak RSS comes from
    /usr/bin/time, a small process of its own: Linux carries a forking
    parent's RSS high-water mark over into the child, so ru_maxrss of a
    child of this (large) Python process would be inflated."""
    rss_path = stdout_path + ".rss"
    cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_path] + list(cmd)
    with open(stdout_path, "wb") as out, open(stdout_path + ".err", "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                start_new_session=True)

        fired = []

        def kill_group():
            fired.append(True)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass

        timer = threading.Timer(timeout, kill_group)
        timer.start()
        try:
            _, status, ru = os.wait4(proc.pid, 0)
        except BaseException:  # e.g. Ctrl-C: do not leave the child running
            kill_group()
            fired.clear()
            raise
        finally:
            timer.cancel()
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code  # reaped by us; keep Popen from waiting again
    if fired:
        raise SystemExit(f"timeout after {timeout}s: {' '.join(cmd)}")
    with open(rss_path) as f:
        rss = int(f.read().split()[-1])
    return wall, code, rss


def summarize_entities(path):
    with open(path, "rb") as fh:
        doc = json.load(fh)
    files = doc.get("files", [])
    return {
        "files": len(files),
        "files_with_parse_errors": sum(1 for f in files if f.get("parse_errors")),
        "entities": sum(len(f.get("entities", [])) for f in files),
        "paths": sorted(f.get("path") for f in files),
    }


def tail(path, n=2000):
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        return data[-n:].decode("utf-8", "replace")
    except OSError:
        return ""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fbgraph", default=os.path.join(REPO, "build", "cli", "fb-graph"))
    ap.add_argument("--corpus", default="/usr/lib/python3/dist-packages")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter for the baseline (default: this one)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="per run, seconds")
    ap.add_argument("--json", action="store_true", help="print a JSON report instead of a table")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir and print its path")
    ap.add_argument("--check", action="store_true",
                    help="also run ast_agreement.py on the first cold output (untimed)")
    ap.add_argument("--_baseline", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args._baseline:
        baseline(args._baseline)
        return 0

    fbgraph = os.path.abspath(args.fbgraph)
    corpus = os.path.abspath(args.corpus)
    if not (os.path.isfile(fbgraph) and os.access(fbgraph, os.X_OK)):
        print(f"error: fb-graph not found or not executable: {fbgraph}", file=sys.stderr)
        return 2
    if not os.path.isdir(corpus):
        print(f"error: corpus is not a directory: {corpus}", file=sys.stderr)
        return 2
    if args.repeat < 1:
        print("error: --repeat must be >= 1", file=sys.stderr)
        return 2

    tmp = tempfile.mkdtemp(prefix="fbkit-bench-")
    log = (lambda *a: None) if args.json else (lambda *a: print(*a, file=sys.stderr, flush=True))
    try:
        # Warm the page cache (untimed).
        nbytes = 0
        for full in iter_py_files(corpus):
            with open(full, "rb") as fh:
                nbytes += len(fh.read())
        log(f"corpus {corpus}: {nbytes / 2**20:.1f} MiB of .py (page cache warmed)")

        runs = {"baseline": [], "cold": [], "warm": []}
        base_info = fb_info = None
        warm_identical = True
        for r in range(args.repeat):
            # baseline
            out = os.path.join(tmp, f"baseline.{r}.json")
            wall, rc, rss = run_measured(
                [args.python, os.path.abspath(__file__), "--_baseline", corpus], out, args.timeout)
            if rc != 0:
                print(f"baseline failed (exit {rc}):\n{tail(out + '.err')}", file=sys.stderr)
                return 1
            with open(out) as fh:
                base_info = json.load(fh)
            runs["baseline"].append((wall, rss))
            log(f"[{r + 1}/{args.repeat}] baseline {wall:8.3f}s  {rss / 1024:7.1f} MiB")

            cache = os.path.join(tmp, f"cache.{r}")
            os.mkdir(cache)  # fresh, empty
            for phase in ("cold", "warm"):
                out = os.path.join(tmp, f"{phase}.{r}.json")
                cmd = [fbgraph, "entities", corpus, "-o", out, "--jobs", str(args.jobs),
                       "--cache", cache]
                wall, rc, rss = run_measured(cmd, os.path.join(tmp, f"{phase}.{r}.stdout"),
                                             args.timeout)
                if rc not in (0, 3):
                    print(f"fb-graph {phase} failed (exit {rc}): {' '.join(cmd)}\n"
                          f"{tail(os.path.join(tmp, f'{phase}.{r}.stdout.err'))}", file=sys.stderr)
                    return 1
                if not os.path.isfile(out):
                    print(f"fb-graph {phase} exited {rc} but wrote no {out}", file=sys.stderr)
                    return 1
                runs[phase].append((wall, rss))
                log(f"[{r + 1}/{args.repeat}] {phase:8s} {wall:8.3f}s  {rss / 1024:7.1f} MiB"
                    f"  (exit {rc})")
            with open(os.path.join(tmp, f"cold.{r}.json"), "rb") as a, \
                    open(os.path.join(tmp, f"warm.{r}.json"), "rb") as b:
                if a.read() != b.read():
                    warm_identical = False
            if fb_info is None:
                fb_info = summarize_entities(os.path.join(tmp, f"cold.{r}.json"))

        med = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
        peak = {k: max(m for _, m in v) / 1024.0 for k, v in runs.items()}
        base_paths = sorted(os.path.relpath(f, corpus).replace(os.sep, "/")
                            for f in iter_py_files(corpus))
        fb_paths = fb_info.pop("paths")
        only_base = sorted(set(base_paths) - set(fb_paths))
        only_fb = sorted(set(fb_paths) - set(base_paths))
        report = {
            "corpus": corpus,
            "fbgraph": fbgraph,
            "jobs": args.jobs,
            "repeat": args.repeat,
            "median_seconds": {k: round(v, 4) for k, v in med.items()},
            "all_seconds": {k: [round(w, 4) for w, _ in v] for k, v in runs.items()},
            "speedup_baseline_over_cold": round(med["baseline"] / med["cold"], 3) if med["cold"] else None,
            "speedup_baseline_over_warm": round(med["baseline"] / med["warm"], 3) if med["warm"] else None,
            "peak_rss_mib": {k: round(v, 1) for k, v in peak.items()},
            "baseline": base_info,
            "fbgraph_output": fb_info,
            "warm_output_identical_to_cold": warm_identical,
            "files_only_in_baseline_walk": only_base[:20],
            "files_only_in_fbgraph": only_fb[:20],
            "n_files_only_in_baseline_walk": len(only_base),
            "n_files_only_in_fbgraph": len(only_fb),
        }
        if args.check:
            proc = subprocess.run([args.python, os.path.join(HERE, "ast_agreement.py"), corpus,
                                   os.path.join(tmp, "cold.0.json"), "--json"],
                                  capture_output=True, text=True)
            try:
                agr = json.loads(proc.stdout)
                report["ast_agreement"] = {k: agr[k] for k in (
                    "agreement_percent", "ast_defs", "table_defs", "exact_matches",
                    "only_in_ast", "only_in_table", "attribute_mismatches",
                    "files_skipped_by_ast")}
            except (ValueError, KeyError):
                report["ast_agreement"] = {"error": proc.stderr[-2000:]}
        if args.keep:
            report["tmpdir"] = tmp
        if args.json:
            json.dump(report, sys.stdout, indent=2, sort_keys=True)
            print()
        else:
            print(f"\ncorpus {corpus}  (jobs={args.jobs}, median of {args.repeat})")
            print(f"{'run':<22}{'seconds':>10}{'baseline/x':>12}{'peak RSS MiB':>14}")
            for k, label in (("baseline", "baseline (ast, 1 proc)"), ("cold", "fb-graph cold"),
                             ("warm", "fb-graph warm")):
                ratio = med["baseline"] / med[k] if med[k] else float("inf")
                print(f"{label:<22}{med[k]:>10.3f}{ratio:>11.2f}x{peak[k]:>14.1f}")
            print(f"\nbaseline: {base_info['files']} files, {base_info['ast_failed']} rejected by ast,"
                  f" {base_info['defs']} defs/classes")
            print(f"fb-graph: {fb_info['files']} files, {fb_info['files_with_parse_errors']} with"
                  f" parse_errors, {fb_info['entities']} entities (incl. module entities)")
            print(f"warm output byte-identical to cold: {warm_identical}")
            if "ast_agreement" in report:
                a = report["ast_agreement"]
                if "error" in a:
                    print(f"ast agreement: failed to run: {a['error']}")
                else:
                    print(f"ast agreement: {a['agreement_percent']}% ({a['exact_matches']} matches,"
                          f" {a['only_in_ast']} only in ast, {a['only_in_table']} only in table,"
                          f" {a['attribute_mismatches']} attribute mismatches)")
            if only_base or only_fb:
                print(f"file sets differ: {len(only_base)} only in baseline walk, "
                      f"{len(only_fb)} only in fb-graph, e.g. {(only_base + only_fb)[:5]}")
            if args.keep:
                print(f"outputs kept in {tmp}")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
