#!/usr/bin/env python3
"""Checks the house rules of ARCHITECTURE.md that a compiler does not:

  (a) rooms: a C++ file includes only headers of its own room and of the rooms below it
      (ROOMS, the table of ARCHITECTURE.md; what a room may use is what its rooms use too);
  (b) processes: only sandbox/ forks or executes (fork, execve, posix_spawn, popen, system);
  (c) the file seam: std::filesystem, util::RealEnv(), util::FileLock and sandbox::RealLauncher() (and the C
      library's and POSIX's file calls: ::open, ::stat, std::ofstream, ...) appear only in
      util/, sandbox/ and cli/ (everything else receives a util::Env and a Launcher, so its
      tests can run over the fakes); SEAM_DEBT lists the files that still break it, with how
      many lines, and the list only shrinks: more lines, a new file, or fewer lines than
      recorded (lower the count) all fail.

Usage: check_layout.py [--root DIR]. Prints one line per problem (file:line: what) and exits
1 when there is any.
"""

import argparse
import os
import re
import sys

# Each room and the rooms it uses directly (ARCHITECTURE.md's table); `cli` uses them all.
ROOMS = {
    "util": [],
    "parser": ["util"],
    "sandbox": ["util"],
    "runner": ["sandbox", "util"],
    "model": ["sandbox", "util"],
    "tracer": ["runner"],
    "graph": ["parser", "tracer"],
    "agents": ["runner"],
    "groundtruth": ["agents", "model", "parser", "runner"],
    "extract/taskdir": ["runner"],
    "extract/make": ["extract/taskdir", "graph", "model", "parser", "runner", "tracer"],
    "extract/infer": ["extract/taskdir", "agents", "runner"],
    "extract/eval": ["extract/taskdir", "agents", "parser", "runner"],
    "extract/image": ["extract/taskdir", "runner"],
    "extract/dataset": ["extract/image", "extract/taskdir", "runner"],
    "cli": None,  # the binaries: any room
}

SEAM_ROOMS = {"util", "sandbox", "cli"}
SEAM = re.compile(
    r"std::filesystem|\bfs::|\bRealEnv\(\)|\bRealLauncher\(\)|\bFileLock\b"
    # the same by the C library's or POSIX's names
    r"|std::(?:rename|remove|ifstream|ofstream|fstream)\b|(?<![\w.>])::(?:open|openat|creat|rmdir|"
    r"unlink|unlinkat|mkdir|mkdtemp|rename|stat|lstat|access|chmod|chown|readlink|realpath|"
    r"opendir|symlink|link|truncate|fopen)\(")
PROCESS = re.compile(r"(?<![\w.>])(?:::)?(fork|vfork|execv|execvp|execve|execvpe|posix_spawnp?|popen|system)\s*\(")

# Files outside the seam's rooms that still touch the disk or start processes directly, and
# how many lines do ({"runner/environment.cc": 12} once); the list only shrinks. Empty since
# issue 69 item 4.
SEAM_DEBT = {}


def room_of(rel):
    best = None
    for room in ROOMS:
        if rel == room or rel.startswith(room + "/"):
            if best is None or len(room) > len(best):
                best = room
    return best


def closure(room, memo={}):
    if room not in memo:
        uses = {room}
        for dep in ROOMS[room] or []:
            uses |= closure(dep)
        memo[room] = uses
    return memo[room]


def code_of(line):
    """The line without its // comment and string literals (a rough cut, enough for here)."""
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    return line.split("//", 1)[0]


def sources(root):
    for room in sorted(ROOMS):
        base = os.path.join(root, room)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith((".h", ".cc", ".c")):
                    path = os.path.join(dirpath, name)
                    yield os.path.relpath(path, root), path


def check(root):
    problems = []
    seam_lines = {}
    for rel, path in sources(root):
        room = room_of(rel)
        allowed = None if ROOMS[room] is None else closure(room)
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        for no, line in enumerate(lines, 1):
            inc = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if inc and allowed is not None:
                target = room_of(inc.group(1))
                if target is not None and target not in allowed:
                    problems.append(f"{rel}:{no}: {room}/ includes {inc.group(1)}, of room "
                                    f"{target}/, which it may not use (ARCHITECTURE.md)")
                continue
            code = code_of(line)
            if room != "sandbox" and PROCESS.search(code):
                problems.append(f"{rel}:{no}: starts a process outside sandbox/: {line.strip()}")
            if room not in SEAM_ROOMS and SEAM.search(code):
                seam_lines.setdefault(rel, []).append(no)
    for rel in sorted(set(seam_lines) | set(SEAM_DEBT)):
        found, owed = seam_lines.get(rel, []), SEAM_DEBT.get(rel, 0)
        if len(found) > owed:
            where = ", ".join(str(n) for n in found)
            problems.append(f"{rel}:{found[0]}: std::filesystem, RealEnv() or RealLauncher() "
                            f"outside util/, sandbox/ and cli/ on {len(found)} lines ({where}); "
                            f"allowed {owed}: pass a util::Env or Launcher down instead")
        elif len(found) < owed:
            problems.append(f"tests/layout/check_layout.py: SEAM_DEBT says {rel} has {owed} "
                            f"such lines, it has {len(found)}: lower the count")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    missing = [r for r in ROOMS if not os.path.isdir(os.path.join(root, r))]
    if missing:
        print(f"{root}: no folder for room(s) {', '.join(missing)}", file=sys.stderr)
        return 1
    problems = check(root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
