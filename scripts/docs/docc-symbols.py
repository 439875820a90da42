#!/usr/bin/env python3
"""KioskKit's symbol graph for DocC, and the checks that the catalog curates every public symbol (build-docc.sh).

  docc-symbols.py filter GRAPHS OUT          keeps KioskKit's own symbols: GRAPHS/KioskKit*.symbols.json -> OUT
  docc-symbols.py check-catalog OUT CATALOG  every top-level symbol in a Topics section of the catalog, and every
                                             member of a symbol with an extension file in that file's Topics
  docc-symbols.py check-archive ARCHIVE      no page with Topics of its own has a group docc made up for the rest

Why a filter: the compiler's symbol graph of a module (-emit-symbol-graph) also holds every public symbol of the
modules it re-exports, and KioskKit re-exports Foundation, FoundationNetworking and KioskCore (Client/Exports.swift):
20,000 symbols, which DocC would document as KioskKit's. KioskKit's own are those whose USR is mangled in KioskKit
(`s:8KioskKit…`), and the members the compiler synthesizes for them (`…::SYNTHESIZED::s:8KioskKit…`).

Why two curation checks: DocC puts a symbol that no Topics section names in a group of its own making (a warning
only with some flags), so a new public type would silently land in "Structures" of the landing page. The catalog
check reads the Markdown (and says which symbol is missing); the archive check reads what docc made of it (it sees
overloads and links exactly as docc resolved them).
"""
import json
import pathlib
import re
import sys

MODULE = "KioskKit"
OWN = "s:8KioskKit"
SYNTHESIZED = "::SYNTHESIZED::"
# Groups docc generates on a curated page that hold no symbol of KioskKit's own: the members a type inherits from a
# protocol's default implementations (an actor's `assumeIsolated`, …).
INHERITED_GROUPS = {"Default Implementations"}


def own(usr):
    """Whether a symbol is declared in KioskKit, or synthesized by the compiler for a type declared there."""
    return usr.startswith(OWN) or (SYNTHESIZED in usr and usr.split(SYNTHESIZED, 1)[1].startswith(OWN))


def filter_graphs(graphs, out):
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.symbols.json"):
        old.unlink()
    main = graphs / f"{MODULE}.symbols.json"
    if not main.exists():
        sys.exit(f"error: no {main}: the build emitted no symbol graph for {MODULE} (delete .build/docc and run again)")
    kept_total = 0
    for path in sorted(graphs.glob(f"{MODULE}*.symbols.json")):
        graph = json.loads(path.read_text())
        symbols = graph["symbols"]
        # A member that KioskKit adds to a type of another module is mangled in that type's module with a KioskKit
        # extension context (`…8KioskKitE…`): none today; refuse it rather than leave it out of the documentation.
        foreign = [s["identifier"]["precise"] for s in symbols if not own(s["identifier"]["precise"])
                   and "8KioskKitE" in s["identifier"]["precise"].split(SYNTHESIZED)[0]]
        if foreign:
            sys.exit(f"error: {path.name}: KioskKit extends types of other modules ({', '.join(foreign[:5])}); "
                     "scripts/docs/docc-symbols.py does not document those yet")
        graph["symbols"] = [s for s in symbols if own(s["identifier"]["precise"])]
        kept = {s["identifier"]["precise"] for s in graph["symbols"]}
        graph["relationships"] = [r for r in graph["relationships"] if r["source"] in kept]
        if graph["symbols"]:
            (out / path.name).write_text(json.dumps(graph))
        print(f"{path.name}: {len(kept)} of {len(symbols)} symbols are {MODULE}'s own")
        kept_total += len(kept)
    if kept_total == 0:
        sys.exit(f"error: no symbol of {MODULE} in {graphs}")


def base_name(component):
    """A path component without its disambiguation: `pause(_:)-(String)` -> `pause(_:)`, `Configuration-swift.struct`
    -> `Configuration`."""
    match = re.match(r"^([^(]*\([^)]*\))(-.*)?$", component) or re.match(r"^([^-]+)(-.*)?$", component)
    return match.group(1) if match else component


