#!/usr/bin/env bash
# Kill -9 scenarios for resumable downloads (issue 4):
#   1. the client: `kiosk get` of a large product is killed with SIGKILL KILLS times at random points and
#      restarted each time, then allowed to finish;
#   2. the server: `kiosk serve` is killed with SIGKILL in the middle of a download and restarted on the same
#      port and data folder while the client keeps going.
# Each scenario checks the installed file's SHA-256 against the source and reports the bytes the server sent
# beyond the file's length (bytes fetched more than once). Verified bytes are never fetched again: what a kill
# loses is at most what was in flight in the client's buffers.
#
# Environment: SIZE_MIB (default 512), KILLS (default 10), PORT (default 18491), SEED (default: random),
#              KIOSK_BIN (skip the build, use this binary), KIOSK_BUILD_PATH (scratch path, default .build-release).
set -euo pipefail

cd "$(dirname "$0")/../.."
SIZE_MIB="${SIZE_MIB:-512}"
KILLS="${KILLS:-10}"
PORT="${PORT:-18491}"
SEED="${SEED:-$RANDOM}"
PRODUCT="com.example.kiosk.reliability.kills"
SERVER="http://127.0.0.1:${PORT}"
RANDOM="$SEED"

for tool in curl python3 sha256sum; do
    command -v "$tool" >/dev/null || { echo "kills: $tool is required" >&2; exit 1; }
done

