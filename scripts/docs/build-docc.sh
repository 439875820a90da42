#!/usr/bin/env bash
# KioskKit's documentation, built with no warning: the DocC catalog Sources/KioskKit/KioskKit.docc and the `///`
# comments of KioskKit's public symbols, with the toolchain's `docc` and no plugin (the package depends on no
# swift-docc-plugin, so an app that adds KioskKit resolves nothing more). Run by .ci/run.
#
#   scripts/docs/build-docc.sh                                  # into .build/docc/KioskKit.doccarchive
#   OUTPUT=/tmp/KioskKit.doccarchive scripts/docs/build-docc.sh
#   docc preview Sources/KioskKit/KioskKit.docc --additional-symbol-graph-dir .build/docc/symbol-graphs/KioskKit \
#       --fallback-display-name KioskKit --fallback-bundle-identifier com.example.kiosk.KioskKit   # to browse it
#
# 1. Builds KioskKit as an app gets it, with the compiler emitting symbol graphs: the package Examples/ReadmeSnippets,
#    which adds KioskKit with `traits: []` (KioskCore, KioskKit and swift-crypto only) and compiles every snippet of
#    the README and of the catalog (the snippets check: Examples/ReadmeSnippets/check-snippets.py says which). One
#    build for both: swift-crypto is compiled once more than the main build, not twice.
# 2. Keeps KioskKit's own symbols: the compiler's graph of KioskKit also holds every symbol of the modules it
#    re-exports (Foundation, KioskCore…), which DocC would document as KioskKit's (docc-symbols.py filter).
# 3. Checks that every top-level public symbol is in a Topics section of the catalog, and every member of a symbol
#    with an extension file (Extensions/KioskClient.md…) in that file's Topics (docc-symbols.py check-catalog).
# 4. docc convert --warnings-as-errors: a link that resolves to nothing (in an article or a `///` comment), an
#    ambiguous one, a malformed directive… fail the build. Then checks that docc made up no topic group for a symbol
#    nobody curated (docc-symbols.py check-archive): docc does not warn about those.
# Exits non-zero on any warning or uncurated symbol, and prints how long it took.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS

SCRATCH="$PWD/.build/docc"
OUTPUT="${OUTPUT:-$SCRATCH/KioskKit.doccarchive}"
CATALOG=Sources/KioskKit/KioskKit.docc
ALL_GRAPHS="$SCRATCH/symbol-graphs/all"
GRAPHS="$SCRATCH/symbol-graphs/KioskKit"

echo "== build Examples/ReadmeSnippets (KioskKit with traits: [], every snippet) with symbol graphs"
rm -rf "$ALL_GRAPHS"
mkdir -p "$ALL_GRAPHS"
swift build --package-path Examples/ReadmeSnippets \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$ALL_GRAPHS"

echo "== KioskKit's own symbols"
python3 scripts/docs/docc-symbols.py filter "$ALL_GRAPHS" "$GRAPHS"

echo "== curation: every public symbol in a Topics section"
python3 scripts/docs/docc-symbols.py check-catalog "$GRAPHS" "$CATALOG"

echo "== docc convert (warnings as errors)"
rm -rf "$OUTPUT"
log="$SCRATCH/docc-convert.log"
status=0
docc convert "$CATALOG" --additional-symbol-graph-dir "$GRAPHS" \
    --fallback-display-name KioskKit --fallback-bundle-identifier com.example.kiosk.KioskKit \
    --warnings-as-errors --output-path "$OUTPUT" > "$log" 2>&1 || status=$?
grep -v '^[[:space:]]*$' "$log" || true
# --warnings-as-errors makes every warning an error; a warning that still came out as one fails the build too.
if [[ $status -ne 0 ]] || grep -qE '(warning|error):' "$log"; then
    echo "docc convert: warnings or errors (exit status $status)" >&2
    exit 1
fi
python3 scripts/docs/docc-symbols.py check-archive "$OUTPUT"

echo "KioskKit documentation in $OUTPUT, no warning, in $((SECONDS - start)) s"
