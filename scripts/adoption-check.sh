#!/usr/bin/env bash
# What an app that adds KioskKit really resolves: clones this repository (a commit of it: uncommitted changes are
# not seen) into a temporary folder, makes a throw-away app package that depends on the clone by a file:// URL and
# uses only the KioskKit product, resolves it, and prints the pins of its Package.resolved. Twice: with the
# package's default traits, and with `traits: []` as the README ("Adding KioskKit") says.
#
#   scripts/adoption-check.sh              # HEAD
#   scripts/adoption-check.sh main~3       # any commit, branch or tag
#   BUILD=1 scripts/adoption-check.sh      # also build both apps, listing the checkouts and the targets compiled
#
# Not run by CI. Works offline when git finds github.com elsewhere (a url.<base>.insteadOf setting). Leaves
# nothing behind unless KEEP=1 (then it prints the folder).
set -euo pipefail

REF="${1:-HEAD}"
REPO="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
COMMIT="$(git -C "$REPO" rev-parse --verify "$REF^{commit}")"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kiosk-adoption.XXXXXX")"
if [[ "${KEEP:-0}" == 1 ]]; then
    echo "work folder: $WORK"
else
    trap 'rm -rf "$WORK"' EXIT
fi

git clone --quiet "$REPO" "$WORK/kiosk"
git -C "$WORK/kiosk" checkout --quiet -B adoption "$COMMIT"
echo "kiosk at $(git -C "$WORK/kiosk" log -1 --format='%h %s' | cut -c1-100)"
echo "$(swift --version 2>/dev/null | head -1)"

# make_app NAME TRAITS_ARGUMENT: an app package depending on the clone's KioskKit product.
make_app() {
    local app="$WORK/$1"
    mkdir -p "$app/Sources/App"
    cat > "$app/Package.swift" <<EOF
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "App",
    platforms: [.macOS(.v14), .iOS(.v17)],
    dependencies: [
        .package(url: "file://$WORK/kiosk", branch: "adoption"$2),
    ],
    targets: [
        .executableTarget(name: "App", dependencies: [.product(name: "KioskKit", package: "kiosk")]),
    ]
)
EOF
    cat > "$app/Sources/App/main.swift" <<'EOF'
import KioskKit

print(KioskClient.self)
EOF
}

# pins NAME: resolves the app and prints its pins.
pins() {
    local app="$WORK/$1"
    (cd "$app" && swift package resolve > "$app/resolve.log" 2>&1) || {
        if grep -q "declares no traits" "$app/resolve.log"; then
            echo "$1: not applicable (this commit of kiosk declares no traits)"
            return 0
        fi
        cat "$app/resolve.log" >&2
        return 1
    }
    echo "$1: fetched $(grep -c '^Fetched' "$app/resolve.log") repositories (from the network or SwiftPM's cache)"
    local list
    list="$(sed -n 's/^ *"identity" *: *"\(.*\)".*/\1/p' "$app/Package.resolved" | sort)"
    echo "$1: $(grep -c . <<< "$list") pins: $(tr '\n' ' ' <<< "$list")"
}

make_app default-traits ""
pins default-traits
make_app no-traits ", traits: []"
pins no-traits

# built NAME: builds the app and prints the packages checked out and the targets compiled (those with object files).
built() {
    local app="$WORK/$1"
    (cd "$app" && swift build > "$app/build.log" 2>&1) || {
        cat "$app/build.log" >&2
        return 1
    }
    echo "$1 build: $(find "$app/.build/checkouts" -mindepth 1 -maxdepth 1 | wc -l) checkouts:" \
        "$(ls "$app/.build/checkouts" | tr '\n' ' ')"
    local targets=""
    for folder in "$app"/.build/debug/*.build; do
        if [[ -n "$(find "$folder" -name '*.o' -print -quit)" ]]; then targets+="$(basename "$folder" .build) "; fi
    done
    echo "$1 build: targets compiled: $targets"
}

if [[ "${BUILD:-0}" == 1 ]]; then
    built default-traits
    if [[ -f "$WORK/no-traits/Package.resolved" ]]; then built no-traits; fi
fi
