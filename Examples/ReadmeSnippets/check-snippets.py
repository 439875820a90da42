#!/usr/bin/env python3
"""Checks that every Swift snippet of the README's "For app developers (KioskKit)" section, and of the articles of
KioskKit's DocC catalog (Sources/KioskKit/KioskKit.docc), but the Package.swift one, appears in this package's
sources: the same lines, in order, next to each other (runs of spaces aside, so that the sources can be formatted,
and import lines aside: each source file imports what its snippets import)."""
import pathlib
import re
import sys

here = pathlib.Path(__file__).resolve().parent
root = here.parent.parent
readme = (root / "README.md").read_text()
section = readme.split("## For app developers (KioskKit)", 1)[1].split("\n## ", 1)[0]
catalog = sorted(root.glob("Sources/KioskKit/KioskKit.docc/**/*.md"))
documents = [("README", section)] + [(str(path.relative_to(root)), path.read_text()) for path in catalog]
sources = [" ".join(line.split()) for path in sorted(here.glob("Sources/**/*.swift")) for line in path.read_text().splitlines()]
sources = [line for line in sources if line]

total = missing = 0
for name, text in documents:
    for snippet in re.findall(r"```swift\n(.*?)```", text, re.S):
        lines = [" ".join(line.split()) for line in snippet.splitlines() if line.strip()]
        if lines[0] == "// swift-tools-version:6.1 or later (package traits)":
            continue
        total += 1
        lines = [line for line in lines if not line.startswith("import ")]
        if not any(sources[i : i + len(lines)] == lines for i in range(len(sources))):
            missing += 1
            print(f"{name} snippet not in Examples/ReadmeSnippets:\n" + snippet, file=sys.stderr)
print(f"{total} snippets (the README and {len(catalog)} pages of KioskKit.docc), {missing} missing from "
      "Examples/ReadmeSnippets")
sys.exit(1 if missing else 0)
