#!/usr/bin/env bash
# Benchmarks the KioskKit client: `kiosk get` of a generated product (1 GiB by default) against curl fetching the
# same file with a grant token, from the same `kiosk serve` on loopback. Prints each tool's throughput (median and
# best of RUNS), the ratios, and `kiosk get`'s peak RSS. Targets (#9): `kiosk get` at least 1.0x of
# `curl | tee FILE | openssl dgst -sha256` (curl doing the same verification), peak RSS < 64 MiB.
#
# Then a link that caps each connection: the server restarted with `--faults throttle=8MiB/s` (every content
# response sent at most that fast), a second product of THROTTLED_SIZE_MIB, `kiosk get` (several chunk requests of
# the file at once) against `curl -o` (one connection). Target: at least 3x.
#
# Also measured, for context: `curl -o` alone, `curl | tee | openssl` followed by `sync` (its file on disk, as
# `kiosk get`, which fsyncs what it installs, leaves it), and OpenSSL's SHA-256 of the file alone (the hashing
# ceiling of this CPU), and the machine: CPU model, SHA extensions, `openssl speed -evp sha256`. Writes a Markdown section to
# BENCH_CLIENT_OUT (bench-out/client.md).
#
# Environment: SIZE_MIB (default 1024), RUNS (default 3), THROTTLED_SIZE_MIB (default 256), THROTTLED_RUNS
# (default 1), THROTTLE (default 8MiB/s), CONNECTIONS_PER_FILE (default 4), KIOSK_BIN (skip the build, use this
# binary).
set -euo pipefail

SIZE_MIB="${SIZE_MIB:-1024}"
RUNS="${RUNS:-3}"
THROTTLED_SIZE_MIB="${THROTTLED_SIZE_MIB:-256}"
THROTTLED_RUNS="${THROTTLED_RUNS:-1}"
THROTTLE="${THROTTLE:-8MiB/s}"
CONNECTIONS_PER_FILE="${CONNECTIONS_PER_FILE:-4}"
OUT_FILE="${BENCH_CLIENT_OUT:-bench-out/client.md}"
PRODUCT="com.example.kiosk.bench"
SLOW_PRODUCT="com.example.kiosk.bench.throttled"

LOG_TAG=bench-client
source "$(dirname "${BASH_SOURCE[0]}")/reliability/common.sh"
cd "$REPO_ROOT"
trap_cleanup

require_tools time curl jq openssl python3
build_kiosk
make_work_dir
# Before each timed command: the previous outputs deleted and every dirty page written back. Otherwise whichever tool
# runs next pays for the writeback of the gigabyte the previous one left in the page cache (without it, curl -o took
# 2.77 s right after the content was generated and 0.81 s in the next run).
settle() {
    rm -rf "$WORK_DIR/curl.bin" "$WORK_DIR/cache"
    sync
}

log "generating a ${SIZE_MIB} MiB product"
make_product "$PRODUCT" bench.bin "$SIZE_MIB" "Benchmark payload"
log "generating a ${THROTTLED_SIZE_MIB} MiB product for the throttled link"
make_product "$SLOW_PRODUCT" slow.bin "$THROTTLED_SIZE_MIB" "Throttled benchmark payload"
start_kiosk
SERVER="$KIOSK_BASE"
grant "$PRODUCT"
printf '%s' "$GRANT_RECEIPT" >"$WORK_DIR/receipt.txt"
TOKEN="$GRANT_TOKEN"
FILE_URL="$SERVER$GRANT_URL"
CHUNKS="$(jq '[.files[0].chunks // [] | length] | add' <<<"$GRANT_BODY")"
log "the grant cuts the file into $CHUNKS chunks ($(jq -c '.chunking' <<<"$GRANT_BODY"))"

