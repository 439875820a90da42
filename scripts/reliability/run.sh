#!/usr/bin/env bash
# The reliability suite in one command: runs every scenario and writes the report to RELIABILITY.md.
#
#   scripts/reliability/run.sh          # from the repository root; ~20 minutes after the builds
#
# Scenarios (each also runs on its own):
#   chaos    200 downloads through KioskKit against `--faults chaos`   swift test --filter ChaosTests
#   kills    kill -9 the client 10 times, and the server once          scripts/reliability/kills.sh
#   load     500 concurrent ranged downloads, RSS and descriptors       scripts/reliability/load.sh
#   hostile  slowloris, body drips, readers that never read, huge headers  scripts/reliability/hostile.sh
#   fuzz     libFuzzer on the range parser, Info.json, verifyReceipt    scripts/fuzz.sh
#
# Environment: CHAOS_DOWNLOADS (200), FUZZ_SECONDS (60 per target), KIOSK_BIN (a release kiosk; built otherwise),
# and the knobs of each script. The fast variants of chaos and hostile run in every `swift test`.
set -euo pipefail

cd "$(dirname "$0")/../.."
OUT_DIR=bench-out/reliability
mkdir -p "$OUT_DIR"
CHAOS_DOWNLOADS="${CHAOS_DOWNLOADS:-200}"
FUZZ_SECONDS="${FUZZ_SECONDS:-60}"

if [[ -z "${KIOSK_BIN:-}" ]]; then
    echo "building kiosk (release)…" >&2
    swift build -c release --product kiosk --scratch-path .build-release >&2
    KIOSK_BIN="$(swift build -c release --scratch-path .build-release --show-bin-path)/kiosk"
fi
export KIOSK_BIN

echo "== building the tests" >&2
swift build --build-tests >&2

echo "== chaos: $CHAOS_DOWNLOADS downloads" >&2
KIOSK_CHAOS_DOWNLOADS="$CHAOS_DOWNLOADS" KIOSK_CHAOS_REPORT="$PWD/$OUT_DIR/chaos.json" \
    swift test --skip-build --filter ChaosTests 2>&1 | tee "$OUT_DIR/chaos.log" | grep -E "chaos:|passed|failed" >&2

echo "== kills" >&2
scripts/reliability/kills.sh 2>&1 | tee "$OUT_DIR/kills.log" >&2

echo "== load" >&2
scripts/reliability/load.sh 2>&1 | tee "$OUT_DIR/load.log" >&2

echo "== hostile clients" >&2
scripts/reliability/hostile.sh 2>&1 | tee "$OUT_DIR/hostile.log" >&2

echo "== fuzz: ${FUZZ_SECONDS} s per target" >&2
scripts/fuzz.sh "$FUZZ_SECONDS" 2>&1 | tee "$OUT_DIR/fuzz.log" >&2

python3 - "$OUT_DIR" "$CHAOS_DOWNLOADS" <<'PY'
import datetime, json, os, re, subprocess, sys
out_dir, downloads = sys.argv[1], sys.argv[2]
def read(name):
    with open(os.path.join(out_dir, name)) as f: return f.read()
def tail_block(text, start_pattern):
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.search(start_pattern, line): return "\n".join(lines[i:])
    return "\n".join(lines[-20:])
chaos = json.loads(read("chaos.json"))
mib = lambda n: n / (1 << 20)
cpu = subprocess.run(["awk", "-F: ", "/^model name/ {print $2; exit}", "/proc/cpuinfo"], capture_output=True, text=True).stdout.strip()
when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
with open("RELIABILITY.md", "w") as out:
    w = out.write
    w("# Reliability report\n\n")
    w(f"Written by `scripts/reliability/run.sh` on {when}; {os.cpu_count()} CPUs ({cpu}). Each section names the "
      "command that reproduces it.\n\n")
    w("## Chaos: downloads through KioskKit under random faults\n\n")
    w(f"`KIOSK_CHAOS_DOWNLOADS={downloads} swift test --filter ChaosTests` — a server with `--faults "
      f"chaos:{chaos['probability']}` (seed {chaos['seed']}): each content request gets, with that probability, one "
      "fault of a random kind (cut, throttle, stall, 503/429 with Retry-After, 500, ignored Range, changed ETag, "
      "corrupted byte, slow first byte). Every installed file is compared with the source's SHA-256.\n\n")
    w("| figure | value |\n|---|---:|\n")
    w(f"| downloads asked | {chaos['downloads']} |\n")
    w(f"| installed and verified | **{chaos['installed_and_verified']}** |\n")
    w(f"| faults injected | {chaos['faults_total']} |\n")
    for kind, count in sorted(chaos["faults_injected"].items()):
        w(f"| — {kind} | {count} |\n")
    w(f"| bytes the downloads needed | {mib(chaos['bytes_needed']):.1f} MiB |\n")
    w(f"| bytes the server sent | {mib(chaos['bytes_sent']):.1f} MiB |\n")
    w(f"| bytes fetched more than once | {mib(chaos['bytes_refetched']):.1f} MiB "
      f"({chaos['bytes_refetched'] / max(chaos['bytes_needed'], 1) * 100:.1f} %) |\n")
    w(f"| downloads the app had to resume after a final failure | {chaos['app_level_retries']} |\n")
    w(f"| wall time | {chaos['seconds']:.0f} s |\n\n")
    w("Bytes are fetched again only where the fault makes earlier bytes unusable: a 200 that ignored the Range or a "
      "changed ETag restarts that file, a corrupted byte fails the file's SHA-256 and its bytes are discarded, and a "
      "cut loses what was in flight.\n\n")
    w("## Kill -9: client and server\n\n`scripts/reliability/kills.sh`\n\n```\n")
    w(tail_block(read("kills.log"), r"^== scenario 1") + "\n```\n\n")
    w("A restarted client first re-reads and re-hashes the bytes it already has (a SHA-256 in progress cannot be "
      "saved in the journal) at about 200 MiB/s here, so a kill that lands within those few seconds finds no new bytes "
      "on disk; what a kill "
      "costs in bytes is what was in flight in the client's buffers.\n\n")
    w("## Load: 500 concurrent ranged downloads\n\n`scripts/reliability/load.sh`\n\n")
    w(tail_block(read("load.log"), r"^###") + "\n\n")
    w("## Hostile clients\n\n`scripts/reliability/hostile.sh` (a lighter version of each scenario runs in every "
      "`swift test`: `HostileClientTests`). A normal client asks for `/healthz` throughout.\n\n")
    w(tail_block(read("hostile.log"), r"^###") + "\n\n")
    w("## Fuzzing\n\n`scripts/fuzz.sh` (libFuzzer, `-sanitize=fuzzer`), seed corpus in `Fuzz/Corpus/`.\n\n```\n")
    w(tail_block(read("fuzz.log"), r"target") + "\n```\n")
print("wrote RELIABILITY.md", file=sys.stderr)
PY
