#!/usr/bin/env python3
"""Byte spans of an fbkit.entities/1 document against the files themselves.

For every def and class: source[start_byte:end_byte] starts with '@', 'def', 'class' or
'async'; end_byte falls on end_line; without decorators start_byte falls on start_line.
Usage: span_check.py ROOT ENTITIES_JSON   (exit 0 iff every span is consistent)
"""
import json
import sys


def main():
    root, entities = sys.argv[1], sys.argv[2]
    doc = json.load(open(entities, encoding="utf-8"))
    checked = bad = 0
    for f in doc["files"]:
        src = open(f"{root}/{f['path']}", "rb").read()
        # Same length as src, with CPython's line breaks (CRLF, LF, lone CR) as one LF each.
        src_lines = src.replace(b"\r\n", b"\0\n").replace(b"\r", b"\n")
        for e in f["entities"]:
            if e["kind"] == "module":
                continue
            checked += 1
            text = src[e["start_byte"]:e["end_byte"]]
            start_line = src_lines[:e["start_byte"]].count(b"\n") + 1
            end_line = src_lines[:e["end_byte"]].count(b"\n") + 1
            ok = text[:1] in (b"@", b"d", b"c", b"a") and end_line == e["end_line"]
            ok = ok and (e["decorators"] or start_line == e["start_line"])
            if not ok:
                bad += 1
                if bad <= 10:
                    print(f"bad span: {e['id']} bytes {e['start_byte']}-{e['end_byte']} "
                          f"-> lines {start_line}-{end_line}, table {e['start_line']}-{e['end_line']}")
    print(f"spans checked {checked}, inconsistent {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
