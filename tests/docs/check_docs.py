#!/usr/bin/python3
"""Checks that README.md, ARCHITECTURE.md and docs/ stay true to the repository and the CLI.

Usage: check_docs.py BIN_DIR [--root ROOT]

BIN_DIR holds the fb-graph, fb-extract and fb-race binaries (build/cli); ROOT is the
repository (default: two directories above this script). Checks:

  (a) README.md has at most 200 lines (the front door; the reference lives in docs/);
  (b) every relative link of README.md, ARCHITECTURE.md, docs/*.md and bench/README.md
      names an existing file or directory and, when it has a #fragment into a Markdown
      file, one of that file's headings (GitHub's anchors) or an explicit <a id="...">;
  (c) in every ```sh block of README.md and docs/*.md, each command line of fb-graph,
      fb-extract or fb-race (backslash continuations joined; a synopsis's indented
      continuation lines too; a leading directory such as build/cli/ allowed) names a
      subcommand the binary has, every long option it uses (--name) is one that
      `BINARY SUBCOMMAND --help` declares, and a literal value given to an option with a
      fixed set of values (`--format table`, `[--sandbox bwrap|none]`) is one of them;
  (d) every document schema the C++ sources outside tests/ and fixtures/ name
      ("fbkit.<kind>/<n>") is listed in docs/formats.md.

Prints one line per problem (FILE:LINE: what) and exits 1 when there is any; 0 otherwise.
Standard library only.
"""

import os
import re
import subprocess
import sys

README_MAX_LINES = 200
TOOLS = ("fb-graph", "fb-extract", "fb-race")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def doc_files(root):
    """README.md, ARCHITECTURE.md, docs/*.md and bench/README.md (where the manuals' dated
    measurements live)."""
    files = [os.path.join(root, "README.md"), os.path.join(root, "ARCHITECTURE.md")]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        files += sorted(os.path.join(docs, n) for n in os.listdir(docs) if n.endswith(".md"))
    files.append(os.path.join(root, "bench", "README.md"))
    return [f for f in files if os.path.isfile(f)]


def rel(root, path):
    return os.path.relpath(path, root)


# ---------------------------------------------------------------------------------------
# Markdown: fenced blocks, headings, anchors, links

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")


def split_fences(text):
    """Yields (line_number, line, fence_info or None): fence_info is the info string of the
    fenced block the line is inside ("" for a bare fence), None outside any block. Fence
    lines themselves are reported as inside."""
    out = []
    fence = None  # (marker, info)
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = (m.group(2), m.group(3).strip())
                out.append((n, line, fence[1]))
                continue
            out.append((n, line, None))
        else:
            out.append((n, line, fence[1]))
            if m and m.group(2)[0] == fence[0][0] and len(m.group(2)) >= len(fence[0]) \
                    and not m.group(3).strip():
                fence = None
    return out


