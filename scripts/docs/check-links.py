#!/usr/bin/env python3
"""Checks every link of the repository's Markdown files (those git tracks, the DocC catalog's included): a relative
link must name a file or folder that exists, and its #anchor a heading (as GitHub makes anchors of headings) or an
explicit <a id> / <a name> of that file. External links (http, https, mailto) are listed, not fetched.

    scripts/docs/check-links.py            # exit status 1 when a link is broken
"""
import pathlib
import re
import subprocess
import sys
import unicodedata

root = pathlib.Path(__file__).resolve().parents[2]
files = [root / name for name in subprocess.run(
    ["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard", "*.md"],
    capture_output=True, text=True, check=True).stdout.split()]

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"(?<!\!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|<(https?://[^>]+)>")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def slug(heading):
    """The anchor GitHub gives a heading: lowercase, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    kept = []
    for character in text:
        category = unicodedata.category(character)
        if character in " -_" or category[0] in "LN" or category == "Mn":
            kept.append(character)
    return "".join(kept).replace(" ", "-")


def prose(path):
    """The file's lines outside fenced code blocks."""
    inside = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line.strip()):
            inside = not inside
            continue
        if not inside:
            yield number, line


anchors_cache = {}


def anchors(path):
    if path not in anchors_cache:
        found, seen = set(), {}
        for _, line in prose(path):
            found.update(EXPLICIT.findall(line))
            match = HEADING.match(line)
            if match:
                base = slug(match[2])
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
        anchors_cache[path] = found
    return anchors_cache[path]


broken, external, checked = [], set(), 0
for path in files:
    if not path.exists():
        continue
    for number, line in prose(path):
        line = re.sub(r"`[^`]*`", "", line)  # code spans hold no links
        for match in list(LINK.finditer(line)) + list(IMAGE.finditer(line)):
            target = next(group for group in match.groups() if group)
            if re.match(r"^(https?|mailto|doc):", target) or target.startswith("<"):
                if target.startswith("http"):
                    external.add(target)
                continue
            checked += 1
            file_part, _, anchor = target.partition("#")
            destination = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(root)}:{number}"
            if not destination.exists():
                broken.append(f"{where}: {target} (no such file)")
            elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
                broken.append(f"{where}: {target} (no heading or anchor '{anchor}' in {destination.name})")

print(f"{len(files)} Markdown files, {checked} internal links checked, {len(external)} external links (not fetched)")
for link in sorted(external):
    print(f"  external: {link}")
for problem in broken:
    print(f"BROKEN {problem}", file=sys.stderr)
sys.exit(1 if broken else 0)