if [[ -z "${KIOSK_BIN:-}" ]]; then
    BUILD_PATH="${KIOSK_BUILD_PATH:-.build-release}"
    echo "building release…" >&2
    swift build -c release --product kiosk --scratch-path "$BUILD_PATH" >&2
    KIOSK_BIN="$(swift build -c release --scratch-path "$BUILD_PATH" --show-bin-path)/kiosk"
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kiosk-kills.XXXXXX")"
SERVER_PID=""
CLIENT_PID=""
cleanup() {
    [[ -n "$CLIENT_PID" ]] && kill -9 "$CLIENT_PID" 2>/dev/null || true
    [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

echo "generating a ${SIZE_MIB} MiB product…" >&2
mkdir -p "$WORK/content/$PRODUCT/Contents"
head -c "$((SIZE_MIB << 20))" /dev/urandom > "$WORK/content/$PRODUCT/Contents/payload.bin"
EXPECTED_SHA="$(sha256sum "$WORK/content/$PRODUCT/Contents/payload.bin" | cut -d' ' -f1)"
SIZE_BYTES=$((SIZE_MIB << 20))
cat > "$WORK/content/$PRODUCT/Info.json" <<JSON
{ "product_id": "$PRODUCT", "type": "non_consumable", "title": "Kill test payload",
  "description": "A generated file for scripts/reliability/kills.sh.", "content_version": "1.0",
  "published_at": "2026-11-01T00:00:00Z" }
JSON

start_server() {
    "$KIOSK_BIN" serve --port "$PORT" --content "$WORK/content" --data "$WORK/data" --reload-interval 0 \
        --log-level error >> "$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 600); do
        if curl -fsS "$SERVER/v1/products?ids=$PRODUCT" 2>/dev/null | grep -q "\"$PRODUCT\""; then return; fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then cat "$WORK/server.log" >&2; echo "kills: the server died" >&2; exit 1; fi
        sleep 0.1
    done
    echo "kills: the server did not start" >&2
    exit 1
}

bytes_sent() { curl -fsS "$SERVER/metrics" | awk '$1 == "kiosk_content_bytes_sent_total" { printf "%d\n", $2 }'; }
part_bytes() { stat -c %s "$1/Staging/$PRODUCT/Contents/payload.bin.part" 2>/dev/null || echo 0; }
start_client() {
    "$KIOSK_BIN" get "$PRODUCT" --receipt "$WORK/receipt.txt" --server "$SERVER" --cache "$1" \
        > "$WORK/get.out" 2>> "$WORK/get.err" &
    CLIENT_PID=$!
}
check_installed() {
    local installed
    installed="$(tail -n 1 "$WORK/get.out")/Contents/payload.bin"
    [[ -f "$installed" ]] || { echo "kills: nothing installed at $installed" >&2; cat "$WORK/get.err" >&2; exit 1; }
    [[ "$(sha256sum "$installed" | cut -d' ' -f1)" == "$EXPECTED_SHA" ]] \
        || { echo "kills: the installed file's SHA-256 is wrong" >&2; exit 1; }
}

start_server
"$KIOSK_BIN" buy "$PRODUCT" --server "$SERVER" > "$WORK/receipt.txt" 2>/dev/null

echo "== scenario 1: kill -9 the client ${KILLS} times (seed ${SEED})"
CACHE="$WORK/cache-client"
sent_before="$(bytes_sent)"
for kill in $(seq 1 "$KILLS"); do
    start_client "$CACHE"
    # A random point between 0.3 s and 2.3 s into this run.
    delay="$(python3 -c "import random,sys; random.seed(int(sys.argv[1])); print(f'{0.3 + random.random() * 2:.2f}')" "$((SEED + kill))")"
    sleep "$delay"
    if ! kill -0 "$CLIENT_PID" 2>/dev/null; then
        wait "$CLIENT_PID" || true
        echo "   kill $kill: the download had already finished" >&2
        CLIENT_PID=""
        break
    fi
    kill -9 "$CLIENT_PID"
    wait "$CLIENT_PID" 2>/dev/null || true
    CLIENT_PID=""
    printf '   kill %2d after %s s: %5d MiB on disk\n' "$kill" "$delay" "$(( $(part_bytes "$CACHE") >> 20 ))"
done
start_client "$CACHE"
wait "$CLIENT_PID" || { cat "$WORK/get.err" >&2; echo "kills: the final run failed" >&2; exit 1; }
CLIENT_PID=""
check_installed
sent_client=$(( $(bytes_sent) - sent_before ))
refetched_client=$(( sent_client - SIZE_BYTES ))

echo "== scenario 2: kill -9 the server mid-download"
CACHE="$WORK/cache-server"
start_client "$CACHE"
sleep 1.5
kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
sleep 0.5
on_disk_at_kill="$(part_bytes "$CACHE")"
echo "   server killed with $(( on_disk_at_kill >> 20 )) MiB on the client's disk; restarting it in 1 s" >&2
sleep 1
start_server
wait "$CLIENT_PID" || { cat "$WORK/get.err" >&2; echo "kills: the download did not survive the server kill" >&2; exit 1; }
CLIENT_PID=""
check_installed
sent_after_restart="$(bytes_sent)"
refetched_server=$(( sent_after_restart - (SIZE_BYTES - on_disk_at_kill) ))

python3 - "$SIZE_MIB" "$KILLS" "$sent_client" "$refetched_client" "$on_disk_at_kill" "$sent_after_restart" \
    "$refetched_server" <<'PY'
import sys
size, kills, sent_c, refetch_c, disk_at_kill, sent_s, refetch_s = (int(x) for x in sys.argv[1:])
mib = lambda n: n / (1 << 20)
print(f"payload: {size} MiB")
print(f"client kill -9 x{kills}: installed, SHA-256 ok; server sent {mib(sent_c):.1f} MiB, "
      f"re-fetched {mib(refetch_c):.1f} MiB ({refetch_c / (size << 20) * 100:.2f}% of the file, "
      f"{mib(refetch_c) / max(kills, 1):.2f} MiB per kill)")
print(f"server kill -9 + restart: installed, SHA-256 ok; {mib(disk_at_kill):.1f} MiB on disk at the kill were kept; "
      f"the restarted server sent {mib(sent_s):.1f} MiB, re-fetched {mib(refetch_s):.1f} MiB")
PY
