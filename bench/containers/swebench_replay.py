#!/usr/bin/env python3
"""One SWE-bench 5 row replayed with plain podman or docker, the steps its harness takes
(docs/containers.md): a container of the row's `image`, the patch applied in /testbed with
`git apply`, the row's `eval_script` run with bash, the `STATUS ID` lines between the markers
read as parse_log_pytest_v2 reads them, and its pass_and_fail rule: every FAIL_TO_PASS test
PASSED or XFAIL, every PASS_TO_PASS test PASSED, XFAIL or SKIPPED.

Usage: swebench_replay.py ENGINE ROWS.jsonl INSTANCE_ID gold|noop
Prints resolved, unresolved or error (and why, on stderr).
"""
import json
import os
import subprocess
import sys
import tempfile

NOOP = ("diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\nindex 0000000..e69de29\n"
        "--- /dev/null\n+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+nothing here\n")
STATUSES = ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL")


def main():
    engine, rows, instance_id, which = sys.argv[1:5]
    row = next(json.loads(l) for l in open(rows) if json.loads(l)["instance_id"] == instance_id)
    patch = row["patch"] if which == "gold" else NOOP
    name = f"fbkit-swe-replay-{os.getpid()}"
    def run(*a, **k):
        return subprocess.run([engine, *a], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **k)
    run("run", "-d", "--name", name, row["image"], "tail", "-f", "/dev/null", check=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for fname, text in (("patch.diff", patch), ("eval.sh", row["eval_script"])):
                with open(os.path.join(tmp, fname), "w") as f:
                    f.write(text)
                run("cp", os.path.join(tmp, fname), f"{name}:/tmp/{fname}", check=True)
        applied = run("exec", "-w", "/testbed", name, "git", "apply", "--verbose", "/tmp/patch.diff")
        if applied.returncode != 0:
            print("error")
            print(applied.stdout, file=sys.stderr)
            return
        out = run("exec", name, "/bin/bash", "/tmp/eval.sh").stdout
    finally:
        run("rm", "-f", name)
    if ">>>>> Start Test Output" not in out or ">>>>> End Test Output" not in out or ">>>>> Tests Errored" in out:
        print("error")
        print(out[-2000:], file=sys.stderr)
        return
    body = out.split(">>>>> Start Test Output", 1)[1].split(">>>>> End Test Output", 1)[0]
    status = {}
    for line in body.splitlines():
        word = line.split(" ", 1)
        if len(word) == 2 and word[0] in STATUSES:
            status[word[1].strip()] = word[0]
    f2p, p2p = json.loads(row["FAIL_TO_PASS"]), json.loads(row["PASS_TO_PASS"])
    ok = (all(status.get(t) in ("PASSED", "XFAIL") for t in f2p)
          and all(status.get(t) in ("PASSED", "XFAIL", "SKIPPED") for t in p2p))
    print("resolved" if ok else "unresolved")


if __name__ == "__main__":
    main()
