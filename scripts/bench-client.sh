#!/usr/bin/env bash
# Benchmarks the KioskKit client: `kiosk get` of a generated product (1 GiB by default) against `curl -o` of the
# same file, with a grant token, from the same `kiosk serve` on loopback. Prints each tool's throughput (median
# and best of RUNS), the ratio, and `kiosk get`'s peak RSS. Targets: ratio >= 0.9, peak RSS < 64 MiB.
#
# Also measured, for context: curl piped through `openssl dgst -sha256` (curl doing the same verification) and
# OpenSSL's SHA-256 of the file alone (the hashing ceiling of this CPU). Writes a Markdown section to BENCH_CLIENT_OUT (bench-out/client.md).
#
# Environment: SIZE_MIB (default 1024), RUNS (default 3), KIOSK_BIN (skip the build, use this binary).
set -euo pipefail

SIZE_MIB="${SIZE_MIB:-1024}"
RUNS="${RUNS:-3}"
OUT_FILE="${BENCH_CLIENT_OUT:-bench-out/client.md}"
PRODUCT="com.example.kiosk.bench"

LOG_TAG=bench-client
source "$(dirname "${BASH_SOURCE[0]}")/reliability/common.sh"
cd "$REPO_ROOT"
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

require_tools time curl jq openssl python3
build_kiosk
make_work_dir
log "generating a ${SIZE_MIB} MiB product"
make_product "$PRODUCT" bench.bin "$SIZE_MIB" "Benchmark payload"
start_kiosk
SERVER="$KIOSK_BASE"
grant "$PRODUCT"
printf '%s' "$GRANT_RECEIPT" >"$WORK_DIR/receipt.txt"
TOKEN="$GRANT_TOKEN"
FILE_URL="$SERVER$GRANT_URL"

curl_times=()
verify_times=()
get_times=()
get_rss=()
hash_times=()
for run in $(seq 1 "$RUNS"); do
    rm -f "$WORK_DIR/curl.bin"
    /usr/bin/time -f "%e %M" -o "$WORK_DIR/time.txt" \
        curl -fsS -o "$WORK_DIR/curl.bin" -H "Authorization: Bearer $TOKEN" "$FILE_URL"
    curl_times+=("$(cut -d' ' -f1 "$WORK_DIR/time.txt")")
    rm -f "$WORK_DIR/curl.bin"

    # What curl costs when it, too, verifies: the bytes go to the file and through SHA-256 at the same time.
    /usr/bin/time -f "%e %M" -o "$WORK_DIR/time.txt" bash -c \
        'set -o pipefail; curl -fsS -H "Authorization: Bearer $1" "$2" | tee "$3" | openssl dgst -sha256 > /dev/null' \
        _ "$TOKEN" "$FILE_URL" "$WORK_DIR/curl.bin"
    verify_times+=("$(cut -d' ' -f1 "$WORK_DIR/time.txt")")
    rm -f "$WORK_DIR/curl.bin"

    # The hashing ceiling: SHA-256 of the (cached) source file alone, with OpenSSL's fastest code for this CPU.
    /usr/bin/time -f "%e %M" -o "$WORK_DIR/time.txt" openssl dgst -sha256 "$WORK_DIR/content/$PRODUCT/Contents/bench.bin" > /dev/null
    hash_times+=("$(cut -d' ' -f1 "$WORK_DIR/time.txt")")

    rm -rf "$WORK_DIR/cache"
    /usr/bin/time -f "%e %M" -o "$WORK_DIR/time.txt" \
        "$KIOSK_BIN" get "$PRODUCT" --receipt "$WORK_DIR/receipt.txt" --server "$SERVER" --cache "$WORK_DIR/cache" \
        > "$WORK_DIR/get.out" 2> "$WORK_DIR/get.err" || { cat "$WORK_DIR/get.err" >&2; exit 1; }
    get_times+=("$(cut -d' ' -f1 "$WORK_DIR/time.txt")")
    get_rss+=("$(cut -d' ' -f2 "$WORK_DIR/time.txt")")
    log "run $run: curl ${curl_times[-1]} s, curl|openssl ${verify_times[-1]} s, openssl dgst ${hash_times[-1]} s," \
        "kiosk get ${get_times[-1]} s (peak RSS ${get_rss[-1]} KiB)"
    rm -rf "$WORK_DIR/cache"
done

# What a claim about hashing depends on: the CPU, whether it has SHA extensions, and SHA-256's speed on it.
CPU_MODEL="$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
SHA_NI="$(grep -qw sha_ni /proc/cpuinfo && echo yes || echo no)"
SHA_SPEED="$(openssl speed -evp sha256 -bytes 1048576 -seconds 2 2>/dev/null |
    awk '$1 == "sha256" {sub(/k$/, "", $2); printf "%.0f", $2 * 1000 / 1048576}')"
LOAD_NOW="$(cut -d' ' -f1-3 /proc/loadavg)"
log "CPU: $CPU_MODEL; SHA extensions: $SHA_NI; openssl speed -evp sha256 (1 MiB blocks): $SHA_SPEED MiB/s; load $LOAD_NOW"

mkdir -p "$(dirname "$OUT_FILE")"
python3 - "$SIZE_MIB" "${curl_times[*]}" "${verify_times[*]}" "${hash_times[*]}" "${get_times[*]}" "${get_rss[*]}" \
    "$OUT_FILE" "$(nproc)" "$CPU_MODEL" "$SHA_NI" "$SHA_SPEED" "$LOAD_NOW" <<'PY'
import datetime, statistics, sys
size_mib = float(sys.argv[1])
curl, verify, hashing, get = ([float(x) for x in arg.split()] for arg in sys.argv[2:6])
rss = [int(x) for x in sys.argv[6].split()]
out_file, cpus = sys.argv[7], sys.argv[8]
cpu_model, sha_ni, sha_speed, load = sys.argv[9:13]
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
              f"127.0.0.1, {len(get)} runs of each tool, {cpus} CPUs shared by server and client. CPU: {cpu_model}; "
              f"SHA extensions (`sha_ni`): {sha_ni}; `openssl speed -evp sha256` with 1 MiB blocks: {sha_speed} MiB/s; "
              f"load average at the end: {load}.\n\n")
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
