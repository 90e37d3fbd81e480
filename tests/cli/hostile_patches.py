#!/usr/bin/env python3
"""Writes agent predictions whose code attacks the machine that evaluates it, one JSONL file
per case, for the sandbox tests: OUT/<case>.jsonl.

usage: hostile_patches.py L1_TASK_DIR OUT_DIR HOST_DIR HOME_DIR PORT ORIGINAL_REPO

Each patch is the task's gold patch plus, at the end of the first non-test Python module it
changes, code that runs when the library is imported and tries one attack. Where the attack
succeeds the code raises, so the patch resolves the task exactly when the sandbox stopped
the attack; the caller checks the host side too (HOST_DIR stays empty, the listener on PORT
gets no connection, the secret in HOME_DIR is not read)."""

import json
import os
import subprocess
import sys
import tempfile

ATTACKS = {
    # Writes into a directory of the host and into /etc.
    "write_outside": """
def _attack():
    import os
    for path in (os.path.join({host!r}, "escaped.txt"), "/etc/fbkit-escaped.txt"):
        try:
            with open(path, "w") as f:
                f.write("escaped")
        except OSError:
            continue
        raise RuntimeError("ATTACK SUCCEEDED: wrote " + path)
""",
    # Reads the user's home (a secret planted by the caller) and /root.
    "read_home": """
def _attack():
    import os
    try:
        secret = open(os.path.join({home!r}, "secret.txt")).read()
    except OSError:
        secret = None
    if secret is not None:
        raise RuntimeError("ATTACK SUCCEEDED: read " + secret)
    if os.path.isdir("/root") and os.listdir("/root"):
        raise RuntimeError("ATTACK SUCCEEDED: /root holds " + repr(os.listdir("/root")))
""",
    # Reads credentials from the environment.
    "steal_token": """
def _attack():
    import os
    if "FBKIT_HOSTILE_TOKEN" in os.environ:
        raise RuntimeError("ATTACK SUCCEEDED: token " + os.environ["FBKIT_HOSTILE_TOKEN"])
""",
    # Connects to a listener of the host on loopback.
    "socket": """
def _attack():
    import socket
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    except OSError:
        return
    raise RuntimeError("ATTACK SUCCEEDED: connected to the host")
""",
    # Starts 1,000 processes (`sleep PORT`: the caller looks for its own, tests run in parallel).
    "fork_bomb": """
def _attack():
    import subprocess
    children = []
    try:
        for _ in range(1000):
            children.append(subprocess.Popen(["sleep", "{port}"]))
    except OSError:
        pass
    for c in children:
        c.kill()
        c.wait()
    if len(children) >= 1000:
        raise RuntimeError("ATTACK SUCCEEDED: 1000 processes")
""",
    # Allocates 4 GiB.
    "memory": """
def _attack():
    try:
        block = bytearray(4 << 30)
    except MemoryError:
        return
    raise RuntimeError("ATTACK SUCCEEDED: allocated %d bytes" % len(block))
""",
    # Writes a 2 GiB file in its working directory.
    "big_file": """
def _attack():
    import os
    written = 0
    try:
        with open("fbkit-big-file", "wb") as f:
            chunk = bytes(1 << 20)
            while written < 2048 << 20:
                f.write(chunk)
                f.flush()
                written += 1 << 20
    except OSError:
        return
    finally:
        if os.path.exists("fbkit-big-file"):
            os.remove("fbkit-big-file")
    raise RuntimeError("ATTACK SUCCEEDED: wrote 2 GiB")
""",
    # Writes kernel settings: the value each already has (harmless even if it got through).
    "sysctl": """
def _attack():
    for name in ("kernel/core_pattern", "vm/overcommit_memory", "kernel/hostname"):
        path = "/proc/sys/" + name
        try:
            value = open(path).read()
            with open(path, "w") as f:
                f.write(value)
        except OSError:
            continue
        raise RuntimeError("ATTACK SUCCEEDED: wrote " + path)
""",
    # Reads what only root may read, the user's repository and the task (its gold patch).
    "read_private": """
def _attack():
    import os
    for path in ("/etc/shadow", os.path.join({original!r}, "README.md"),
                 os.path.join({task!r}, "patch.diff"), os.path.join({task!r}, "instance.json")):
        try:
            open(path).read(1)
        except OSError:
            continue
        raise RuntimeError("ATTACK SUCCEEDED: read " + path)
""",
    # Plants a git filter in the work copy's .git/config (host-side git would run it).
    "git_config": """
def _attack():
    import os, subprocess
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                         text=True).stdout.strip() or os.getcwd()
    for name in ("config", "hooks/post-checkout", "info/attributes"):
        path = os.path.join(top, ".git", name)
        try:
            with open(path, "a") as f:
                f.write("[filter \\"x\\"]\\n\\tclean = touch {host}/filter-ran\\n")
        except OSError:
            continue
        raise RuntimeError("ATTACK SUCCEEDED: wrote " + path)
""",
    # Plants links and FIFOs where fbkit writes and reads (its run directory, the children's
    # journals), and rewrites fbkit's own plugin.
    "plant_links": """
def _attack():
    import os
    children = os.environ.get("FBKIT_TRACE_CHILD_DIR", "")
    if children and os.path.isdir(children):
        try:
            os.symlink(os.path.join({home!r}, "secret.txt"), os.path.join(children, "child-1.jsonl"))
            os.mkfifo(os.path.join(children, "child-2.jsonl"))
        except OSError:
            pass
    run = os.path.dirname(os.path.dirname(children)) if children else ""
    if not run:
        return
    # Where fbkit writes its next session's log: a link there would make it write the host's
    # file. Whether the link lands anywhere but the sandbox's own view is for the host to
    # see (the caller checks that the victim file never appears).
    try:
        os.symlink(os.path.join({host!r}, "victim"), os.path.join(run, "session-2.log"))
    except OSError:
        pass
    path = os.path.join(run, "agent", "fbkit_agent.py")
    try:
        open(path, "a").write("\\n")
    except OSError:
        return
    raise RuntimeError("ATTACK SUCCEEDED: rewrote " + path)
""",
    # Kills every process it may signal, then its own process group.
    "kill_all": """
def _attack():
    import os, signal
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.killpg(os.getpgrp(), signal.SIGKILL)
""",
}