curl_times=()
verify_times=()
durable_times=()
get_times=()
get_rss=()
hash_times=()
for run in $(seq 1 "$RUNS"); do
    settle
    /usr/bin/time -f "%e %M" -o "$WORK_DIR/time.txt" \
        curl -fsS -o "$WORK_DIR/curl.bin" -H "Authorization: Bearer $TOKEN" "$FILE_URL"
    curl_times+=("$(cut -d' ' -f1 "$WORK_DIR/time.txt")")
    settle

    # What curl costs when it, too, verifies: the bytes go to the file and through SHA-256 at the same time.
    /usr/bin/time -f "%e %M" -o "$WORK_DIR/time.txt" bash -c \
        'set -o pipefail; curl -fsS -H "Authorization: Bearer $1" "$2" | tee "$3" | openssl dgst -sha256 > /dev/null' \
        _ "$TOKEN" "$FILE_URL" "$WORK_DIR/curl.bin"
    verify_times+=("$(cut -d' ' -f1 "$WORK_DIR/time.txt")")
    # And until its file is on disk: `kiosk get` fsyncs what it installs before it exits, curl leaves the writeback
    # of its gigabyte to the kernel after it exits (for context; the target is against the line above).
    sync_start="$(now)"
    sync
    durable_times+=("$(awk -v v="${verify_times[-1]}" -v s="$(seconds_since "$sync_start")" 'BEGIN {printf "%.2f", v + s}')")
    settle

    # The hashing ceiling: SHA-256 of the (cached) source file alone, with OpenSSL's fastest code for this CPU.
    /usr/bin/time -f "%e %M" -o "$WORK_DIR/time.txt" openssl dgst -sha256 "$WORK_DIR/content/$PRODUCT/Contents/bench.bin" > /dev/null
    hash_times+=("$(cut -d' ' -f1 "$WORK_DIR/time.txt")")

    settle
    /usr/bin/time -f "%e %M" -o "$WORK_DIR/time.txt" \
        "$KIOSK_BIN" get "$PRODUCT" --receipt "$WORK_DIR/receipt.txt" --server "$SERVER" --cache "$WORK_DIR/cache" \
        --connections-per-file "$CONNECTIONS_PER_FILE" \
        > "$WORK_DIR/get.out" 2> "$WORK_DIR/get.err" || { cat "$WORK_DIR/get.err" >&2; exit 1; }
    get_times+=("$(cut -d' ' -f1 "$WORK_DIR/time.txt")")
    get_rss+=("$(cut -d' ' -f2 "$WORK_DIR/time.txt")")
    log "run $run: curl ${curl_times[-1]} s, curl|openssl ${verify_times[-1]} s (${durable_times[-1]} s with its sync)," \
        "openssl dgst ${hash_times[-1]} s," \
        "kiosk get ${get_times[-1]} s (peak RSS ${get_rss[-1]} KiB)"
    rm -rf "$WORK_DIR/cache"
done

# A link that caps each connection: every content response at most $THROTTLE.
log "restarting kiosk with --faults throttle=$THROTTLE"
stop_process "$KIOSK_PID" || true  # its last step fails when the process is already gone
start_kiosk --faults "throttle=$THROTTLE"
SERVER="$KIOSK_BASE"
grant "$SLOW_PRODUCT"
printf '%s' "$GRANT_RECEIPT" >"$WORK_DIR/slow-receipt.txt"
slow_curl_times=()
slow_get_times=()
slow_get_rss=()
for run in $(seq 1 "$THROTTLED_RUNS"); do
    settle
    /usr/bin/time -f "%e %M" -o "$WORK_DIR/time.txt" \
        curl -fsS -o "$WORK_DIR/curl.bin" -H "Authorization: Bearer $GRANT_TOKEN" "$SERVER$GRANT_URL"
    slow_curl_times+=("$(cut -d' ' -f1 "$WORK_DIR/time.txt")")
    settle
    /usr/bin/time -f "%e %M" -o "$WORK_DIR/time.txt" \
        "$KIOSK_BIN" get "$SLOW_PRODUCT" --receipt "$WORK_DIR/slow-receipt.txt" --server "$SERVER" \
        --cache "$WORK_DIR/cache" --connections-per-file "$CONNECTIONS_PER_FILE" \
        > "$WORK_DIR/get.out" 2> "$WORK_DIR/get.err" || { cat "$WORK_DIR/get.err" >&2; exit 1; }
    slow_get_times+=("$(cut -d' ' -f1 "$WORK_DIR/time.txt")")
    slow_get_rss+=("$(cut -d' ' -f2 "$WORK_DIR/time.txt")")
    log "throttled run $run: curl ${slow_curl_times[-1]} s, kiosk get ${slow_get_times[-1]} s (peak RSS ${slow_get_rss[-1]} KiB)"
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
SLOW_CURL="${slow_curl_times[*]}" SLOW_GET="${slow_get_times[*]}" SLOW_RSS="${slow_get_rss[*]}" \
    SLOW_SIZE_MIB="$THROTTLED_SIZE_MIB" THROTTLE="$THROTTLE" CONNECTIONS_PER_FILE="$CONNECTIONS_PER_FILE" \
    CHUNKS="$CHUNKS" DURABLE="${durable_times[*]}" \
python3 - "$SIZE_MIB" "${curl_times[*]}" "${verify_times[*]}" "${hash_times[*]}" "${get_times[*]}" "${get_rss[*]}" \
    "$OUT_FILE" "$(nproc)" "$CPU_MODEL" "$SHA_NI" "$SHA_SPEED" "$LOAD_NOW" <<'PY'
import datetime, os, statistics, sys
size_mib = float(sys.argv[1])
curl, verify, hashing, get = ([float(x) for x in arg.split()] for arg in sys.argv[2:6])
rss = [int(x) for x in sys.argv[6].split()]
out_file, cpus = sys.argv[7], sys.argv[8]
cpu_model, sha_ni, sha_speed, load = sys.argv[9:13]
slow_curl = [float(x) for x in os.environ["SLOW_CURL"].split()]
slow_get = [float(x) for x in os.environ["SLOW_GET"].split()]
rss += [int(x) for x in os.environ["SLOW_RSS"].split()]
slow_mib = float(os.environ["SLOW_SIZE_MIB"])
throttle, per_file, chunks = os.environ["THROTTLE"], os.environ["CONNECTIONS_PER_FILE"], os.environ["CHUNKS"]
durable = [float(x) for x in os.environ["DURABLE"].split()]
def mibps(seconds, size=size_mib): return size / seconds if seconds > 0 else float("inf")
rows = [("curl -o", curl), ("curl \\| tee file \\| openssl dgst -sha256", verify),
        ("curl \\| tee file \\| openssl dgst -sha256, then sync (the file on disk, as kiosk get leaves it)", durable),
        ("openssl dgst -sha256 of the file (hashing alone)", hashing), ("kiosk get", get)]
