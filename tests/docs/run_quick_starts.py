#!/usr/bin/python3
"""Runs, as written, the shell blocks of README.md and docs/*.md marked to run in CI.

Usage: run_quick_starts.py BIN_DIR [--root ROOT] [--timeout SECONDS]

A block is marked by the line `<!-- docs-test: run -->` right before its ```sh fence. Each
marked block runs with `sh -eu` in a scratch directory of its own, where `build` (the parent
of BIN_DIR, which holds the fb-* binaries in cli/), `fixtures` and `docs` are links to the
checkout's: the working directory a reader has in the checkout, without writing into it.
Blocks whose commands need the network or minutes (the click quick start) are not marked;
the checks of check_docs.py still hold them to the CLI.

Prints `FILE:LINE: ok (N s)` per block; on a failure, the block's output and
`FILE:LINE: exit N`. Exits 1 when a block fails or none is marked; 0 otherwise.
Standard library only.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

MARK = "<!-- docs-test: run -->"
LINKED = ("fixtures", "docs")


def doc_files(root):
    files = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    files += sorted(os.path.join(docs, n) for n in os.listdir(docs) if n.endswith(".md"))
    return files


def marked_blocks(path):
    """Yields (line of the fence, block text) for each ```sh block right after the mark."""
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if line.strip() != MARK:
            continue
        if i + 1 >= len(lines) or lines[i + 1].strip() not in ("```sh", "```bash"):
            raise SystemExit(f"{path}:{i + 1}: {MARK} is not followed by a ```sh fence")
        body = []
        for later in lines[i + 2:]:
            if later.strip() == "```":
                break
            body.append(later)
        else:
            raise SystemExit(f"{path}:{i + 2}: the marked block is not closed")
        yield i + 2, "\n".join(body) + "\n"


def run_block(where, text, bin_dir, root, timeout):
    scratch = tempfile.mkdtemp(prefix="fbkit-docs-")
    try:
        os.symlink(os.path.dirname(os.path.abspath(bin_dir)), os.path.join(scratch, "build"))
        for name in LINKED:
            os.symlink(os.path.join(root, name), os.path.join(scratch, name))
        start = time.monotonic()
        try:
            done = subprocess.run(["sh", "-eu", "-c", text], cwd=scratch, timeout=timeout,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        except subprocess.TimeoutExpired:
            print(f"{where}: still running after {timeout} s")
            return False
        seconds = time.monotonic() - start
        if done.returncode != 0:
            print(done.stdout, end="")
            print(f"{where}: exit {done.returncode}")
            return False
        print(f"{where}: ok ({seconds:.0f} s)")
        return True
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv):
    args = argv[1:]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    timeout = 600
    if "--root" in args:
        i = args.index("--root")
        root = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    if "--timeout" in args:
        i = args.index("--timeout")
        timeout = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        print(__doc__.strip().split("\n")[2], file=sys.stderr)
        return 2
    ok, count = True, 0
    for path in doc_files(root):
        for line, text in marked_blocks(path):
            count += 1
            where = f"{os.path.relpath(path, root)}:{line}"
            ok = run_block(where, text, args[0], root, timeout) and ok
    if count == 0:
        print(f"no block of README.md or docs/ is marked {MARK}")
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