def git(cwd, *args):
    return subprocess.run(["git", "-c", "core.hooksPath=/dev/null", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


def target_module(gold):
    for line in gold.splitlines():
        if line.startswith("+++ b/") and line.endswith(".py"):
            path = line[6:]
            name = os.path.basename(path)
            if not name.startswith("test_") and name != "conftest.py" and "/tests/" not in "/" + path:
                return path
    raise SystemExit("the gold patch changes no library module")


def main():
    task, out, host, home, port, original = sys.argv[1:7]
    task = os.path.abspath(task)
    os.makedirs(out, exist_ok=True)
    instance = json.load(open(os.path.join(task, "instance.json")))["instance_id"]
    gold_path = os.path.join(task, "patch.diff")
    module = target_module(open(gold_path).read())
    for name, template in ATTACKS.items():
        code = template.format(host=host, home=home, port=int(port), original=original,
                               task=task) + "\n\n_attack()\n"
        with tempfile.TemporaryDirectory() as tmp:
            tree = os.path.join(tmp, "t")
            git(tmp, "clone", "-q", os.path.join(task, "presolved"), tree)
            subprocess.run(["git", "apply", gold_path], cwd=tree, check=True)
            with open(os.path.join(tree, module), "a") as f:
                f.write("\n" + code)
            git(tree, "add", "-A")
            patch = git(tree, "diff", "--cached", "--binary")
        with open(os.path.join(out, name + ".jsonl"), "w") as f:
            f.write(json.dumps({"instance_id": instance, "model_patch": patch,
                                "model_name_or_path": "hostile-" + name}) + "\n")
    print("\n".join(sorted(ATTACKS)))


if __name__ == "__main__":
    main()
