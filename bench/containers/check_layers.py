#!/usr/bin/env python3
"""Whether an agent-facing image holds anything of its task's answer, in any layer.

Usage: check_layers.py ENGINE IMAGE=TASK_DIR... [--base IMAGE]

Saves IMAGE (`ENGINE save`, docker-archive), reads every file of every layer, opening git's
loose objects and packs and any tar file inside, and looks for the answer's lines: each line
the gold patch (patch.diff) or the test patch (test_patch.diff) adds that occurs nowhere in
what the agent is meant to see (an L1 task's presolved/; nothing of the repository for L2;
the base image's files, the user's choice: Python's own library shares lines with many
libraries) and is long enough to be the task's own (40 characters or more, stripped). Prints every hit
(layer, file, line) and exits 1 when there is one; 2 when an image could not be checked
(its answer has no such line; the others still are); else 0, with a count of what was read.

The base is read once per base image, not once per run: its index (a sorted array of 64-bit
hashes of every stripped line of 40 characters or more of every file of its layers, and the
names of its layers) is cached on disk under the base image's id, in FBKIT_CHECK_LAYERS_CACHE
(default ~/.cache/fbkit/check_layers). An answer line the base holds as a line of its own
(stripped) is the agent's to see.
"""
import argparse
import array
import bisect
import hashlib
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


def tree_text(tree):
    """Every file of `tree` but .git, one string (an answer line inside it is no answer)."""
    texts = []
    for root, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d != ".git"]
        for f in files:
            try:
                with open(os.path.join(root, f), "rb") as fh:
                    text = fh.read().decode("utf-8", "replace")
            except OSError:
                continue
            texts.append(text)
    return "\n".join(texts)


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


def layer_files(engine, image, tmp, skip=()):
    """(layer name, file name, bytes) of every regular file of every layer of `image` but
    those named in `skip`."""
    archive = os.path.join(tmp, "image.tar")
    argv = [engine, "save", "-q", "-o", archive, image]
    if engine == "podman":
        argv[2:2] = ["--format", "docker-archive"]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    with tarfile.open(archive) as outer:
        manifest = json.load(outer.extractfile("manifest.json"))
        for layer_name in manifest[0]["Layers"]:
            if layer_name in skip:
                continue
            with tarfile.open(fileobj=io.BytesIO(outer.extractfile(layer_name).read())) as lt:
                for m in lt.getmembers():
                    if m.isfile():
                        yield layer_name, m.name, lt.extractfile(m).read()
    os.remove(archive)


def answer_of(task_dir, level1=None):
    inst = json.load(open(os.path.join(task_dir, "instance.json")))
    answer = added_lines(open(os.path.join(task_dir, "patch.diff")).read())
    answer |= added_lines(open(os.path.join(task_dir, "test_patch.diff")).read())
    if inst.get("level", 1) == 1:
        seen = tree_text(os.path.join(task_dir, "presolved"))
        answer = {line for line in answer if line not in seen}
    else:
        l1 = level1 or task_dir[: -len(".lv2")] + ".lv1"
        answer |= added_lines(open(os.path.join(l1, "patch.diff")).read())
    return answer


def line_hash(line):
    """A stripped line's 64-bit hash (blake2b), the base index's key."""
    return int.from_bytes(hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


def index_holds(index, line):
    i = bisect.bisect_left(index, line_hash(line))
    return i < len(index) and index[i] == line_hash(line)


def base_index(engine, base, tmp):
    """(the base's layer names, a sorted array of the hashes of its lines of MIN_LINE or more
    characters, stripped): read from the cache keyed by the base image's id, or built (every
    file of every layer read once) and cached."""
    image_id = subprocess.run([engine, "image", "inspect", "--format", "{{.Id}}", base], check=True,
                              capture_output=True, text=True).stdout.strip()
    cache = os.environ.get("FBKIT_CHECK_LAYERS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "fbkit", "check_layers")
    entry = os.path.join(cache, image_id.replace(":", "_"))
    try:
        with open(os.path.join(entry, "layers.json")) as f:
            layers = set(json.load(f))
        index = array.array("Q")
        with open(os.path.join(entry, "lines.u64"), "rb") as f:
            index.frombytes(f.read())
        print(f"{base}: base index read from {entry} ({len(index)} lines)", file=sys.stderr)
        return layers, index
    except (OSError, ValueError):
        pass
    layers, hashes = set(), set()
    for layer, _, data in layer_files(engine, base, tmp):
        layers.add(layer)
        for raw in data.decode("utf-8", "replace").splitlines():
            line = raw.strip()
            if len(line) >= MIN_LINE:
                hashes.add(line_hash(line))
    index = array.array("Q", sorted(hashes))
    os.makedirs(entry, exist_ok=True)
    part = os.path.join(entry, f"lines.u64.{os.getpid()}")
    with open(part, "wb") as f:
        index.tofile(f)
    os.replace(part, os.path.join(entry, "lines.u64"))
    part = os.path.join(entry, f"layers.json.{os.getpid()}")
    with open(part, "w") as f:
        json.dump(sorted(layers), f)
    os.replace(part, os.path.join(entry, "layers.json"))
    print(f"{base}: base index built ({len(layers)} layers, {len(index)} lines), cached in {entry}",
          file=sys.stderr)
    return layers, index


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("engine")
    ap.add_argument("pairs", nargs="+", metavar="IMAGE=TASK_DIR")
    ap.add_argument("--base", help="the base image the task images start FROM (read once; its "
                    "layers, shared by every image, are not read again)")
    a = ap.parse_args()
    pairs = [p.split("=", 1) for p in a.pairs]
    answers = {image: answer_of(task) for image, task in pairs}
    found = unchecked = 0
    with tempfile.TemporaryDirectory() as tmp:
        base_layers = set()
        if a.base:
            base_layers, index = base_index(a.engine, a.base, tmp)
            for image in answers:
                answers[image] = {line for line in answers[image] if not index_holds(index, line)}
        for image, task in pairs:
            answer = answers[image]
            if not answer:
                print(f"{image}: not checked: the answer has no line to look for", file=sys.stderr)
                unchecked += 1
                continue
            hits, files, layers = [], 0, set()
            for layer, name, data in layer_files(a.engine, image, tmp, base_layers):
                layers.add(layer)
                files += 1
                for where, blob in readable_texts(name, data):
                    text = blob.decode("utf-8", "replace")
                    hits += [(layer, where, line) for line in answer if line in text]
            for layer, where, line in hits[:50]:
                print(f"{image}: layer {layer[:19]}: {where}: {line[:100]}")
            print(f"{image}: {len(layers)} layers above the base, {files} files, {len(answer)} answer "
                  f"lines, {len(hits)} found", file=sys.stderr)
            found += len(hits)
    return 1 if found else 2 if unchecked else 0


if __name__ == "__main__":
    sys.exit(main())