def topics_links(markdown):
    """The symbol links of the list items of a page's `## Topics` section."""
    links, in_topics = [], False
    for line in markdown.splitlines():
        if line.startswith("## "):
            in_topics = line.strip() == "## Topics"
        elif in_topics and line.lstrip().startswith("- "):
            links += re.findall(r"``([^`]+)``", line)
    return links


def check_catalog(out, catalog):
    symbols = [s for path in sorted(out.glob("*.symbols.json")) for s in json.loads(path.read_text())["symbols"]]
    symbols = [s for s in symbols if SYNTHESIZED not in s["identifier"]["precise"]]
    paths = {tuple(s["pathComponents"]) for s in symbols}

    def resolve(link, scope):
        """The symbol path a link names, looked up from `scope` outwards as DocC does."""
        components = [base_name(c) for c in link.split("/")]
        if components[0] == MODULE:
            components = components[1:]
        for depth in range(len(scope), -1, -1):
            candidate = tuple(scope[:depth]) + tuple(components)
            if candidate in paths:
                return candidate
        return None

    curated = {}  # symbol path -> how many links name it (overloads are named once each)
    pages = {}  # the symbol path of each extension file -> the paths its Topics name
    for page in sorted(catalog.rglob("*.md")):
        text = page.read_text()
        title = re.match(r"#\s+``([^`]+)``", text)
        scope = [c for c in title.group(1).split("/") if c != MODULE] if title else []
        named = []
        for link in topics_links(text):
            target = resolve(link, scope)
            if target is None:
                continue  # docc reports a link that resolves to nothing
            curated[target] = curated.get(target, 0) + 1
            named.append(target)
        if title and scope:
            pages[tuple(scope)] = named

    missing = []
    top = sorted({p for p in paths if len(p) == 1})
    missing += [f"{p[0]} (a top-level symbol): in no Topics section" for p in top if p not in curated]
    for owner, named in sorted(pages.items()):
        members = {}
        for s in symbols:
            path = tuple(s["pathComponents"])
            if len(path) == len(owner) + 1 and path[:-1] == owner:
                members[path] = members.get(path, 0) + 1
        for path, overloads in sorted(members.items()):
            links = named.count(path)
            if links < overloads:
                missing.append(f"{'/'.join(path)}: {overloads} symbol(s), {links} in the Topics of "
                               f"{'/'.join(owner)}'s extension file")
    for line in missing:
        print("uncurated: " + line, file=sys.stderr)
    owners = ", ".join("/".join(o) for o in sorted(pages)) or "none"
    print(f"catalog: {len(top)} top-level symbols and the members of {owners} (extension files): "
          f"{len(missing) or 'none'} uncurated")
    sys.exit(1 if missing else 0)


def check_archive(archive):
    found = []
    for path in sorted((archive / "data" / "documentation").rglob("*.json")):
        page = json.loads(path.read_text())
        sections = page.get("topicSections", [])
        if not any(not s.get("generated") for s in sections):
            continue  # a page without Topics of its own: docc groups its members, as intended
        for section in sections:
            if section.get("generated") and section.get("title") not in INHERITED_GROUPS:
                names = [i.rsplit("/", 1)[-1] for i in section["identifiers"]]
                found.append(f"{page['identifier']['url'].split('/documentation/', 1)[-1]}: docc made up the group \"{section.get('title')}\" for "
                             f"{', '.join(names)}")
    for line in found:
        print("uncurated: " + line, file=sys.stderr)
    print(f"archive: {'no' if not found else len(found)} topic group(s) made up by docc on curated pages")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    command, *arguments = sys.argv[1:] or [""]
    if command == "filter" and len(arguments) == 2:
        filter_graphs(*map(pathlib.Path, arguments))
    elif command == "check-catalog" and len(arguments) == 2:
        check_catalog(*map(pathlib.Path, arguments))
    elif command == "check-archive" and len(arguments) == 1:
        check_archive(pathlib.Path(arguments[0]))
    else:
        sys.exit(__doc__)
