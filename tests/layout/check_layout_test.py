#!/usr/bin/env python3
"""check_layout.py finds each kind of breach it exists for, in a small tree made here, and
passes the same tree without them (so its check of the real tree cannot pass by finding nothing)."""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check_layout.py")


def tree(root, files):
    sys.path.insert(0, HERE)
    import check_layout  # noqa: E402
    for room in check_layout.ROOMS:
        os.makedirs(os.path.join(root, room), exist_ok=True)
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def run(files):
    with tempfile.TemporaryDirectory() as root:
        tree(root, files)
        r = subprocess.run([sys.executable, CHECK, "--root", root], capture_output=True, text=True)
        return r.returncode, r.stdout


CLEAN = {
    "runner/spec.cc": '#include "sandbox/process.h"\n#include "util/env.h"\n',
    "cli/main.cc": '#include "extract/make/task.h"\nauto& e = util::RealEnv();\n',
    "sandbox/process.cc": "pid_t p = ::fork();\n",
    "extract/eval/run.cc": '#include "extract/taskdir/task_dir.h"\n// std::filesystem in a comment\n',
}
BREACHES = {
    "extract/eval/instance.h": ('#include "extract/infer/run.h"\n', "extract/eval/ includes extract/infer/run.h"),
    "sandbox/process.h": ('#include "runner/spec.h"\n', "sandbox/ includes runner/spec.h"),
    "model/http.cc": ("int r = system(cmd);\n", "starts a process outside sandbox/"),
    "groundtruth/mine.cc": ("auto& e = util::RealEnv();\n", "groundtruth/mine.cc:1: std::filesystem, RealEnv()"),
    "extract/eval/run.cc": ("  ::rmdir(dir.c_str());\n", "extract/eval/run.cc:1: std::filesystem, RealEnv()"),
    "tracer/journal.cc": ("std::ofstream out(path);\n", "tracer/journal.cc:1: std::filesystem, RealEnv()"),
}


def main():
    failures = []
    code, out = run(CLEAN)
    if code != 0:
        failures.append(f"a clean tree was refused:\n{out}")
    for rel, (text, expected) in BREACHES.items():
        code, out = run({**CLEAN, rel: text})
        if code != 1 or expected not in out:
            failures.append(f"{rel} with {text.strip()!r}: exit {code}, want 1 and {expected!r}:\n{out}")
    # Recorded debt: the lines it names pass, one more fails, paying it without lowering fails.
    sys.path.insert(0, HERE)
    import check_layout
    check_layout.SEAM_DEBT = {"runner/git.cc": 2}
    with tempfile.TemporaryDirectory() as root:
        tree(root, {**CLEAN, "runner/git.cc": "std::filesystem::path a;\nstd::filesystem::path b;\n"})
        if check_layout.check(root):
            failures.append(f"recorded debt was refused: {check_layout.check(root)}")
        with open(os.path.join(root, "runner/git.cc"), "a") as f:
            f.write("auto& e = util::RealEnv();\n")
        if not any("allowed 2" in p for p in check_layout.check(root)):
            failures.append("a third line past a debt of two went unnoticed")
        open(os.path.join(root, "runner/git.cc"), "w").close()
        if not any("lower the count" in p for p in check_layout.check(root)):
            failures.append("paying a debt without lowering it went unnoticed")
    for f in failures:
        print(f)
    print(f"{len(BREACHES) + 4 - len(failures)} of {len(BREACHES) + 4} cases as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
