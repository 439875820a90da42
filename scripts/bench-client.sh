#!/usr/bin/env bash
# Benchmarks the KioskKit client: `kiosk get` of a generated product (1 GiB by default) against `curl -o` of the
# same file, with a grant token, from the same `kiosk serve` on loopback. Prints each tool's throughput (median
# and best of RUNS), the ratio, and `kiosk get`'s peak RSS. Targets: ratio >= 0.9, peak RSS < 64 MiB.
#
# Environment: SIZE_MIB (default 1024), RUNS (default 3), PORT (default 18481),
#              KIOSK_BUILD_PATH (SwiftPM scratch path, default .build), KIOSK_BIN (skip the build, use this binary).
set -euo pipefail

cd "$(dirname "$0")/.."
SIZE_MIB="${SIZE_MIB:-1024}"
RUNS="${RUNS:-3}"
PORT="${PORT:-18481}"
PRODUCT="com.example.kiosk.bench"
SERVER="http://127.0.0.1:${PORT}"

if [[ ! -x /usr/bin/time ]]; then
    echo "installing GNU time…" >&2
    (apt-get update -qq && apt-get install -y -qq time) >/dev/null
fi
for tool in curl python3; do
    command -v "$tool" >/dev/null || { echo "bench-client: $tool is required" >&2; exit 1; }
done

if [[ -z "${KIOSK_BIN:-}" ]]; then
    BUILD_PATH="${KIOSK_BUILD_PATH:-.build}"
    echo "building release…" >&2
    swift build -c release --product kiosk --scratch-path "$BUILD_PATH" >&2
    KIOSK_BIN="$(swift build -c release --scratch-path "$BUILD_PATH" --show-bin-path)/kiosk"
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kiosk-bench.XXXXXX")"
SERVER_PID=""
cleanup() {
    if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

echo "generating a ${SIZE_MIB} MiB product…" >&2
mkdir -p "$WORK/content/$PRODUCT/Contents"
head -c "$((SIZE_MIB << 20))" /dev/urandom > "$WORK/content/$PRODUCT/Contents/bench.bin"
cat > "$WORK/content/$PRODUCT/Info.json" <<JSON
{ "product_id": "$PRODUCT", "type": "non_consumable", "title": "Benchmark payload",
  "description": "A generated file for scripts/bench-client.sh.", "content_version": "1.0",
  "published_at": "2026-11-01T00:00:00Z" }
JSON

"$KIOSK_BIN" serve --port "$PORT" --content "$WORK/content" --data "$WORK/data" --reload-interval 0 \
    --log-level error > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 600); do
    if curl -fsS "$SERVER/v1/products?ids=$PRODUCT" 2>/dev/null | grep -q "\"$PRODUCT\""; then break; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then cat "$WORK/server.log" >&2; echo "bench-client: the server died" >&2; exit 1; fi
    sleep 0.2
done

"$KIOSK_BIN" buy "$PRODUCT" --server "$SERVER" > "$WORK/receipt.txt" 2>/dev/null
python3 - "$WORK/receipt.txt" "$PRODUCT" > "$WORK/grant-request.json" <<'PY'
import json, sys
print(json.dumps({"receipt-data": open(sys.argv[1]).read().strip(), "product_id": sys.argv[2]}))
PY
curl -fsS -X POST -H 'Content-Type: application/json' --data @"$WORK/grant-request.json" "$SERVER/v1/downloads" \
    > "$WORK/grant.json"
TOKEN="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$WORK/grant.json")"
FILE_URL="$SERVER$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["files"][0]["url"])' "$WORK/grant.json")"

curl_times=()
get_times=()
get_rss=()
for run in $(seq 1 "$RUNS"); do
    rm -f "$WORK/curl.bin"
    /usr/bin/time -f "%e %M" -o "$WORK/time.txt" \
        curl -fsS -o "$WORK/curl.bin" -H "Authorization: Bearer $TOKEN" "$FILE_URL"
    curl_times+=("$(cut -d' ' -f1 "$WORK/time.txt")")
    rm -f "$WORK/curl.bin"

    rm -rf "$WORK/cache"
    /usr/bin/time -f "%e %M" -o "$WORK/time.txt" \
        "$KIOSK_BIN" get "$PRODUCT" --receipt "$WORK/receipt.txt" --server "$SERVER" --cache "$WORK/cache" \
        > "$WORK/get.out" 2> "$WORK/get.err" || { cat "$WORK/get.err" >&2; exit 1; }
    get_times+=("$(cut -d' ' -f1 "$WORK/time.txt")")
    get_rss+=("$(cut -d' ' -f2 "$WORK/time.txt")")
    echo "run $run: curl ${curl_times[-1]} s, kiosk get ${get_times[-1]} s (peak RSS ${get_rss[-1]} KiB)" >&2
    rm -rf "$WORK/cache"
done

python3 - "$SIZE_MIB" "${curl_times[*]}" "${get_times[*]}" "${get_rss[*]}" <<'PY'
import statistics, sys
size_mib = float(sys.argv[1])
curl = [float(x) for x in sys.argv[2].split()]
get = [float(x) for x in sys.argv[3].split()]
rss = [int(x) for x in sys.argv[4].split()]
def mibps(seconds): return size_mib / seconds if seconds > 0 else float("inf")
cm, gm = statistics.median(curl), statistics.median(get)
cb, gb = min(curl), min(get)
print(f"payload:        {size_mib:.0f} MiB, {len(curl)} runs each")
print(f"curl -o:        median {mibps(cm):8.1f} MiB/s ({cm:.2f} s), best {mibps(cb):8.1f} MiB/s")
print(f"kiosk get:      median {mibps(gm):8.1f} MiB/s ({gm:.2f} s), best {mibps(gb):8.1f} MiB/s")
print(f"ratio (median): {cm / gm:.2f}x curl   (best: {cb / gb:.2f}x)   target >= 0.90")
print(f"kiosk get peak RSS: {max(rss) / 1024:.1f} MiB (max of runs)   target < 64 MiB")
PY
