#!/usr/bin/env python3
"""One FeatureBench row replayed with plain podman or docker: the steps its harness's `fb eval`
takes (featurebench 0.2.3, harness/runtime.py; docs/containers.md) in a container of the row's
`image_name`, for CI where the harness itself is not installed.

L1: /root/my_repo restored over /testbed, the row's mask patch applied, the F2P files removed,
a fresh git commit, the candidate patch applied (gold: the mask reversed), the F2P files
restored from the test patch, then the test_cmd on the F2P file and on every P2P file:
resolved when every run exits 0.
L2: /testbed emptied to one commit, the candidate patch applied there and installed with
`pip install .` in the activated environment, the original restored, the test patch applied,
the test_cmd on the F2P file: resolved when it exits 0.

Usage: featurebench_replay.py ENGINE ROWS.jsonl INSTANCE_ID gold|noop
Prints resolved, unresolved or error (and why, on stderr).
"""
import json
import os
import subprocess
import sys
import tempfile

NOOP = ("diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\nindex 0000000..e69de29\n"
        "--- /dev/null\n+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+nothing here\n")
ACTIVATE = "source /opt/miniconda3/etc/profile.d/conda.sh && conda activate testbed && "
GIT_INIT = ("cd /testbed && git init -q && git config user.email fb@bench.com && "
            "git config user.name FeatureBench && git add -A && "
            "git commit -q -m 'Initial commit for FeatureBench evaluation' --allow-empty")


class Container:
    def __init__(self, engine, image):
        self.engine, self.name = engine, f"fbkit-fb-replay-{os.getpid()}"
        self.run_engine("run", "-d", "--name", self.name, image, "tail", "-f", "/dev/null", check=True)

    def run_engine(self, *args, check=False):
        return subprocess.run([self.engine, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, check=check)

    def sh(self, command):
        return self.run_engine("exec", self.name, "/bin/bash", "-c", command)

    def put(self, text, path):
        with tempfile.NamedTemporaryFile("w", suffix=".diff", delete=False) as f:
            f.write(text)
        try:
            self.run_engine("cp", f.name, f"{self.name}:{path}", check=True)
        finally:
            os.unlink(f.name)

    def remove(self):
        self.run_engine("rm", "-f", self.name)


def tested(c, row, path):
    settings = json.loads(row["repo_settings"])
    path = path if path.startswith("/testbed/") else "/testbed/" + path
    return c.sh(ACTIVATE + f"cd /testbed && {settings['test_cmd']} {path}")


def level1(c, row, which):
    f2p = ["/testbed/" + p for p in row["FAIL_TO_PASS"]]
    c.put(row["patch"], "/tmp/mask.diff")
    c.put(row["test_patch"], "/tmp/test.diff")
    steps = [ACTIVATE + "rm -rf /testbed/* && cp -r /root/my_repo/* /testbed/",
             "cd /testbed && git apply --whitespace=fix /tmp/mask.diff", "rm -f " + " ".join(f2p),
             "cd /testbed && rm -rf .git && " + GIT_INIT]
    steps.append("cd /testbed && git apply -R --whitespace=fix /tmp/mask.diff" if which == "gold" else None)
    for step in steps:
        if step is None:
            c.put(NOOP, "/tmp/agent.diff")
            step = "cd /testbed && git apply --whitespace=fix /tmp/agent.diff"
        r = c.sh(step)
        if r.returncode != 0:
            return "error", f"{step}: {r.stdout[-2000:]}"
    r = c.sh("rm -f " + " ".join(f2p) + " && cd /testbed && git apply --reverse --whitespace=fix /tmp/test.diff")
    if r.returncode != 0:
        return "error", f"the F2P files not restored: {r.stdout[-2000:]}"
    for path in row["FAIL_TO_PASS"] + list(row["PASS_TO_PASS"]):
        r = tested(c, row, path)
        if r.returncode != 0:
            return "unresolved", f"{path}: exit {r.returncode}: {r.stdout[-2000:]}"
    return "resolved", ""


def level2(c, row, which):
    c.put(row["patch"] if which == "gold" else NOOP, "/tmp/agent.diff")
    c.put(row["test_patch"], "/tmp/test.diff")
    for step in ["rm -rf /testbed/* /testbed/.* 2>/dev/null; mkdir -p /testbed && " + GIT_INIT,
                 "cd /testbed && git apply --whitespace=fix /tmp/agent.diff"]:
        r = c.sh(step)
        if r.returncode != 0:
            return "error", f"{step}: {r.stdout[-2000:]}"
    c.sh(ACTIVATE + "cd /testbed && pip install .")  # a failed install is not an error there
    for step in [ACTIVATE + "rm -rf /testbed/* && cp -r /root/my_repo/* /testbed/",
                 "cd /testbed && git apply --whitespace=fix /tmp/test.diff"]:
        r = c.sh(step)
        if r.returncode != 0:
            return "error", f"{step}: {r.stdout[-2000:]}"
    r = tested(c, row, row["FAIL_TO_PASS"][0])
    return ("resolved", "") if r.returncode == 0 else ("unresolved", r.stdout[-2000:])


def main():
    engine, rows, instance_id, which = sys.argv[1:5]
    row = next(json.loads(l) for l in open(rows) if json.loads(l)["instance_id"] == instance_id)
    c = Container(engine, row["image_name"])
    try:
        verdict, why = (level2 if instance_id.endswith(".lv2") else level1)(c, row, which)
    finally:
        c.remove()
    print(verdict)
    if why:
        print(why, file=sys.stderr)


if __name__ == "__main__":
    main()
