#!/usr/bin/env python3
"""The report picture of docs/fb-race.md: on the output of race_mine_real.py, the gold patches and a
degraded agent (each patch cut to its first Python file, one unrelated file declared; resolved only
where the cut patch is the whole gold patch) scored with `fb-race score --html`, and the page
rendered by headless Chromium into a PNG.

usage: race_report_demo.py FB_RACE RUN_OUT PNG
"""
import json
import os
import subprocess
import sys


def first_file(patch):
    """The patch's first Python file's section (its first section when it has none)."""
    parts = ["diff --git " + p for p in patch.split("diff --git ")[1:]]
    py = [p for p in parts if p.split("\n", 1)[0].endswith(".py")]
    return (py or parts or [patch])[0]


def main():
    fb_race, out, png = sys.argv[1:4]
    mined = {json.loads(l)["instance_id"]: json.loads(l) for l in open(os.path.join(out, "mined.jsonl"))}
    gold = json.load(open(os.path.join(out, "gold.json")))
    cut = {"agent": "first-file-only", "instances": []}
    for inst in gold["instances"]:
        patch = inst["patch"]
        short = first_file(patch)
        inst["resolved"] = True
        inst["applied"] = True
        cut["instances"].append({"instance_id": inst["instance_id"], "patch": short,
                                 "files": ["docs/unrelated.rst"], "applied": True,
                                 "resolved": short == patch})
    for name, run in (("gold", gold), ("cut", cut)):
        json.dump(run, open(os.path.join(out, name + "-demo.json"), "w"))
    html = os.path.join(out, "demo.html")
    subprocess.run([fb_race, "score", "--gt", os.path.join(out, "gt"), "--agent",
                    os.path.join(out, "gold-demo.json"), "--agent", os.path.join(out, "cut-demo.json"),
                    "--instances", os.path.join(out, "mined.jsonl"), "--html", html, "-o", "/dev/null"],
                   check=True)
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--user-data-dir=" + os.path.join(out, "chromium-profile"),
                    "--window-size=1250,1000", "--screenshot=" + png, "file://" + os.path.abspath(html)],
                   check=True, capture_output=True)
    print("wrote", png, "from", len(mined), "instances")


if __name__ == "__main__":
    main()