for name, times in rows:
    print(f"{name.replace(chr(92), ''):40s} median {mibps(statistics.median(times)):8.1f} MiB/s, best {mibps(min(times)):8.1f} MiB/s")
gm = statistics.median(get)
ratio_curl = statistics.median(curl) / gm
ratio_verify = statistics.median(verify) / gm
ratio_hash = statistics.median(hashing) / gm
slow_ratio = statistics.median(slow_curl) / statistics.median(slow_get)
peak = max(rss) / 1024
print(f"kiosk get / curl|tee|openssl dgst: {ratio_verify:.2f}x   target >= 1.0")
print(f"kiosk get / curl|tee|openssl dgst, then sync: {statistics.median(durable) / gm:.2f}x   (context: both files on disk)")
print(f"kiosk get / curl -o:               {ratio_curl:.2f}x")
print(f"kiosk get / hashing alone:         {ratio_hash:.2f}x")
print(f"throttled ({throttle} a response), {slow_mib:.0f} MiB: curl -o {mibps(statistics.median(slow_curl), slow_mib):.1f} MiB/s, "
      f"kiosk get {mibps(statistics.median(slow_get), slow_mib):.1f} MiB/s: {slow_ratio:.2f}x   target >= 3.0")
print(f"kiosk get peak RSS: {peak:.1f} MiB (max of all runs)   target < 64 MiB")
when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
def verdict(ok): return "PASS" if ok else "MISS"
with open(out_file, "w") as out:
    out.write("# Client: `kiosk get` against curl\n\n")
    out.write(f"Run {when} by `scripts/bench-client.sh`: a generated {size_mib:.0f} MiB product ({chunks} chunks) from one `kiosk serve` on "
              f"127.0.0.1, {len(get)} runs of each tool, `kiosk get --connections-per-file {per_file}`, {cpus} CPUs shared by server and client. CPU: {cpu_model}; "
              f"SHA extensions (`sha_ni`): {sha_ni}; `openssl speed -evp sha256` with 1 MiB blocks: {sha_speed} MiB/s; "
              f"load average at the end: {load}.\n\n")
    out.write("| tool | median MiB/s | best MiB/s | kiosk get / tool (median) |\n|---|---:|---:|---:|\n")
    for name, times in rows:
        ratio = statistics.median(times) / gm
        out.write(f"| {name} | {mibps(statistics.median(times)):.0f} | {mibps(min(times)):.0f} | {ratio:.2f}× |\n")
    out.write(f"| throttled link ({throttle} a response, {slow_mib:.0f} MiB): curl -o | {mibps(statistics.median(slow_curl), slow_mib):.1f} | {mibps(min(slow_curl), slow_mib):.1f} | {slow_ratio:.2f}× |\n")
    out.write(f"| throttled link: kiosk get | {mibps(statistics.median(slow_get), slow_mib):.1f} | {mibps(min(slow_get), slow_mib):.1f} | 1.00× |\n")
    out.write(f"\n- **kiosk get / curl | tee | openssl dgst: {ratio_verify:.2f}×** (target ≥ 1.0: {verdict(ratio_verify >= 1.0)}); "
              f"kiosk get / curl -o: {ratio_curl:.2f}×; kiosk get / SHA-256 alone: {ratio_hash:.2f}×.\n")
    out.write(f"- **Throttled link, kiosk get / curl -o: {slow_ratio:.2f}×** (target ≥ 3: {verdict(slow_ratio >= 3)}): "
              f"`kiosk serve --faults throttle={throttle}` sends every content response at most that fast, as a path "
              f"that caps each connection; curl uses one, kiosk get {per_file} chunk requests of the file at once.\n")
    out.write(f"- **kiosk get peak RSS: {peak:.1f} MiB** (GNU time's maximum resident set, max of all runs; "
              f"target < 64 MiB: {verdict(peak < 64)}).\n\n")
    out.write("Method: `curl -fsS -o FILE` with the grant token; `curl | tee FILE | openssl dgst -sha256` is curl doing what "
              "`kiosk get` does (write and verify); `openssl dgst -sha256 FILE` is the hashing speed of this CPU on its own (OpenSSL's fastest SHA-256 code); "
              "`kiosk get PRODUCT --receipt R --cache EMPTY_DIR` runs the whole KioskKit flow (grant, ranged "
              "requests aligned to chunks, write, SHA-256 of each chunk, journal, atomic install). Wall time from GNU time.\n")
print(f"wrote {out_file}", file=sys.stderr)
PY
