#!/usr/bin/env python3
"""Independent check of fb-extract's task directories, with plain pytest and pyflakes.

For every L1 task in OUT (and L2 tasks, from their L1 sibling):
  1. clone presolved/, apply test_patch.diff; pytest (junit XML, no fbkit plugin) on the
     F2P and P2P files: every P2P test passes, the F2P pass rate is <= --f2p-max-pass;
  2. apply patch.diff: every F2P and P2P test passes;
  3. pyflakes finds no undefined name in presolved/ that the original (presolved + patch)
     does not have, except the dangling references instance.json declares (code no P2P
     test executes, FeatureBench's rule; none with --strict-references).
Prints one line per task as it is checked and a summary; a task whose check cannot run (a
patch that does not apply, a missing L1 sibling) is reported as failed with the reason and
the others go on; exit status 1 when any task misbehaves.

usage: check_tasks.py OUT [--python /usr/bin/python3] [--f2p-max-pass 0.3] [--jobs N]
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def run(cmd, cwd, env=None, check=True):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed in {cwd}:\n{p.stdout[-2000:]}")
    return p


def junit_outcomes(xml_path):
    """test id -> passed/failed/skipped, from pytest's junit XML."""
    out = {}
    if not os.path.exists(xml_path):
        return out
    for case in ET.parse(xml_path).iter("testcase"):
        file = case.get("file")
        classname = case.get("classname", "")
        name = case.get("name")
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                outcome = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        out[(file, classname, name)] = outcome
    return out


def nodeid_key(nodeid):
    """(file, classname, name) as junit writes it, from a pytest node id."""
    bracket = nodeid.find("[")
    head, params = (nodeid, "") if bracket < 0 else (nodeid[:bracket], nodeid[bracket:])
    parts = head.split("::")  # parametrisation ids may hold "::" themselves
    parts[-1] += params
    file = parts[0]
    module = file[:-3].replace("/", ".") if file.endswith(".py") else file
    name = parts[-1]
    classname = ".".join([module] + parts[1:-1])
    return file, classname, name


def pytest(repo, settings, files, tmp, tag):
    xml = os.path.join(tmp, f"{tag}.xml")
    env = dict(os.environ)
    paths = [p if os.path.isabs(p) else os.path.join(repo, p) for p in settings.get("pythonpath", [])]
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    cmd = [settings["python"], "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "--continue-on-collection-errors", f"--junitxml={xml}", "-o", "junit_family=xunit1"]
    cmd += settings.get("pytest_args", []) + files
    run(cmd, repo, env, check=False)
    raw = junit_outcomes(xml)
    # junit's file attribute may be missing; index by (classname, name) too.
    by_name = {(k[1], k[2]): v for k, v in raw.items()}
    return lambda nodeid: by_name.get(nodeid_key(nodeid)[1:], "missing")


def passed(outcome):
    return outcome in ("passed", "xfailed")


UNDEFINED = re.compile(r"^(?P<file>[^:]+):\d+:\d+:? (?P<msg>undefined name .*)$")


def undefined_names(python, tree):
    p = run([python, "-m", "pyflakes", "."], tree, check=False)
    found = set()
    for line in p.stdout.splitlines():
        m = UNDEFINED.match(line)
        if m:
            found.add((os.path.normpath(m.group("file")), m.group("msg")))
    return found


def declared(flake, inst):
    """Whether a new undefined name is one of the task's declared dangling references
    (FeatureBench's rule: code no P2P test runs may still name what was removed)."""
    path, msg = flake
    name = msg.split("'")[1] if "'" in msg else msg
    for ref in inst.get("dangling_references", []):
        where, _, used = ref.partition(" uses ")
        if os.path.normpath(where.split(":")[0]) == path and name in used.split("."):
            return True
    return False


def check(task_dir, args):
    inst = json.load(open(os.path.join(task_dir, "instance.json")))
    settings = json.loads(inst["repo_settings"])
    if args.python:
        settings["python"] = args.python
    level = inst["level"]
    tmp = tempfile.mkdtemp(prefix="fbkit-check-")
    try:
        repo = os.path.join(tmp, "repo")
        base = task_dir if level == 1 else task_dir[:-1] + "1"
        run(["git", "clone", "-q", os.path.join(base, "presolved"), repo], tmp)
        if level == 2:
            run(["git", "apply", os.path.join(base, "patch.diff")], repo)
        presolved_flakes = undefined_names(settings["python"], repo) if level == 1 else set()
        run(["git", "apply", os.path.join(task_dir, "test_patch.diff")], repo)
        files = inst["FAIL_TO_PASS"] + inst["PASS_TO_PASS"]
        before = pytest(repo, settings, files, tmp, "before")
        # fbkit.task/2: ids in f2p_tests / p2p_tests (the *_test_points are counts)
        v1 = isinstance(inst.get("f2p_test_points"), list)
        f2p = inst["f2p_test_points"] if v1 else inst["f2p_tests"]
        p2p = inst["p2p_test_points"] if v1 else inst["p2p_tests"]
        problems = []
        bad_p2p = [t for t in p2p if not passed(before(t))]
        if bad_p2p:
            problems.append(f"{len(bad_p2p)} P2P fail before the patch, e.g. {bad_p2p[0]} {before(bad_p2p[0])}")
        rate = sum(passed(before(t)) for t in f2p) / max(1, len(f2p))
        if rate > args.f2p_max_pass:
            problems.append(f"F2P pass rate {rate:.2f} before the patch")
        run(["git", "apply", os.path.join(task_dir, "patch.diff")], repo)
        after = pytest(repo, settings, files, tmp, "after")
        bad = [t for t in f2p + p2p if not passed(after(t))]
        if bad:
            problems.append(f"{len(bad)} tests fail after the patch, e.g. {bad[0]} {after(bad[0])}")
        if level == 1:
            # The original tree: presolved + patch, with the F2P file (test patch) too.
            new = presolved_flakes - undefined_names(settings["python"], repo)
            undeclared = sorted(n for n in new if not declared(n, inst))
            if undeclared:
                problems.append(f"pyflakes: {len(undeclared)} new undefined names not in "
                                f"dangling_references, e.g. {undeclared[0]}")
        return inst["instance_id"], rate, problems
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_or_error(task_dir, args):
    """check(), with an error that stops this task's check as its one problem."""
    try:
        return check(task_dir, args)
    except Exception as e:  # noqa: BLE001 -- one task's failure must not end the others
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return os.path.basename(task_dir), 0.0, [f"check could not run: {first}"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--python", default=None)
    ap.add_argument("--f2p-max-pass", type=float, default=0.3)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)
    tasks = sorted(d for d in os.listdir(args.out)
                   if os.path.exists(os.path.join(args.out, d, "instance.json")))
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = pool.map(lambda d: check_or_error(os.path.join(args.out, d), args), tasks)
        for instance_id, rate, problems in results:
            status = "ok" if not problems else "FAIL"
            failed += bool(problems)
            print(f"{status:4} {instance_id}  F2P pass rate before: {rate:.2f}")
            for p in problems:
                print(f"       {p}")
            sys.stdout.flush()
    print(f"{len(tasks)} tasks checked, {len(tasks) - failed} ok, {failed} failed")
    return 1 if failed or not tasks else 0


if __name__ == "__main__":
    sys.exit(main())
