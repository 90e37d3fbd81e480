#!/usr/bin/env python3
"""Reproduces FeatureBench's published tasks with fbkit and scores the agreement.

For each published case (bench/data/featurebench_cases.json) it reads FeatureBench's
problem statement from a FeatureBench checkout or git mirror (its gh-pages branch,
tasks/data/<split>/<owner>__<repo>.<commit8>/<case>/problem_statement.md), finds the F2P
test file by the case name's hash (md5 of the root-relative path, 8 hex), traces and builds
the graph of the repository checkout once per repository (the test directories the cases
list), runs `fb-extract task --f2p FILE` with default options on it, and reports per case:
whether fbkit emitted a verified task (else the rejection), its lines / files / functions,
and the interfaces both statements show, with recall and precision of fbkit's against
FeatureBench's. An interface is a function, or a method shown in its class's block (a
class shown with no method counts for the methods its source defines); at level 1 it is
keyed "module:Qual.name", at level 2 (no paths shown) "Qual.name".

usage: featurebench_repro.py --featurebench SRC --cases CASES.json --work DIR
           [--fbkit build/cli] [--report OUT.json] [--only CASE ...] [--llm PROVIDER:MODEL]
           [--oracle]
With --llm the same cases are made with a model (skipped when the provider's key is unset),
so a user with a key sees the model's agreement beside the deterministic rule's. With
--oracle the model's answer is FeatureBench's own choice (the interfaces its level-1
statement shows, bench/featurebench_oracle.py): the agreement left is what the rest of the
method (candidates, P2P draw, extraction, what is shown) makes of the same choice.
Each repository entry of CASES.json names a checkout (a clone at the case's commit, which
is never written), a spec, and the test paths to trace. Exit status 1 when a case cannot be
found (bad input); rejected tasks are data.
"""

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def git_show(src, rev_path):
    """File contents from a FeatureBench checkout (a directory) or a bare mirror."""
    if os.path.isdir(os.path.join(src, "objects")):
        p = run(["git", "--git-dir", src, "show", rev_path])
    else:
        p = run(["git", "-C", src, "show", rev_path])
    if p.returncode != 0:
        raise RuntimeError(f"{src}: cannot read {rev_path}: {p.stderr.strip()}")
    return p.stdout


def published_paths(src):
    if os.path.isdir(os.path.join(src, "objects")):
        p = run(["git", "--git-dir", src, "ls-tree", "-r", "--name-only", "gh-pages", "tasks/data"])
    else:
        p = run(["git", "-C", src, "ls-tree", "-r", "--name-only", "gh-pages", "tasks/data"])
    if p.returncode != 0:
        raise RuntimeError(f"{src}: no gh-pages branch with tasks/data ({p.stderr.strip()})")
    return [l for l in p.stdout.split("\n") if l.endswith("/problem_statement.md")]


def module_of(path):
    path = path.replace("/testbed/", "").lstrip("/")
    for prefix in ("src/",):
        if path.startswith(prefix):
            path = path[len(prefix):]
    path = path[:-3] if path.endswith(".py") else path
    if path.endswith("/__init__"):
        path = path[: -len("/__init__")]
    return path.replace("/", ".")


