"""fbkit's Harbor verifier (fbkit.harbor/1), run by tests/test.sh.

  grade.py restore TASK_JSON   in the tree: test code the agent changed, deleted or added is
                               put back as the task has it (fbkit's rule: a collected test
                               file, a conftest.py, a file under a tests/ or test/ folder)
  grade.py score TASK_JSON OUTCOMES_JSON LOG_DIR
                               reward 1 when every FAIL_TO_PASS test passed and every
                               PASS_TO_PASS test passed, xfailed, xpassed or was skipped;
                               else 0. Writes LOG_DIR/reward.txt and reward.json.
"""
import json
import os
import subprocess
import sys


def is_test_code(path, test_files):
    parts = path.split("/")
    name = parts[-1]
    return (path in test_files or name == "conftest.py" or "tests" in parts[:-1]
            or "test" in parts[:-1])


def git_paths(*args):
    out = subprocess.run(["git", *args, "-z"], check=True, capture_output=True).stdout
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def restore(task):
    test_files = set(task["grader_files"]) | set(task["f2p_files"]) | set(task["p2p_files"])
    changed = set(git_paths("diff", "--name-only", "HEAD")) | set(git_paths("ls-files", "--others"))
    tracked = set(git_paths("ls-files"))
    for path in sorted(changed | set(task["f2p_files"])):
        if not is_test_code(path, test_files):
            continue
        if path in tracked:
            subprocess.run(["git", "checkout", "-q", "HEAD", "--", path], check=True)
        elif os.path.lexists(path):
            os.remove(path)
            print(f"fbkit: removed {path}")


def score(task, outcomes_path, log_dir):
    try:
        with open(outcomes_path) as f:
            outcomes = json.load(f)
    except (OSError, ValueError):
        outcomes = {}
    f2p = [t for t in task["f2p_tests"] if outcomes.get(t) == "passed"]
    p2p = [t for t in task["p2p_tests"]
           if outcomes.get(t) in ("passed", "xfailed", "xpassed", "skipped")]
    for t in task["f2p_tests"]:
        if outcomes.get(t) != "passed":
            print(f"FAIL_TO_PASS not passed: {t} ({outcomes.get(t, 'missing')})")
    for t in task["p2p_tests"]:
        if t not in p2p:
            print(f"PASS_TO_PASS broken: {t} ({outcomes.get(t, 'missing')})")
    reward = int(len(f2p) == len(task["f2p_tests"]) and len(p2p) == len(task["p2p_tests"])
                 and len(task["f2p_tests"]) > 0)
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, "reward.txt"), "w") as f:
        f.write(f"{reward}\n")
    with open(os.path.join(log_dir, "reward.json"), "w") as f:
        json.dump({"reward": reward, "f2p_passed": len(f2p), "f2p_total": len(task["f2p_tests"]),
                   "p2p_passed": len(p2p), "p2p_total": len(task["p2p_tests"])}, f, sort_keys=True)
    print(f"reward {reward}: FAIL_TO_PASS {len(f2p)}/{len(task['f2p_tests'])}, "
          f"PASS_TO_PASS {len(p2p)}/{len(task['p2p_tests'])}")


def main(argv):
    with open(argv[2]) as f:
        task = json.load(f)
    if argv[1] == "restore":
        restore(task)
    elif argv[1] == "score":
        score(task, argv[3], argv[4])
    else:
        sys.exit(f"grade.py: unknown command {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
