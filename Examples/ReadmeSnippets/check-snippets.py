#!/usr/bin/env python3
"""Checks that every Swift snippet of the README's "For app developers (KioskKit)" section, but the Package.swift
one, appears in this package's sources: the same lines, in order, next to each other (runs of spaces aside, so
that the sources can be formatted, and import lines aside: each source file imports what its snippets import)."""
import pathlib
import re
import sys

here = pathlib.Path(__file__).resolve().parent
readme = (here / "../../README.md").read_text()
section = readme.split("## For app developers (KioskKit)", 1)[1].split("\n## ", 1)[0]
snippets = re.findall(r"```swift\n(.*?)```", section, re.S)
sources = [" ".join(line.split()) for path in sorted(here.glob("Sources/**/*.swift")) for line in path.read_text().splitlines()]
sources = [line for line in sources if line]

missing = 0
for snippet in snippets:
    lines = [" ".join(line.split()) for line in snippet.splitlines() if line.strip()]
    if lines[0] == "// swift-tools-version:6.1 or later (package traits)":
        continue
    lines = [line for line in lines if not line.startswith("import ")]
    if not any(sources[i : i + len(lines)] == lines for i in range(len(sources))):
        missing += 1
        print("README snippet not in Examples/ReadmeSnippets:\n" + snippet, file=sys.stderr)
print(f"{len(snippets)} README snippets, {missing} missing from Examples/ReadmeSnippets")
sys.exit(1 if missing else 0)
