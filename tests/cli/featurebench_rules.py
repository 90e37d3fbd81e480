#!/usr/bin/env python3
"""Checks an `fb-extract export --format featurebench` file with FeatureBench's own rules.

For every row, the steps FeatureBench's harness and infer runtime take inside their
containers (featurebench/harness/runtime.py, featurebench/infer/runtime.py) are taken here
on a checkout of ORIGINAL at the row's base_commit, and the trees are compared with the
task directories fbkit wrote (git tree hashes, i.e. byte for byte):

  L1  pre-solved   = git apply --whitespace=fix PATCH; rm -f FAIL_TO_PASS files
                     == TASKS/ID/presolved (its HEAD tree)
      gold fix     = featurebench.harness.utils.preprocess_hf_patch(PATCH, FAIL_TO_PASS),
                     applied with git apply --whitespace=fix --verbose
                     == presolved/ with fbkit's patch.diff applied
      tests back   = rm -f FAIL_TO_PASS[0]; git apply --reverse --whitespace=fix TEST_PATCH
                     == the original tree at base_commit
  L2  test tree    = the original; git apply --whitespace=fix TEST_PATCH
                     == the L1 task's original without the F2P file + fbkit's L2 test_patch.diff

The gold-fix builder is FeatureBench's own code, imported from a FeatureBench checkout (a
directory, or a bare git mirror whose `featurebench/` is extracted): --featurebench DIR or
$FEATUREBENCH_SRC. FeatureBench needs Python >= 3.12 and pandas for other parts; the module
used here needs only pandas' isna/notna names at import time, stubbed when pandas is absent.
Without a checkout the script prints why and exits 77 (skipped).

usage: featurebench_rules.py EXPORT.jsonl TASKS ORIGINAL [--featurebench DIR]
ORIGINAL: the repository the tasks were extracted from (a git checkout, read only).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types

SKIP = 77
GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")


def git(cwd, *args, stdin=None, check=True):
    r = subprocess.run(["git", "-c", "core.autocrlf=false", "-c", "init.defaultBranch=main",
                        *args], cwd=cwd, input=stdin, capture_output=True, env=GIT_ENV)
    if check and r.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {cwd}: {r.stderr.decode(errors='replace')}")
    return r.stdout.decode(errors="replace").strip()


def load_featurebench(src, scratch):
    """Imports featurebench.harness.utils from a checkout or a bare mirror."""
    if not src or not os.path.exists(src):
        return None
    root = src
    if not os.path.isdir(os.path.join(src, "featurebench")):  # a bare git mirror
        root = os.path.join(scratch, "featurebench-src")
        os.makedirs(root)
        tar = subprocess.run(["git", "--git-dir", src, "archive", "HEAD", "featurebench"],
                             capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", root], input=tar, check=True)
    try:
        import pandas  # noqa: F401
    except ImportError:
        stub = types.ModuleType("pandas")
        stub.DataFrame = stub.Series = object
        stub.isna = lambda v: v is None
        stub.notna = lambda v: v is not None
        sys.modules["pandas"] = stub
    sys.path.insert(0, root)
    from featurebench.harness import utils
    return utils


def write(path, text):
    if text and not text.endswith("\n"):  # the harness's _normalize_patch_content
        text += "\n"
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    return path


def tree_of_worktree(repo):
    git(repo, "add", "-A")
    return git(repo, "write-tree")


def checkout(original, commit, dest):
    git(os.path.dirname(dest), "clone", "-q", "--shared", "--no-checkout", original, dest)
    git(dest, "checkout", "-q", "--detach", commit)


def fbkit_tree(task, scratch, name, patches):
    """The tree of TASK's presolved/ with `patches` (paths) applied."""
    dest = os.path.join(scratch, name)
    git(scratch, "clone", "-q", "--no-hardlinks", os.path.join(task, "presolved"), dest)
    for p in patches:
        git(dest, "apply", p)
    return tree_of_worktree(dest)


def check_l1(row, task, original, utils, scratch):
    f2p = row["FAIL_TO_PASS"]
    repo = os.path.join(scratch, "repo")
    checkout(original, row["base_commit"], repo)
    original_tree = git(repo, "rev-parse", "HEAD^{tree}")
    git(repo, "apply", "--whitespace=fix", write(os.path.join(scratch, "mask.diff"), row["patch"]))
    for path in f2p:
        os.remove(os.path.join(repo, path)) if os.path.exists(os.path.join(repo, path)) else None
    problems = []
    want = git(os.path.join(task, "presolved"), "rev-parse", "HEAD^{tree}")
    if tree_of_worktree(repo) != want:
        problems.append("pre-solved tree differs from presolved/")
    gold = utils.preprocess_hf_patch(row["patch"], row["FAIL_TO_PASS"])
    git(repo, "apply", "--whitespace=fix", "--verbose", write(os.path.join(scratch, "gold.diff"), gold))
    want = fbkit_tree(task, scratch, "fbkit-gold", [os.path.join(task, "patch.diff")])
    if tree_of_worktree(repo) != want:
        problems.append("gold fix differs from patch.diff")
    first = os.path.join(repo, f2p[0])
    if os.path.exists(first):
        os.remove(first)
    git(repo, "apply", "--reverse", "--whitespace=fix",
        write(os.path.join(scratch, "test.diff"), row["test_patch"]))
    if tree_of_worktree(repo) != original_tree:
        problems.append("test patch reversed does not give the original tree")
    return problems


def check_l2(row, task, original, scratch):
    level1 = task[: -len("lv2")] + "lv1"
    repo = os.path.join(scratch, "repo")
    checkout(original, row["base_commit"], repo)
    git(repo, "apply", "--whitespace=fix", write(os.path.join(scratch, "test.diff"), row["test_patch"]))
    want = fbkit_tree(level1, scratch, "fbkit-l2",
                      [os.path.join(level1, "patch.diff"), os.path.join(task, "test_patch.diff")])
    if tree_of_worktree(repo) != want:
        return ["L2 test tree differs from fbkit's"]
    return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("export")
    ap.add_argument("tasks")
    ap.add_argument("original")
    ap.add_argument("--featurebench", default=os.environ.get("FEATUREBENCH_SRC"))

    a = ap.parse_args()
    a.tasks, a.original = os.path.abspath(a.tasks), os.path.abspath(a.original)
    scratch_root = tempfile.mkdtemp(prefix="fb-rules-")
    try:
        utils = load_featurebench(a.featurebench, scratch_root)
        if utils is None:
            print(f"skipped: no FeatureBench checkout (--featurebench / $FEATUREBENCH_SRC: "
                  f"{a.featurebench!r})")
            return SKIP
        rows = [json.loads(line) for line in open(a.export, encoding="utf-8")]
        failed = 0
        for i, row in enumerate(rows):
            scratch = os.path.join(scratch_root, str(i))
            os.makedirs(scratch)
            task = os.path.join(a.tasks, row["instance_id"])
            level = row["instance_id"].rsplit(".", 1)[-1]
            try:
                problems = (check_l1(row, task, a.original, utils, scratch) if level == "lv1"
                            else check_l2(row, task, a.original, scratch))
            except Exception as e:  # one bad row never hides the others
                problems = [f"error: {e}"]
            failed += bool(problems)
            print(f"{'FAIL' if problems else 'ok  '} {row['instance_id']} {'; '.join(problems)}")
            shutil.rmtree(scratch, ignore_errors=True)
        print(f"{len(rows)} rows, {len(rows) - failed} identical, {failed} failed")
        return 1 if failed or not rows else 0
    finally:
        shutil.rmtree(scratch_root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
