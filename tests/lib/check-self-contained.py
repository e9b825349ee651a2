#!/usr/bin/python3
"""Fail if a test script, a build rule or a set-up script refers to a path
outside the repository.

usage: tests/lib/check-self-contained.py [--tap] ROOT

A fresh clone (a user's, a packager's, a downstream CI's) has nothing beside
it, so everything the suite reads must be inside ROOT or be installed by
scripts/ensure-deps.  This is the static half of that promise; .ci/run is the
dynamic half (it runs the suite in a copy with nothing beside it).

What is scanned: the files git tracks under tests/, scripts/, bench/, .ci/
and tools/, and the Makefile (test data -- the vendored toml-test cases and
the goldens -- is data, not code that reads paths, and is skipped).

What is flagged:
  - the development machines' surroundings by name: "../shared",
    MOAT_SHARED_DIR, /work/;
  - a path anchored at the file's own folder ($(dirname "$0"),
    ${BASH_SOURCE[0]}, os.path.dirname(__file__), the Makefile's $(CURDIR))
    or at the repository root ($ROOT, $(ROOT), $top, $TOP) that climbs
    above ROOT once its ".." are resolved;
  - in the Makefile and scripts/ and .ci/ (which run in ROOT), a relative
    path starting with "../".

Output: one line per finding "FILE:LINE: why: text", or TAP with --tap.
Exit status 1 if anything was found.
"""

import os
import re
import subprocess
import sys

SCANNED_DIRS = ("tests/", "scripts/", "bench/", ".ci/", "tools/")
SCANNED_FILES = ("Makefile",)
SKIPPED_DIRS = ("tests/toml-test/", "tests/golden/")
SKIPPED_SUFFIXES = (".json", ".toml", ".pyc", ".lock")
# The checker and its own test name the forbidden patterns on purpose.
EXEMPT = ("tests/lib/check-self-contained.py", "tests/repo/self_contained.sh")

NAMED = [
    (re.compile(r"\.\./shared\b"), "names the development machines' ../shared"),
    (re.compile(r"\bMOAT_SHARED_DIR\b"), "names MOAT_SHARED_DIR (a directory beside the clone)"),
    (re.compile(r"(?<![\w.])/work/"), "names the development machines' /work/"),
]

# An anchor followed by a path: the anchor's folder is known, so the path can
# be resolved.  Group 1 is the path after the anchor's slash.
FILE_ANCHORS = [
    re.compile(r'\$\(dirname "?\$(?:0|\{BASH_SOURCE\[0\]\})"?\)/([^\s"\')`;]*)'),
    re.compile(r'\$\{0%/\*\}/([^\s"\')`;]*)'),
]
ROOT_ANCHORS = [
    re.compile(r'(?:\$\{?(?:ROOT|TOP|top|root)\}?|\$\((?:ROOT|CURDIR)\))/([^\s"\')`;]*)'),
]
# Python: os.path.join(here, "..", "..", ...) where here is the script's folder.
PY_JOIN = re.compile(r'os\.path\.join\(\s*(here|os\.path\.dirname\(os\.path\.abspath\(__file__\)\))\s*,((?:\s*"[^"]*"\s*,?)+)\)')
LEADING_DOTDOT = re.compile(r'(?:^|[\s="\'(])(\.\./[^\s"\')]*)')


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True,
                             text=True, check=True).stdout.split("\n")
        files = [f for f in out if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, _, names in os.walk(root):
            for n in names:
                files.append(os.path.relpath(os.path.join(d, n), root))
    keep = []
    for f in files:
        if "node_modules/" in f or f.startswith(SKIPPED_DIRS) or f.endswith(SKIPPED_SUFFIXES) or f in EXEMPT:
            continue
        if f.startswith(SCANNED_DIRS) or f in SCANNED_FILES:
            keep.append(f)
    return sorted(keep)


def climbs_out(base_rel, path):
    """True if PATH, taken relative to BASE_REL (a folder relative to the
    repository root), names something above the root."""
    parts = [p for p in base_rel.split("/") if p and p != "."]
    for comp in path.split("/"):
        if comp in ("", "."):
            continue
        if comp == "..":
            if not parts:
                return True
            parts.pop()
        elif comp.startswith("$"):
            # A variable component: what follows cannot be resolved, and a
            # variable cannot climb by itself.
            break
        else:
            parts.append(comp)
    return False


def scan_text(rel, text):
    findings = []
    folder = os.path.dirname(rel)
    runs_in_root = rel == "Makefile" or rel.startswith(("scripts/", ".ci/"))
    for no, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        for rx, why in NAMED:
            if rx.search(line):
                findings.append((rel, no, why, stripped))
        for rx in FILE_ANCHORS:
            for m in rx.finditer(line):
                if climbs_out(folder, m.group(1)):
                    findings.append((rel, no, "climbs above the repository from the file's folder", stripped))
        for rx in ROOT_ANCHORS:
            for m in rx.finditer(line):
                if climbs_out("", m.group(1)):
                    findings.append((rel, no, "climbs above the repository root", stripped))
        for m in PY_JOIN.finditer(line):
            comps = re.findall(r'"([^"]*)"', m.group(2))
            if climbs_out(folder, "/".join(comps)):
                findings.append((rel, no, "climbs above the repository from the file's folder", stripped))
        if runs_in_root and not stripped.startswith("#"):
            for m in LEADING_DOTDOT.finditer(line):
                findings.append((rel, no, "a relative path above the repository root", stripped))
    return findings


def main(argv):
    tap = "--tap" in argv
    args = [a for a in argv if a != "--tap"]
    if len(args) != 1:
        sys.stderr.write("usage: check-self-contained.py [--tap] ROOT\n")
        return 2
    root = args[0]
    files = tracked_files(root)
    findings = []
    for rel in files:
        try:
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                findings.extend(scan_text(rel, f.read()))
        except OSError as e:
            findings.append((rel, 0, f"cannot read: {e.strerror}", ""))
    if tap:
        print(f"{'ok' if files else 'not ok'} 1 - {len(files)} test, build and set-up files scanned")
        print(f"{'not ok' if findings else 'ok'} 2 - no file refers to a path outside the repository")
        for rel, no, why, text in findings:
            print(f"#   {rel}:{no}: {why}: {text}")
    else:
        for rel, no, why, text in findings:
            print(f"{rel}:{no}: {why}: {text}")
    return 1 if findings or not files else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
