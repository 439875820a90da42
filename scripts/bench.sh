#!/usr/bin/env bash
# The one benchmark entry point: builds `kiosk` in release once, runs the server benchmark (Kiosk against nginx,
# scripts/bench-server.sh) and the client benchmark (`kiosk get` against curl, scripts/bench-client.sh), and writes
# their figures, the machine and the method to BENCHMARKS.md.
#
#   scripts/bench.sh                 # from the repository root; ~5 minutes after the build
#
# Environment: KIOSK_BIN (use this binary, skip the build), BENCH_NOTES (extra Markdown appended at the end,
# default scripts/bench/NOTES.md), and every knob of the two scripts it runs.
set -euo pipefail

cd "$(dirname "$0")/.."
mkdir -p bench-out

if [[ -z "${KIOSK_BIN:-}" ]]; then
    echo "building kiosk (release)…" >&2
    swift build -c release --product kiosk --scratch-path .build-release >&2
    KIOSK_BIN="$(swift build -c release --scratch-path .build-release --show-bin-path)/kiosk"
fi
export KIOSK_BIN

BENCH_OUT=bench-out/server.md scripts/bench-server.sh
BENCH_CLIENT_OUT=bench-out/client.md scripts/bench-client.sh

demote() { sed -e 's/^## /### /' -e 's/^# /## /' "$1"; }
{
    echo "# Benchmarks"
    echo
    echo "Written by \`scripts/bench.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'). Machine: $(nproc) CPUs" \
        "($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)," \
        "$(uname -sr), $(swift --version 2>&1 | head -1 || echo "Swift n/a"). Server, client and load generator share" \
        "the same CPUs, so single figures move between runs; the ratios against a reference measured in the same run are" \
        "the steadier numbers."
    echo
    demote bench-out/server.md
    echo
    demote bench-out/client.md
    notes="${BENCH_NOTES:-scripts/bench/NOTES.md}"
    if [[ -f "$notes" ]]; then
        echo
        cat "$notes"
    fi
} > BENCHMARKS.md
echo "wrote BENCHMARKS.md" >&2
