#!/usr/bin/env python3
"""Runs the agent CLIs (`fb-extract infer --agent NAME`) on real tasks against the scripted
model (fixtures/agents/model/scripted_model.py), then `eval` and `fb-race summarize`, and
checks that each CLI resolves exactly the tasks its script solves.

    bench/scripted_agents.py --tasks DIR --solve ID... --fail ID... [--agents a,b,c]
                             [--out DIR] [--json FILE]

A solved task's script reads a module, applies the task's own patch (sent base64-encoded in
pieces, then git apply), writes a note and finishes; a failed task's script reads the README and gives up. Each CLI runs in
fbkit's sandbox with no network, the server started by --sidecar on the sandbox's loopback.
Prints one row per CLI: resolved / expected, usage and model calls against the script's,
cost, summarize's files, seconds. Exit 1 when a CLI does not do what its script says.
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("FBKIT_BUILD_DIR", os.path.join(ROOT, "build"))
EXTRACT = os.path.join(BUILD, "cli", "fb-extract")
RACE = os.path.join(BUILD, "cli", "fb-race")
MODEL = os.path.join(ROOT, "fixtures", "agents", "model")
AGENTS = {  # name: (model, path after the base URL, key variable)
    "claude-code": ("claude-sonnet-4-5", "", "ANTHROPIC_API_KEY"),
    "codex": ("gpt-5.5", "/v1", "OPENAI_API_KEY"),
    "gemini-cli": ("gemini-2.5-pro", "", "GEMINI_API_KEY"),
    "mini-swe-agent": ("openai/scripted", "/v1", "OPENAI_API_KEY"),
}
INSTALLED = {"claude-code": "node_modules/.bin/claude", "codex": "node_modules/.bin/codex",
             "gemini-cli": "node_modules/.bin/gemini", "mini-swe-agent": "venv/bin/mini"}
PORT = 18430


def step(kind, text, tokens_in, tokens_out):
    return {kind: text, "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}


def first_changed_file(patch):
    for line in patch.splitlines():
        if line.startswith("+++ b/"):
            return line[6:]
    return "README.md"


def write_scripts(tasks, solve, fail, scripts):
    """The scripts and, per instance, the usage, calls and files they imply."""
    os.makedirs(scripts, exist_ok=True)
    want = {}
    for i, iid in enumerate(solve):
        with open(os.path.join(tasks, iid, "patch.diff"), encoding="utf-8") as f:
            gold = f.read()
        module = first_changed_file(gold)
        # The patch travels base64-encoded, in pieces: one shell argument holds at most 128 KiB,
        # and some CLIs refuse commands with substitutions a patch may contain.
        encoded = base64.b64encode(gold.encode()).decode()
        pieces = [encoded[k:k + 60000] for k in range(0, len(encoded), 60000)]
        steps = [step("shell", "cat " + module, 1000 + i, 50)]
        steps += [step("shell", f"printf %s '{piece}' >> /tmp/gold.b64", 1200, 600) for piece in pieces]
        steps += [step("shell", "base64 -d /tmp/gold.b64 | git apply", 1500, 30 + i),
                  step("shell", "echo 'done' > NOTES.md", 1800, 40),
                  step("say", "Implemented the feature.", 2000, 20)]
        want[iid] = {"resolved": True, "opened": [module], "edited": ["NOTES.md"]}
        doc = {"steps": steps}
        with open(os.path.join(scripts, iid + ".json"), "w", encoding="utf-8") as f:
            json.dump(doc, f)
        want[iid].update(totals(steps))
    for iid in fail:
        steps = [step("shell", "cat README.md", 800, 30), step("say", "I could not finish this.", 900, 10)]
        with open(os.path.join(scripts, iid + ".json"), "w", encoding="utf-8") as f:
            json.dump({"steps": steps}, f)
        want[iid] = {"resolved": False, "opened": ["README.md"], "edited": []}
        want[iid].update(totals(steps))
    return want


def totals(steps):
    return {"input_tokens": sum(s["usage"]["input_tokens"] for s in steps),
            "output_tokens": sum(s["usage"]["output_tokens"] for s in steps),
            "api_calls": len(steps)}


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True)


def one_agent(name, tasks, ids, scripts, out, want):
    model, url_path, key = AGENTS[name]
    run_dir, eval_dir = os.path.join(out, name, "run"), os.path.join(out, name, "eval")
    sidecar = (f"/usr/bin/python3 {MODEL}/scripted_model.py serve --port {PORT} --scripts {scripts}"
               ' --log "$FBKIT_OUTPUT_DIR/model.log"')
    argv = [EXTRACT, "infer", tasks, "--agent", name, "-o", run_dir, "-q", "--rerun",
            "--model", model, "--model-url", f"http://127.0.0.1:{PORT}{url_path}",
            "--env", key + "=scripted", "--read-only", MODEL, "--read-only", scripts,
            "--sidecar", sidecar, "--timeout", "600"]
    for iid in ids:
        argv += ["--instance", iid]
    start = time.monotonic()
    infer = run(argv)
    seconds = time.monotonic() - start
    problems = []
    if infer.returncode != 0:
        problems.append(f"infer exit {infer.returncode}: {infer.stderr[-500:]}")
    ev = run([EXTRACT, "eval", tasks, "--predictions", os.path.join(run_dir, "predictions.jsonl"),
              "-o", eval_dir, "-q", "--rerun"])
    if ev.returncode != 0:
        problems.append(f"eval exit {ev.returncode}: {ev.stderr[-500:]}")
    summary = json.load(open(os.path.join(eval_dir, "summary.json"))) if ev.returncode == 0 else {}
    race = run([RACE, "summarize", run_dir, "-q"])
    trajectories = {i["instance_id"]: i["trajectory"] for i in json.loads(race.stdout)["instances"]} \
        if race.returncode == 0 else {}
    resolved = 0
    for iid in ids:
        w = want[iid]
        result = json.load(open(os.path.join(run_dir, iid, "result.json")))
        usage = result.get("usage") or {}
        for k in ("input_tokens", "output_tokens", "api_calls"):
            if usage.get(k) != w[k]:
                problems.append(f"{iid}: {k} {usage.get(k)} != script's {w[k]}")
        report_path = os.path.join(eval_dir, iid, "report.json")
        got = os.path.exists(report_path) and json.load(open(report_path))["resolved"]
        resolved += bool(got)
        if bool(got) != w["resolved"]:
            problems.append(f"{iid}: resolved {got}, script {'solves' if w['resolved'] else 'fails'} it")
        t = trajectories.get(iid, {})
        for k in ("opened", "edited"):
            if t.get(k) != w[k]:
                problems.append(f"{iid}: summarize {k} {t.get(k)} != {w[k]}")
    return {"agent": name, "instances": len(ids), "resolved": resolved,
            "expected_resolved": sum(want[i]["resolved"] for i in ids),
            "mean_input_tokens": summary.get("mean_input_tokens"),
            "mean_output_tokens": summary.get("mean_output_tokens"),
            "mean_api_calls": summary.get("mean_api_calls"), "total_cost": summary.get("total_cost"),
            "infer_seconds": round(seconds, 1), "problems": problems}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", required=True)
    p.add_argument("--solve", nargs="+", required=True, help="instances the script solves")
    p.add_argument("--fail", nargs="+", required=True, help="instances the script gives up on")
    p.add_argument("--agents", default="claude-code,codex,gemini-cli,mini-swe-agent")
    p.add_argument("--out", default="/tmp/fbkit-scripted-agents")
    p.add_argument("--json", help="write the rows here")
    a = p.parse_args()
    tasks = os.path.abspath(a.tasks)
    scripts = os.path.join(os.path.abspath(a.out), "scripts")
    want = write_scripts(tasks, a.solve, a.fail, scripts)
    rows, bad = [], False
    for name in a.agents.split(","):
        exe = os.path.join(ROOT, ".deps", "agents", name, INSTALLED[name])
        if not os.path.exists(exe):
            print(f"{name}: not installed (FBKIT_AGENTS={name} ./setup.sh), skipped", file=sys.stderr)
            continue
        row = one_agent(name, tasks, a.solve + a.fail, scripts, os.path.abspath(a.out), want)
        rows.append(row)
        bad |= bool(row["problems"])
        print(f"{name:12} resolved {row['resolved']}/{row['instances']} (script: {row['expected_resolved']}) "
              f"tokens {row['mean_input_tokens']}/{row['mean_output_tokens']} calls {row['mean_api_calls']} "
              f"cost {row['total_cost']} infer {row['infer_seconds']} s"
              + ("" if not row["problems"] else "\n  " + "\n  ".join(row["problems"])))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"tasks": os.path.basename(tasks.rstrip("/")), "solve": a.solve, "fail": a.fail,
                       "rows": rows}, f, indent=1, sort_keys=True)
            f.write("\n")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