def class_methods(root, path, cls):
    """The methods the class's own body defines in the original source."""
    try:
        tree = ast.parse(open(os.path.join(root, path), encoding="utf-8").read())
    except (OSError, SyntaxError):
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return [n.name for n in node.body
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return []


def interfaces(statement, root, level):
    """The interfaces a statement shows (FeatureBench's or fbkit's: `Path:` lines before
    Python blocks, top-level defs and classes, methods one level in)."""
    out = set()
    text = statement.split("## Interface Descriptions", 1)[-1]
    # FeatureBench's Clarification section repeats interface 1 as an example.
    text = re.split(r"### Interface Description 1\b", text, maxsplit=1)[-1] if \
        "### Interface Description 1" in text else text
    path, in_code, cls, cls_methods = None, False, None, 0

    def close_class():
        if cls and not cls_methods:  # a class shown with no method: its methods
            for m in class_methods(root, path or "", cls):
                out.add(key(f"{cls}.{m}"))

    def key(qual):
        return f"{module_of(path)}:{qual}" if level == 1 and path else qual

    for line in text.split("\n"):
        m = re.match(r"Path: `([^`]+)`", line)
        if m and not in_code:
            path = m.group(1).replace("/testbed/", "")
            continue
        if line.startswith("```"):
            if in_code:
                close_class()
                cls, cls_methods = None, 0
            in_code = not in_code
            continue
        if not in_code:
            continue
        m = re.match(r"(?:async )?def (\w+)", line)
        if m:
            close_class()
            cls, cls_methods = None, 0
            out.add(key(m.group(1)))
            continue
        m = re.match(r"class (\w+)", line)
        if m:
            close_class()
            cls, cls_methods = m.group(1), 0
            continue
        m = re.match(r"    (?:async )?def (\w+)", line)
        if m and cls:
            out.add(key(f"{cls}.{m.group(1)}"))
            cls_methods += 1
    return out


def f2p_by_hash(root, stem, md5_8):
    files = run(["git", "-C", root, "ls-files", f"*{stem}.py"]).stdout.split()
    hits = [f for f in files if hashlib.md5(f.encode()).hexdigest()[:8] == md5_8]
    return hits[0] if len(hits) == 1 else None


def prepare(repo, fbkit, work, log):
    """Trace and graph of one repository (made once, reused when present)."""
    out = os.path.join(work, repo["name"].replace("/", "__"))
    os.makedirs(out, exist_ok=True)
    trace, graph = os.path.join(out, "trace.json"), os.path.join(out, "graph.json")
    spec = ["--spec", repo["spec"]]
    timings = {}
    if not os.path.exists(trace):
        t = time.monotonic()
        p = run([os.path.join(fbkit, "fb-graph"), "trace", repo["checkout"], *spec, "--isolate",
                 "-j", "2", "--tests", *repo["tests"], "-o", trace + ".part"])
        log(f"trace {repo['name']}: exit {p.returncode} in {time.monotonic() - t:.0f} s")
        if p.returncode not in (0, 3):
            raise RuntimeError(f"trace of {repo['name']} failed:\n{p.stderr[-3000:]}")
        os.replace(trace + ".part", trace)
        timings["trace_s"] = round(time.monotonic() - t, 1)
    if not os.path.exists(graph):
        p = run([os.path.join(fbkit, "fb-graph"), "build", repo["checkout"], *spec, "--trace",
                 trace, "-o", graph])
        if p.returncode != 0:
            raise RuntimeError(f"graph of {repo['name']} failed:\n{p.stderr[-3000:]}")
    return trace, graph, out, timings


def oracle_cmd(src, published, prefix, stem, md5_8, checkout, tasks):
    """The --llm-cmd answering with the interfaces of FeatureBench's level-1 statement."""
    where = sorted(p for p in published if f"/{prefix}/{stem}.{md5_8}.lv1/" in p)
    if not where:
        where = sorted(p for p in published if f"/{prefix}/{stem}.{md5_8}.lv" in p)
    keys = interfaces(git_show(src, "gh-pages:" + where[0]), checkout, 1)
    os.makedirs(tasks, exist_ok=True)
    base = os.path.join(tasks, f"{prefix}.{stem}.{md5_8}.oracle")
    with open(base + ".keys.json", "w") as f:
        json.dump({"keys": sorted(keys), "stats": base + ".json"}, f, indent=1)
    script = os.path.abspath(os.path.join(os.path.dirname(__file__), "featurebench_oracle.py"))
    return f"/usr/bin/python3 {script} {base}.keys.json"


def score(ours, theirs):
    hit = len(ours & theirs)
    return {
        "recall": round(hit / len(theirs), 3) if theirs else None,
        "precision": round(hit / len(ours), 3) if ours else None,
        "hit": hit, "ours": len(ours), "theirs": len(theirs),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--featurebench", required=True, help="FeatureBench checkout or git mirror")
    ap.add_argument("--cases", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--fbkit", default=os.path.join(os.path.dirname(__file__), "..", "build", "cli"))
    ap.add_argument("--report")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--label", help="the tasks go to a directory of their own, tasks-LABEL "
                    "(runs with other options side by side)")
    ap.add_argument("--extract-arg", action="append", default=[],
                    help="extra fb-extract task argument (repeatable)")
    ap.add_argument("--llm", help="PROVIDER:MODEL: the tasks are made with this model (its "
                    "top objects, docstrings and Task sections; docs/models.md), in a task "
                    "directory of their own; skipped when the provider has no key")
    ap.add_argument("--oracle", action="store_true",
                    help="the tasks are made with FeatureBench's own choice as the model's "
                    "(bench/featurebench_oracle.py answers the interfaces its level-1 statement "
                    "shows), in a task directory of their own: what the rest of the method "
                    "makes of that choice")
    args = ap.parse_args()
    if args.oracle and args.llm:
        ap.error("--oracle and --llm both choose the top objects")
    log = lambda msg: print(msg, file=sys.stderr, flush=True)
    if args.llm:
        keys = {"openai": ["OPENAI_API_KEY"], "anthropic": ["ANTHROPIC_API_KEY"],
                "gemini": ["GEMINI_API_KEY", "GOOGLE_API_KEY"]}.get(args.llm.split(":")[0], [])
        local = any(a.startswith("--llm-url") for a in args.extract_arg)
        if not local and not any(os.environ.get(k) for k in keys):
            log(f"skipped: --llm {args.llm} needs {' or '.join(keys) or 'a known provider'}")
            return
        args.extract_arg += ["--llm", args.llm]
    cfg = json.load(open(args.cases))
    published = published_paths(args.featurebench)
    results = []
    made = set()  # the .lv1 directories this run made
    for repo in cfg["repositories"]:
        cases = [c for c in repo["cases"] if not args.only or c in args.only]
        if not cases:
            continue
        trace, graph, out, timings = prepare(repo, args.fbkit, args.work, log)
        prefix = repo["name"].replace("/", "__") + "." + repo["commit"][:8]
        for case in cases:
            stem, md5_8, lv = case.rsplit(".", 2)
            level = int(lv[2:])
            where = [p for p in published if f"/{prefix}/{case}/" in p]
            if not where:
                sys.exit(f"{args.cases}: case {case} not published under {prefix}")
            theirs_md = git_show(args.featurebench, "gh-pages:" + sorted(where)[0])
            f2p = f2p_by_hash(repo["checkout"], stem, md5_8)
            if not f2p:
                sys.exit(f"{args.cases}: no test file of {repo['checkout']} matches {case}")
            suffix = ("-" + args.llm.replace(":", "-").replace("/", "-") if args.llm else
                      "-oracle" if args.oracle else "") + (f"-{args.label}" if args.label else "")
            tasks = os.path.join(out, "tasks" + suffix)
            lv1_dir = os.path.join(tasks, f"{prefix}.{stem}.{md5_8}.lv1")
            t = time.monotonic()
            if lv1_dir not in made:
                # Tasks of an earlier run in --work (other options, --no-verify) are never
                # reported: made again; an .lv2 case reuses its .lv1 case's run.
                made.add(lv1_dir)
                for lv_dir in (lv1_dir, lv1_dir[:-1] + "2"):
                    shutil.rmtree(lv_dir, ignore_errors=True)
                extra = list(args.extract_arg)
                if args.oracle:
                    extra += ["--llm-cmd", oracle_cmd(args.featurebench, published, prefix, stem,
                                                      md5_8, repo["checkout"], tasks)]
                p = run([os.path.join(args.fbkit, "fb-extract"), "task", repo["checkout"], "--spec",
                         repo["spec"], "--graph", graph, "--trace", trace, "--f2p", f2p, "-o", tasks,
                         *extra])
                detail = (p.stdout + p.stderr).strip().split("\n")[-1] if p.returncode else ""
                repairs = [l.split("repaired: ", 1)[1] for l in p.stderr.split("\n")
                           if "repaired: " in l]
            else:
                detail, repairs = "", []
            seconds = round(time.monotonic() - t, 1)
            task_dir = os.path.join(tasks, f"{prefix}.{stem}.{md5_8}.lv{level}")
            row = {"case": case, "repo": repo["name"], "f2p": f2p, "level": level,
                   "emitted": os.path.exists(os.path.join(task_dir, "instance.json")),
                   "rejection": detail, "repairs": repairs, "seconds": seconds}
            theirs = interfaces(theirs_md, repo["checkout"], level)
            ours = set()
            if row["emitted"]:
                inst = json.load(open(os.path.join(task_dir, "instance.json")))
                row.update({k: inst[k] for k in ("lines", "files", "functions")})
                ours = interfaces(inst["problem_statement"], repo["checkout"], level)
            row.update(score(ours, theirs))
            stats = os.path.join(tasks, f"{prefix}.{stem}.{md5_8}.oracle.json")
            if args.oracle and os.path.exists(stats):
                # How much of FeatureBench's choice fbkit's candidates offered at all.
                o = json.load(open(stats))
                row["oracle"] = {"keys": o["keys"], "covered": len(o["covered"]),
                                 "chosen": len(o["chosen"])}
            row["missed"] = sorted(theirs - ours)
            row["extra"] = sorted(ours - theirs)
            results.append(row)
            log(f"{case}: {'emitted' if row['emitted'] else 'REJECTED ' + detail} "
                f"recall {row['recall']} precision {row['precision']} "
                f"({row['hit']}/{row['theirs']} theirs, {row['ours']} ours)")
    emitted = [r for r in results if r["emitted"]]
    total = {"cases": len(results), "emitted": len(emitted)}
    hit = sum(r["hit"] for r in results)
    theirs = sum(r["theirs"] for r in results)
    ours_emitted = sum(r["ours"] for r in emitted)
    hit_emitted = sum(r["hit"] for r in emitted)
    total["recall"] = round(hit / theirs, 3) if theirs else None
    total["precision_emitted"] = round(hit_emitted / ours_emitted, 3) if ours_emitted else None
    report = {"schema": "fbkit.bench.featurebench-repro/1", "total": total, "cases": results}
    text = json.dumps(report, indent=1, sort_keys=True) + "\n"
    if args.report:
        with open(args.report, "w") as f:
            f.write(text)
    print(f"{total['emitted']}/{total['cases']} emitted; interface recall {total['recall']}, "
          f"precision (emitted) {total['precision_emitted']}")


if __name__ == "__main__":
    main()
