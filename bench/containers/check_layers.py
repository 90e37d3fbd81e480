#!/usr/bin/env python3
"""Whether an agent-facing image holds anything of its task's answer, in any layer.

Usage: check_layers.py ENGINE IMAGE TASK_DIR [--base IMAGE] [--level1 DIR]

Saves IMAGE (`ENGINE save`, docker-archive), reads every file of every layer, opening git's
loose objects and packs and any tar file inside, and looks for the answer's lines: each line
the gold patch (patch.diff) or the test patch (test_patch.diff) adds that occurs nowhere in
what the agent is meant to see (an L1 task's presolved/; nothing of the repository for L2;
the base image's files, the user's choice: Python's own library shares lines with many
libraries) and is long enough to be the task's own (40 characters or more, stripped). Prints every hit
(layer, file, line) and exits 1 when there is one; exits 0 with a count of what was read.
"""
import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zlib

MIN_LINE = 40


def added_lines(patch_text):
    out = set()
    for line in patch_text.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            s = line[1:].strip()
            if len(s) >= MIN_LINE:
                out.add(s)
    return out


def tree_lines(tree):
    seen = set()
    for root, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d != ".git"]
        for f in files:
            try:
                with open(os.path.join(root, f), "rb") as fh:
                    text = fh.read().decode("utf-8", "replace")
            except OSError:
                continue
            for line in text.splitlines():
                seen.add(line.strip())
    return seen


def pack_objects(data):
    """The inflated bodies of a git pack's entries (deltas as their literal bytes)."""
    if data[:4] != b"PACK":
        return
    count = int.from_bytes(data[8:12], "big")
    pos = 12
    for _ in range(count):
        c = data[pos]
        kind = (c >> 4) & 7
        pos += 1
        while c & 0x80:
            c = data[pos]
            pos += 1
        if kind == 6:  # OFS_DELTA: a varint offset
            c = data[pos]
            pos += 1
            while c & 0x80:
                c = data[pos]
                pos += 1
        elif kind == 7:  # REF_DELTA: a 20-byte base id
            pos += 20
        d = zlib.decompressobj()
        try:
            body = d.decompress(data[pos:])
        except zlib.error:
            return
        yield body
        pos = len(data) - len(d.unused_data)


def readable_texts(name, data, depth=0):
    """The texts one file of a layer holds: itself, inflated git objects, a tar's members."""
    yield name, data
    base = os.path.basename(name)
    if "/objects/" in name and len(base) == 38 and data[:1] == b"x":
        try:
            yield name + " (git object)", zlib.decompress(data)
        except zlib.error:
            pass
    if base.endswith(".pack"):
        for i, body in enumerate(pack_objects(data)):
            yield f"{name} (pack entry {i})", body
    if depth < 2 and (base.endswith(".tar") or data[257:262] == b"ustar"):
        try:
            with tarfile.open(fileobj=io.BytesIO(data)) as inner:
                for m in inner.getmembers():
                    if m.isfile():
                        f = inner.extractfile(m)
                        if f is not None:
                            yield from readable_texts(f"{name}!{m.name}", f.read(), depth + 1)
        except (tarfile.TarError, EOFError):
            pass


def layer_files(engine, image, tmp):
    """(layer name, file name, bytes) of every regular file of every layer of `image`."""
    archive = os.path.join(tmp, "image.tar")
    argv = [engine, "save", "-o", archive, image]
    if engine == "podman":
        argv[2:2] = ["--format", "docker-archive"]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    with tarfile.open(archive) as outer:
        manifest = json.load(outer.extractfile("manifest.json"))
        for layer_name in manifest[0]["Layers"]:
            with tarfile.open(fileobj=io.BytesIO(outer.extractfile(layer_name).read())) as lt:
                for m in lt.getmembers():
                    if m.isfile():
                        yield layer_name, m.name, lt.extractfile(m).read()
    os.remove(archive)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("engine")
    ap.add_argument("image")
    ap.add_argument("task_dir")
    ap.add_argument("--level1", help="an L2 task's L1 task (default: the sibling .lv1)")
    ap.add_argument("--base", help="the base image the task's images start FROM")
    a = ap.parse_args()
    inst = json.load(open(os.path.join(a.task_dir, "instance.json")))
    level = inst.get("level", 1)
    answer = added_lines(open(os.path.join(a.task_dir, "patch.diff")).read())
    answer |= added_lines(open(os.path.join(a.task_dir, "test_patch.diff")).read())
    if level == 1:
        answer -= tree_lines(os.path.join(a.task_dir, "presolved"))
    else:
        l1 = a.level1 or a.task_dir[: -len(".lv2")] + ".lv1"
        answer |= added_lines(open(os.path.join(l1, "patch.diff")).read())
    if not answer:
        print(f"{a.image}: the answer has no line to look for", file=sys.stderr)
        return 2
    hits, files, layers = [], 0, set()
    with tempfile.TemporaryDirectory() as tmp:
        if a.base:
            for _, name, data in layer_files(a.engine, a.base, tmp):
                text = data.decode("utf-8", "replace")
                answer = {line for line in answer if line not in text}
        for layer_name, name, data in layer_files(a.engine, a.image, tmp):
            layers.add(layer_name)
            files += 1
            for where, blob in readable_texts(name, data):
                text = blob.decode("utf-8", "replace")
                for line in answer:
                    if line in text:
                        hits.append((layer_name, where, line))
    layers = len(layers)
    for layer_name, where, line in hits[:50]:
        print(f"{a.image}: layer {layer_name[:19]}: {where}: {line[:100]}")
    print(f"{a.image}: {layers} layers, {files} files, {len(answer)} answer lines, {len(hits)} found",
          file=sys.stderr)
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main())
