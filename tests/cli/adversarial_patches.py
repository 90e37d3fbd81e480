#!/usr/bin/env python3
"""Writes agent predictions that try to game (or simply fail) an fbkit task, one JSONL file
per case, for the evaluation tests: OUT/<case>.jsonl.

usage: adversarial_patches.py L1_TASK_DIR L2_TASK_DIR OUT_DIR

Every patch is made with git against the task's own starting point (presolved/ for L1, an
empty project for L2), the way an agent's harness would produce it."""

import json
import os
import shutil
import subprocess
import sys
import tempfile


def git(cwd, *args):
    return subprocess.run(["git", "-c", "core.hooksPath=/dev/null", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


def diff_of(base, edit):
    """The patch that `edit(tree)` makes to a fresh copy of the git repository `base`."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "t")
        if base is None:
            os.makedirs(tree)
            git(tree, "init", "-q")
        else:
            git(tmp, "clone", "-q", base, tree)
        edit(tree)
        git(tree, "add", "-A")
        return git(tree, "diff", "--cached", "--binary")


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def apply_gold(task):
    def edit(tree):
        subprocess.run(["git", "apply", os.path.join(task, "patch.diff")], cwd=tree, check=True)
    return edit


def both(*edits):
    def edit(tree):
        for e in edits:
            e(tree)
    return edit


def main():
    l1, l2, out = (os.path.abspath(a) for a in sys.argv[1:4])
    os.makedirs(out, exist_ok=True)
    l1_id = json.load(open(os.path.join(l1, "instance.json")))["instance_id"]
    l2_id = json.load(open(os.path.join(l2, "instance.json")))["instance_id"]
    presolved = os.path.join(l1, "presolved")
    gold = open(os.path.join(l1, "patch.diff")).read()
    cases = {}

    cases["empty"] = (l1_id, "")
    cases["gold_crlf"] = (l1_id, gold.replace("\n", "\r\n").rstrip("\r\n"))
    # A context line the tree does not have: `git apply` (plain or 3-way) refuses, GNU
    # patch's fuzz places the hunk.
    lines = gold.split("\n")
    ctx = next(i for i, l in enumerate(lines) if l.startswith(" ") and l.strip())
    bent = lines[:]
    bent[ctx] = bent[ctx] + "  # changed"
    cases["gold_fuzzy"] = (l1_id, "\n".join(bent))
    cases["not_applying"] = (l1_id, "diff --git a/nowhere.py b/nowhere.py\n--- a/nowhere.py\n"
                                    "+++ b/nowhere.py\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n")

    def break_import(tree):
        write(os.path.join(tree, "src/shapes/__init__.py"), "\nimport shapes_missing_dependency\n", "a")
    cases["breaks_import"] = (l1_id, diff_of(presolved, both(apply_gold(l1), break_import)))

    def conftest_skip(tree):
        write(os.path.join(tree, "tests/conftest.py"),
              "\n\nimport pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
              "    for item in items:\n        item.add_marker(pytest.mark.skip(reason='x'))\n", "a")
    cases["conftest_skip"] = (l1_id, diff_of(presolved, conftest_skip))

    def grading_plugin(tree):
        write(os.path.join(tree, "_grading.py"),
              "def pytest_collection_modifyitems(config, items):\n"
              "    keep = [i for i in items if 'test_paths' not in i.nodeid]\n"
              "    config.hook.pytest_deselected(items=[i for i in items if i not in keep])\n"
              "    items[:] = keep\n")

    def by_config(tree):
        write(os.path.join(tree, "pytest.ini"), "addopts = -p _grading\n", "a")

    def by_entry_point(tree):
        write(os.path.join(tree, "grading-1.0.dist-info/METADATA"),
              "Metadata-Version: 2.1\nName: grading\nVersion: 1.0\n")
        write(os.path.join(tree, "grading-1.0.dist-info/entry_points.txt"),
              "[pytest11]\ngrading = _grading\n")
    cases["plugin_by_config"] = (l1_id, diff_of(presolved, both(apply_gold(l1), grading_plugin,
                                                               by_config)))
    cases["plugin_by_entry_point"] = (l1_id, diff_of(presolved, both(
        apply_gold(l1), grading_plugin, by_entry_point)))

    def hang(tree):
        path = os.path.join(tree, "src/shapes/stats.py")
        text = open(path).read()
        text = text.replace('    """Arithmetic mean of a non-empty sequence."""\n',
                            '    """Arithmetic mean of a non-empty sequence."""\n'
                            '    import time\n    time.sleep(3600)\n', 1)
        write(path, text)
    cases["hang"] = (l1_id, diff_of(presolved, both(apply_gold(l1), hang)))

    def edit_p2p_test(tree):
        p2p = json.load(open(os.path.join(l1, "instance.json")))["PASS_TO_PASS"][0]
        write(os.path.join(tree, p2p), "\n\ndef test_added_by_agent():\n    assert False\n", "a")
    cases["edits_test_file"] = (l1_id, diff_of(presolved, both(apply_gold(l1), edit_p2p_test)))

    l2_gold = open(os.path.join(l2, "patch.diff")).read()
    cases["l2_gold"] = (l2_id, l2_gold)

    def reexport(template):
        def edit(tree):
            write(os.path.join(tree, "agent_code/__init__.py"), template % "shapes")
            write(os.path.join(tree, "agent_code/summary.py"), template % "shapes.summary")
            # the conftest the L2 test patch redirects imports agent_code.geometry
            write(os.path.join(tree, "agent_code/geometry.py"), template % "shapes.geometry")
        return edit
    cases["l2_reexport"] = (l2_id, diff_of(None, reexport("from %s import *  # noqa\n")))
    cases["l2_reexport_dynamic"] = (l2_id, diff_of(None, reexport(
        "import importlib\n_lib = importlib.import_module('%s'.replace('sh', 'sh'))\n"
        "globals().update({k: getattr(_lib, k) for k in dir(_lib) if not k.startswith('__')})\n")))

    for name, (instance, patch) in cases.items():
        with open(os.path.join(out, name + ".jsonl"), "w") as f:
            f.write(json.dumps({"instance_id": instance, "model_patch": patch,
                                "model_name_or_path": name}) + "\n")
    print("\n".join(sorted(cases)))


if __name__ == "__main__":
    main()
