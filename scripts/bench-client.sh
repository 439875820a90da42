#!/usr/bin/env bash
# Benchmarks the KioskKit client: `kiosk get` of a generated product (1 GiB by default) against `curl -o` of the
# same file, with a grant token, from the same `kiosk serve` on loopback. Prints each tool's throughput (median
# and best of RUNS), the ratio, and `kiosk get`'s peak RSS. Targets: ratio >= 0.9, peak RSS < 64 MiB.
#
# Also measured, for context: curl piped through `openssl dgst -sha256` (curl doing the same verification) and
# OpenSSL's SHA-256 of the file alone (the hashing ceiling of this CPU). Writes a Markdown section to BENCH_CLIENT_OUT (bench-out/client.md).
#
# Environment: SIZE_MIB (default 1024), RUNS (default 3), PORT (default 18481),
#              KIOSK_BUILD_PATH (SwiftPM scratch path, default .build-release), KIOSK_BIN (skip the build, use this binary).
set -euo pipefail

cd "$(dirname "$0")/.."
SIZE_MIB="${SIZE_MIB:-1024}"
RUNS="${RUNS:-3}"
PORT="${PORT:-18481}"
OUT_FILE="${BENCH_CLIENT_OUT:-bench-out/client.md}"
PRODUCT="com.example.kiosk.bench"
SERVER="http://127.0.0.1:${PORT}"

if [[ ! -x /usr/bin/time ]]; then
    echo "installing GNU time…" >&2
    (apt-get update -qq && apt-get install -y -qq time) >/dev/null
fi
for tool in curl python3 openssl; do
    command -v "$tool" >/dev/null || { echo "bench-client: $tool is required" >&2; exit 1; }
done

if [[ -z "${KIOSK_BIN:-}" ]]; then
    BUILD_PATH="${KIOSK_BUILD_PATH:-.build-release}"
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
print(json.dumps({"receipt-data": open(sys.argv[1]).read().strip(), "product_id": sys.argv[2], "installation_id": "bench"}))
PY
curl -fsS -X POST -H 'Content-Type: application/json' --data @"$WORK/grant-request.json" "$SERVER/v1/downloads" \
    > "$WORK/grant.json"
TOKEN="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$WORK/grant.json")"
FILE_URL="$SERVER$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["files"][0]["url"])' "$WORK/grant.json")"

curl_times=()
verify_times=()
get_times=()
get_rss=()
hash_times=()
for run in $(seq 1 "$RUNS"); do
    rm -f "$WORK/curl.bin"
    /usr/bin/time -f "%e %M" -o "$WORK/time.txt" \
        curl -fsS -o "$WORK/curl.bin" -H "Authorization: Bearer $TOKEN" "$FILE_URL"
    curl_times+=("$(cut -d' ' -f1 "$WORK/time.txt")")
    rm -f "$WORK/curl.bin"

    # What curl costs when it, too, verifies: the bytes go to the file and through SHA-256 at the same time.
    /usr/bin/time -f "%e %M" -o "$WORK/time.txt" bash -c \
        'set -o pipefail; curl -fsS -H "Authorization: Bearer $1" "$2" | tee "$3" | openssl dgst -sha256 > /dev/null' \
        _ "$TOKEN" "$FILE_URL" "$WORK/curl.bin"
    verify_times+=("$(cut -d' ' -f1 "$WORK/time.txt")")
    rm -f "$WORK/curl.bin"

    # The hashing ceiling: SHA-256 of the (cached) source file alone, with OpenSSL's fastest code for this CPU.
    /usr/bin/time -f "%e %M" -o "$WORK/time.txt" openssl dgst -sha256 "$WORK/content/$PRODUCT/Contents/bench.bin" > /dev/null
    hash_times+=("$(cut -d' ' -f1 "$WORK/time.txt")")

    rm -rf "$WORK/cache"
    /usr/bin/time -f "%e %M" -o "$WORK/time.txt" \
        "$KIOSK_BIN" get "$PRODUCT" --receipt "$WORK/receipt.txt" --server "$SERVER" --cache "$WORK/cache" \
        > "$WORK/get.out" 2> "$WORK/get.err" || { cat "$WORK/get.err" >&2; exit 1; }
    get_times+=("$(cut -d' ' -f1 "$WORK/time.txt")")
    get_rss+=("$(cut -d' ' -f2 "$WORK/time.txt")")
    echo "run $run: curl ${curl_times[-1]} s, curl|openssl ${verify_times[-1]} s, openssl dgst ${hash_times[-1]} s," \
        "kiosk get ${get_times[-1]} s (peak RSS ${get_rss[-1]} KiB)" >&2
    rm -rf "$WORK/cache"
