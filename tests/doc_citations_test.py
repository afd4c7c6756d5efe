#!/usr/bin/env python3
"""Every citation of the project's documents points at a file and section
that exist in the repository (docs/contributing.md, "Citing the documents").

Scans the git-tracked files (docs/ itself, tests/golden/ and the fuzzers'
corpora excepted) for
  docs/<file>.md [section(s) N[, M and K | N-M]] [row(s) R | , rule R]
  docs/<file>.md#anchor                  (Markdown links)
  docs/<file>.md, "Heading"              (a heading by its title)
  spec N, spec section N                 (short for docs/tf-ops.md; allowed
                                          only in strings: test names, the
                                          fixtures' policy notes)
and fails, naming file:line, where the document does not exist, a section
number or quoted title is no heading of it, a row is not in that section's table, a rule not
in its list, an anchor matches no heading, a comment uses the short form or
says "the spec", or a file names a document by a path outside docs/ (the
team's documents lived beside the repository before docs/ held them).
A citation may wrap onto the next comment line.
Usage: doc_citations_test.py <repository root>
"""
import os
import re
import subprocess
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
SKIP = ("docs/", "tests/golden/", "tests/fuzz/corpus/", "tests/doc_citations_test.py")
DOC_NAMES = r"(?:DESIGN|design|tf-ops|benchmark-shapes|halide-lessons|glossary|usage|command-line|contributing)"

# Whitespace inside a citation, which may continue on the next comment line.
SP = r"(?:[ \t]+|[ \t]*\n[ \t]*(?://+|#+|\*)?[ \t]*)"
NUM = r"\d+(?:\.\d+)*"
LIST = rf"{NUM}(?:(?:{SP}?[-–]{SP}?|,{SP}|{SP}and{SP}){NUM})*"
INTS = r"\d+(?:(?:[-–+]|,[ \t]*|[ \t]+and[ \t]+)\d+)*"
SECTIONS = rf"(?P<sections>{SP}sections?{SP}(?P<refs>{LIST})(?:,?{SP}(?P<kind>rows?|rules?){SP}(?P<items>{INTS}))?)?"
HEADING = r'\)?,?[ \t]+\\?"(?P<heading>[^"\n\\]{1,80})\\?"'
CANONICAL = re.compile(rf"(?<![\w/.-])docs/(?P<doc>[\w.-]+\.md)(?:#(?P<anchor>[\w-]+))?(?:{HEADING}|{SECTIONS})")
SHORT = re.compile(rf"(?i)\bspec(?:'s)?(?P<sections>{SP}(?:sections?{SP})?(?P<refs>{LIST})"
                   rf"(?:,?{SP}(?P<kind>rows?|rules?){SP}(?P<items>{INTS}))?)")
THE_SPEC = re.compile(r"(?i)\bthe spec\b")
ELSEWHERE = re.compile(rf"(?<![\w/.-])(?P<path>(?:[\w.-]+/)*{DOC_NAMES}\.md)\b")


def tracked_files():
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True).stdout
        return [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every file but the build's
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith(".") and not x.startswith("build")]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
        return files


class Doc:
    """A document's numbered headings, their text, and its anchors."""

    def __init__(self, path):
        lines = open(path, encoding="utf-8").read().split("\n")
        self.sections, self.anchors, self.titles = {}, set(), set()
        heads = []
        for i, line in enumerate(lines):
            m = re.match(r"^(#{1,6})\s+(.*)$", line)
            if not m:
                continue
            heads.append((i, len(m.group(1))))
            title = m.group(2).strip()
            self.anchors.add(re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-"))
            self.titles.add(re.sub(rf"^{NUM}\.?\s+", "", title).lower())
            n = re.match(rf"({NUM})\.?(?:\s|$)", title)
            if n:
                self.sections[n.group(1)] = (i, len(m.group(1)))
        for number, (start, level) in self.sections.items():
            end = next((i for i, lv in heads if i > start and lv <= level), len(lines))
            self.sections[number] = lines[start:end]


docs = {}


def doc(name):
    path = os.path.join(root, "docs", name)
    if name not in docs:
        docs[name] = Doc(path) if os.path.isfile(path) else None
    return docs[name]


def numbers(text, pattern):
    return re.findall(pattern, re.sub(r"\s+", " ", re.sub(r"(//+|#+|\*)", " ", text)))


def check_sections(name, m):
    """The problems of one citation's sections, rows and rules ([] when none)."""
    d = doc(name)
    if d is None:
        return [f"docs/{name} does not exist"]
    if not m.group("sections"):
        return []
    problems = []
    refs = numbers(m.group("refs"), NUM)
    for ref in refs:
        if ref not in d.sections:
            problems.append(f"docs/{name} has no section {ref} (its sections: {', '.join(d.sections)})")
    if m.group("kind") and not problems:
        if len(refs) != 1:
            return [f"rows or rules of several sections ({', '.join(refs)}): cite one section"]
        body = d.sections[refs[0]]
        kind = "row" if m.group("kind").startswith("row") else "rule"
        for item in numbers(m.group("items"), r"\d+"):
            line = rf"^\|\s*{item}\s*\|" if kind == "row" else rf"^\s*{item}\.\s"
            if not any(re.match(line, text) for text in body):
                problems.append(f"docs/{name} section {refs[0]} has no {kind} {item}")
    return problems


def in_comment(text, start, path):
    """Whether the match at `start` is in a comment or prose (not a string)."""
    if path.endswith((".md", ".txt")):
        return True
    line_start = text.rfind("\n", 0, start) + 1
    prefix = text[line_start:start]
    if re.match(r"^\s*(//|#|\*|/\*)", prefix):
        return True
    code = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', "", prefix)
    return "//" in code or re.search(r"(^|\s)#", code) is not None


def main():
    problems, count = [], 0
    for path in tracked_files():
        if path.startswith(SKIP):
            continue
        try:
            text = open(os.path.join(root, path), encoding="utf-8").read()
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue

        def report(start, message):
            problems.append(f"{path}:{text.count(chr(10), 0, start) + 1}: {message}")

        for m in CANONICAL.finditer(text):
            count += 1
            for p in check_sections(m.group("doc"), m):
                report(m.start(), p)
            d = doc(m.group("doc"))
            if d and m.group("anchor") and m.group("anchor") not in d.anchors:
                report(m.start(), f"docs/{m.group('doc')} has no heading #{m.group('anchor')}")
            if d and m.group("heading") and m.group("heading").lower() not in d.titles:
                report(m.start(), f"docs/{m.group('doc')} has no heading \"{m.group('heading')}\"")
        for m in SHORT.finditer(text):
            count += 1
            if in_comment(text, m.start(), path):
                refs = " ".join(m.group("sections").split()).replace("// ", "").replace("# ", "")
                report(m.start(), f"'{m.group(0).split()[0]} {refs}': cite docs/tf-ops.md section ...")
            for p in check_sections("tf-ops.md", m):
                report(m.start(), p)
        for m in THE_SPEC.finditer(text):
            if in_comment(text, m.start(), path):
                report(m.start(), "'the spec': cite docs/tf-ops.md (section N)")
        for m in ELSEWHERE.finditer(text):
            if not m.group("path").startswith("docs/"):
                count += 1
                report(m.start(), f"{m.group('path')} is not in the repository: cite the document in docs/")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} citation(s) point at no document or section of the repository "
              "(docs/contributing.md, \"Citing the documents\")")
        return 1
    print(f"{count} citations, each at a document and section of docs/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