def github_slug(heading):
    """The anchor GitHub gives a heading: markup dropped, lower case, punctuation but
    hyphens and underscores removed, spaces turned into hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors_of(text):
    anchors = set()
    seen = {}
    for _, line, fence in split_fences(text):
        if fence is not None:
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = github_slug(m.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else "%s-%d" % (slug, count))
        for a in re.finditer(r"<a\s+(?:id|name)=\"([^\"]+)\"", line):
            anchors.add(a.group(1))
    return anchors


LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")


def strip_code_spans(line):
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def links_of(text):
    """(line_number, target) of every inline link, image and reference definition outside
    code."""
    out = []
    for n, line, fence in split_fences(text):
        if fence is not None:
            continue
        plain = strip_code_spans(line)
        for m in LINK.finditer(plain):
            out.append((n, m.group(1)))
        m = REF_DEF.match(plain)
        if m:
            out.append((n, m.group(1)))
    return out


def check_links(root, path, problems, anchor_cache):
    text = read(path)
    base = os.path.dirname(path)
    for n, target in links_of(text):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, fragment = target.partition("#")
        dest = os.path.normpath(os.path.join(base, file_part)) if file_part else path
        where = "%s:%d" % (rel(root, path), n)
        if not os.path.exists(dest):
            problems.append("%s: link to %s: no such file" % (where, target))
            continue
        if fragment and dest.endswith(".md") and os.path.isfile(dest):
            if dest not in anchor_cache:
                anchor_cache[dest] = anchors_of(read(dest))
            if fragment not in anchor_cache[dest]:
                problems.append("%s: link to %s: %s has no heading with anchor #%s"
                                % (where, target, rel(root, dest), fragment))


# ---------------------------------------------------------------------------------------
# Commands in ```sh blocks against the binaries' --help

CMD_START = re.compile(r"^\s*(?:\$\s+)?(?:[\w./-]*/)?(%s)\s+(.*)$" % "|".join(TOOLS))
STOP_TOKENS = {"|", "||", "&&", ";", ">", ">>", "<", "2>&1", "&"}
LONG_OPT = re.compile(r"(?<![\w-])--([A-Za-z0-9][A-Za-z0-9-]*)")


def sh_commands(text):
    """(line_number, tool, rest) of each fb-* command in the ```sh blocks of a document."""
    out = []
    lines = split_fences(text)
    i = 0
    while i < len(lines):
        n, line, fence = lines[i]
        i += 1
        if fence != "sh" or FENCE.match(line):
            continue
        m = CMD_START.match(line)
        if not m:
            continue
        tool, rest = m.group(1), m.group(2)
        # Backslash continuations; a synopsis's indented continuation lines.
        while i < len(lines) and lines[i][2] == "sh" and not FENCE.match(lines[i][1]):
            nxt = lines[i][1]
            if rest.rstrip().endswith("\\"):
                rest = rest.rstrip()[:-1] + " " + nxt.strip()
            elif nxt[:1].isspace() and nxt.strip() and not CMD_START.match(nxt):
                rest = rest + " " + nxt.strip()
            else:
                break
            i += 1
        out.append((n, tool, rest))
    return out


def command_words(rest):
    """The words of one command up to a comment, pipe, redirection or the next command."""
    words = []
    depth = 0  # inside a synopsis's [ ] or ( ), `|` separates alternatives
    for word in rest.split():
        if word.startswith("#") or (depth <= 0 and (word in STOP_TOKENS or word.startswith(">"))):
            break
        depth += word.count("[") + word.count("(") - word.count("]") - word.count(")")
        words.append(word)
    return words


HELP_OPTION_LINE = re.compile(r"^\s+(-{1,2}[A-Za-z0-9][^\s]*)")


def declared_options(help_text):
    """The long options a CLI11 help text declares (the names at the start of its option
    lines, not the ones its descriptions mention), each with its set of accepted values
    (`--format TEXT:{json,table}`) or None."""
    names = {}
    for line in help_text.split("\n"):
        m = HELP_OPTION_LINE.match(line)
        if not m:
            continue
        choices = re.search(r"^\s+\S+\s+[A-Z]+:\{([^}]*)\}", line)
        for part in m.group(1).split(","):
            part = re.sub(r"\{.*$", "", part)
            if part.startswith("--"):
                names[part[2:]] = set(choices.group(1).split(",")) if choices else None
    return names


class HelpCache:
    def __init__(self, bin_dir):
        self.bin_dir = bin_dir
        self.cache = {}

    def get(self, tool, sub):
        """(declared options, error): the options of `tool sub --help`, or why there are
        none."""
        key = (tool, sub)
        if key in self.cache:
            return self.cache[key]
        exe = os.path.join(self.bin_dir, tool)
        if not os.access(exe, os.X_OK):
            result = (None, "%s is not an executable" % exe)
        else:
            try:
                p = subprocess.run([exe, sub, "--help"], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=60,
                                   universal_newlines=True)
            except (OSError, subprocess.TimeoutExpired) as e:
                result = (None, "%s %s --help: %s" % (tool, sub, e))
            else:
                usage = re.search(r"^Usage: \S*%s %s\b" % (re.escape(tool), re.escape(sub)),
                                  p.stdout, re.M)
                if p.returncode != 0 or not usage:
                    result = (None, "%s has no subcommand '%s'" % (tool, sub))
                else:
                    result = (declared_options(p.stdout), None)
        self.cache[key] = result
        return result


def check_commands(root, path, helps, problems):
    text = read(path)
    count = 0
    for n, tool, rest in sh_commands(text):
        words = command_words(rest)
        where = "%s:%d" % (rel(root, path), n)
        if not words or not re.match(r"^[a-z][a-z0-9-]*$", words[0]):
            problems.append("%s: `%s %s`: no subcommand" % (where, tool, rest.strip()))
            continue
        sub = words[0]
        options, error = helps.get(tool, sub)
        count += 1
        if error:
            problems.append("%s: %s" % (where, error))
            continue
        for k, word in enumerate(words[1:], 1):
            for m in LONG_OPT.finditer(word):
                name = m.group(1)
                if name not in options:
                    problems.append("%s: `%s %s` uses --%s, which `%s %s --help` does not "
                                    "declare" % (where, tool, sub, name, tool, sub))
                    continue
                # A literal value (`--format table`, `[--sandbox bwrap|none]`) must be one
                # the option accepts; placeholders (FILE, N, K/N) are not checked.
                choices = options[name]
                value = None
                if "=" in word[m.end():m.end() + 1]:
                    value = word[m.end() + 1:]
                elif word[m.end():] == "" and k + 1 < len(words):
                    value = words[k + 1]
                if choices is None or value is None:
                    continue
                value = value.rstrip("])").strip("'\"")
                if not re.match(r"^[a-z0-9-]+(\|[a-z0-9-]+)*$", value):
                    continue
                for v in value.split("|"):
                    if v not in choices:
                        problems.append("%s: `%s %s --%s %s`: `%s %s --help` accepts %s"
                                        % (where, tool, sub, name, v, tool, sub,
                                           "|".join(sorted(choices))))
    return count


# ---------------------------------------------------------------------------------------
# Schemas named in the sources against docs/formats.md

SCHEMA = re.compile(r"\"(fbkit\.[a-z0-9._-]+/[0-9]+)\"")


def check_formats(root, problems):
    formats = os.path.join(root, "docs", "formats.md")
    if not os.path.isfile(formats):
        problems.append("docs/formats.md: missing")
        return
    listed = read(formats)
    schemas = set()
    # The library and command sources; tests may name made-up schemas on purpose.
    skip = {".git", ".deps", "tests", "fixtures"}
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == root:
            dirnames[:] = [d for d in dirnames if d not in skip and not d.startswith("build")]
        for name in filenames:
            if name.endswith((".cc", ".h")):
                try:
                    schemas.update(SCHEMA.findall(read(os.path.join(dirpath, name))))
                except UnicodeDecodeError:
                    pass
    for schema in sorted(schemas):
        if "`%s`" % schema not in listed:
            problems.append("docs/formats.md: schema %s (named in the sources) is not listed"
                            % schema)


def main(argv):
    args = argv[1:]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if "--root" in args:
        i = args.index("--root")
        root = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        sys.stderr.write("usage: check_docs.py BIN_DIR [--root ROOT]\n")
        return 2
    bin_dir = os.path.abspath(args[0])
    missing = [t for t in TOOLS if not os.access(os.path.join(bin_dir, t), os.X_OK)]
    if missing:
        sys.stderr.write("check_docs: no executable %s in %s\n" % (", ".join(missing), bin_dir))
        return 2
    problems = []

    readme = os.path.join(root, "README.md")
    lines = read(readme).count("\n")
    if lines > README_MAX_LINES:
        problems.append("README.md: %d lines, more than %d (move reference text to docs/)"
                        % (lines, README_MAX_LINES))

    files = doc_files(root)
    anchor_cache = {}
    for path in files:
        check_links(root, path, problems, anchor_cache)

    helps = HelpCache(bin_dir)
    commands = 0
    for path in files:
        if rel(root, path) in ("ARCHITECTURE.md", os.path.join("bench", "README.md")):
            continue
        commands += check_commands(root, path, helps, problems)

    check_formats(root, problems)

    for p in problems:
        print(p)
    print("check_docs: %d files, %d documented commands, %d problem%s"
          % (len(files), commands, len(problems), "" if len(problems) == 1 else "s"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