done

mkdir -p "$(dirname "$OUT_FILE")"
python3 - "$SIZE_MIB" "${curl_times[*]}" "${verify_times[*]}" "${hash_times[*]}" "${get_times[*]}" "${get_rss[*]}" \
    "$OUT_FILE" "$(nproc)" <<'PY'
import datetime, statistics, sys
size_mib = float(sys.argv[1])
curl, verify, hashing, get = ([float(x) for x in arg.split()] for arg in sys.argv[2:6])
rss = [int(x) for x in sys.argv[6].split()]
out_file, cpus = sys.argv[7], sys.argv[8]
def mibps(seconds): return size_mib / seconds if seconds > 0 else float("inf")
rows = [("curl -o", curl), ("curl \\| tee file \\| openssl dgst -sha256", verify), ("openssl dgst -sha256 of the file (hashing alone)", hashing),
        ("kiosk get", get)]
for name, times in rows:
    print(f"{name.replace(chr(92), ''):40s} median {mibps(statistics.median(times)):8.1f} MiB/s, best {mibps(min(times)):8.1f} MiB/s")
gm = statistics.median(get)
ratio_curl = statistics.median(curl) / gm
ratio_verify = statistics.median(verify) / gm
ratio_hash = statistics.median(hashing) / gm
peak = max(rss) / 1024
print(f"kiosk get / curl -o:            {ratio_curl:.2f}x   target >= 0.90")
print(f"kiosk get / curl|openssl dgst:   {ratio_verify:.2f}x")
print(f"kiosk get / hashing alone:      {ratio_hash:.2f}x")
print(f"kiosk get peak RSS: {peak:.1f} MiB (max of runs)   target < 64 MiB")
when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
with open(out_file, "w") as out:
    out.write("# Client: `kiosk get` against curl\n\n")
    out.write(f"Run {when} by `scripts/bench-client.sh`: a generated {size_mib:.0f} MiB product from one `kiosk serve` on "
              f"127.0.0.1, {len(get)} runs of each tool, {cpus} CPUs shared by server and client.\n\n")
    out.write("| tool | median MiB/s | best MiB/s | kiosk get / tool (median) |\n|---|---:|---:|---:|\n")
    for name, times in rows:
        ratio = statistics.median(times) / gm
        out.write(f"| {name} | {mibps(statistics.median(times)):.0f} | {mibps(min(times)):.0f} | {ratio:.2f}× |\n")
    out.write(f"\n- **kiosk get / curl -o: {ratio_curl:.2f}×** (target ≥ 0.9: {'PASS' if ratio_curl >= 0.9 else 'MISS'}).\n")
    out.write(f"- kiosk get / curl that also hashes: {ratio_verify:.2f}×; kiosk get / SHA-256 alone: {ratio_hash:.2f}×.\n")
    out.write(f"- **kiosk get peak RSS: {peak:.1f} MiB** (GNU time's maximum resident set, max of runs; "
              f"target < 64 MiB: {'PASS' if peak < 64 else 'MISS'}).\n\n")
    out.write("Method: `curl -fsS -o FILE` with the grant token; `curl | tee FILE | openssl dgst -sha256` is curl doing what "
              "`kiosk get` does (write and verify); `openssl dgst -sha256 FILE` is the hashing speed of this CPU on its own (OpenSSL's fastest SHA-256 code); "
              "`kiosk get PRODUCT --receipt R --cache EMPTY_DIR` runs the whole KioskKit flow (grant, ranged "
              "requests, write, SHA-256, atomic install). Wall time from GNU time.\n")
print(f"wrote {out_file}", file=sys.stderr)
PY
