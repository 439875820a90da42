#!/usr/bin/env bash
# Benchmarks the server with many-file products: a product of 20,000 files of 1 KiB and one of 2,000 files of
# 8 KiB (in 20 folders each), beside the sample catalog, in one run, with nginx serving the same grant bytes for
# reference.
#
#   scripts/bench-grants.sh            # from the repository root
#
# It prints, all traffic on 127.0.0.1:
#   - the catalog load at startup, from Kiosk's "catalog loaded" log line: with an empty data folder (every file
#     hashed) and again with the hash cache; an unchanged reload (SIGHUP);
#   - `kiosk content check` of the content folder (no hash cache: it hashes every file);
#   - per product, the grant's size as JSON and gzipped (checked with `gzip -t`, and `curl --compressed` gives the
#     same files as the plain answer), the first grant after startup (which encodes the file list), and the median
#     and p99 latency of BENCH_REQUESTS sequential grants on one kept-alive curl connection, plain and gzipped;
#   - the same latency for a grant of the sample's 10-file product (the fixed cost of a grant: receipt check,
#     ledger, token) and for nginx serving the 20,000-file grant's bytes as a static file (gzip_static), with the
#     ratios Kiosk/nginx;
#   - Kiosk's peak RSS, and the machine (nproc, CPU model, load average).
# The same is written as Markdown to BENCH_OUT.
#
# With BENCH_BASELINE_BIN (an older `kiosk` binary), it also measures that build's grants (plain JSON) in the same
# run, for a before/after comparison.
#
# Environment knobs: BENCH_REQUESTS (100), BENCH_OUT (bench-out/grants.md), BENCH_LABEL, BENCH_BASELINE_BIN,
# KIOSK_BIN (use this binary, skip the release build).
set -euo pipefail

REQUESTS="${BENCH_REQUESTS:-100}"
OUT_FILE="${BENCH_OUT:-bench-out/grants.md}"
BASELINE_BIN="${BENCH_BASELINE_BIN:-}"
LABEL="${BENCH_LABEL:-}"
LOAD_TARGET_S=2
GRANT_MS_TARGET=50
GZIP_BYTES_TARGET=1000000

LOG_TAG=bench-grants
source "$(dirname "${BASH_SOURCE[0]}")/reliability/common.sh"
cd "$REPO_ROOT"
trap_cleanup

require_tools nginx curl jq gzip python3
command -v swift >/dev/null || [[ -n "${KIOSK_BIN:-}" ]] || die "swift is not on PATH (install a Swift 6.2+ toolchain)"
build_kiosk
make_work_dir
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"

TILES=com.example.bench.tiles20k
LEVELS=com.example.bench.levels2k
SAMPLE=com.example.kiosk.levels.pack1

# generate_product id count bytes — `count` files of `bytes` random bytes in 20 folders, version "1".
generate_product() {
    python3 - "$CONTENT_DIR/$1" "$1" "$2" "$3" <<'PY'
import json, os, sys
root, pid, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for folder in range(20):
    os.makedirs(os.path.join(root, "Contents", f"level{folder:02d}"))
with open(os.path.join(root, "Info.json"), "w") as f:
    json.dump({"product_id": pid, "type": "non_consumable", "title": f"{count} files",
               "content_version": "1"}, f)
for n in range(count):
    with open(os.path.join(root, "Contents", f"level{n % 20:02d}", f"tile{n:05d}.bin"), "wb") as f:
        f.write(os.urandom(size))
PY
}

declare -A R   # R[product,metric]

# latencies name url method [curl options…] — REQUESTS sequential requests on one connection (a curl config
# file lists them); sets R[name,p50] and R[name,p99] in milliseconds; fails unless every answer is 200.
latencies() {
    local name=$1 url=$2 method=$3
    shift 3
    local config="$WORK_DIR/curl-$name.conf" out="$WORK_DIR/times-$name"
    : >"$config"
    for _ in $(seq 1 "$REQUESTS"); do printf 'url = "%s"\noutput = "/dev/null"\n' "$url" >>"$config"; done
    curl -sS -X "$method" "$@" -K "$config" -w '%{http_code} %{time_total}\n' >"$out"
    awk '$1 != 200 {bad++} END {exit bad > 0}' "$out" || die "$name: not every answer was 200"
    read -r "R[$name,p50]" "R[$name,p99]" < <(awk '{print $2 * 1000}' "$out" | sort -n |
        awk '{v[NR] = $1} END {i50 = int(NR * 0.5 + 0.5); i99 = int(NR * 0.99 + 0.5); if (i99 < 1) i99 = 1
            printf "%.1f %.1f\n", v[i50], v[i99]}')
    log "  $name: median ${R[$name,p50]} ms, p99 ${R[$name,p99]} ms ($REQUESTS requests)"
}

# buy product — prints the JSON body of a grant request for it (bought in the sandbox store).
buy() {
    local receipt
    receipt="$(post_json "$KIOSK_BASE/sandbox/purchases" "$(jq -nc --arg p "$1" '{product_id: $p, quantity: 1}')" |
        jq -er '."receipt-data"')" || die "purchase of $1 failed"
    jq -nc --arg r "$receipt" --arg p "$1" --arg i "$LOG_TAG" '{"receipt-data": $r, product_id: $p, installation_id: $i}'
}

log "generating $TILES (20,000 × 1 KiB) and $LEVELS (2,000 × 8 KiB) in $CONTENT_DIR"
generate_product "$TILES" 20000 1024
generate_product "$LEVELS" 2000 8192
FILES="$(find "$CONTENT_DIR" -type f | wc -l)"

started="$(now)"
start_kiosk --log-level info
R[load,cold]="$(last_reload_seconds)"
log "startup, empty data folder: catalog loaded in ${R[load,cold]} s (process ready after $(seconds_since "$started") s)"
stop_process "$KIOSK_PID" || true  # its status is the stopped process's
start_kiosk --log-level info
R[load,warm]="$(last_reload_seconds)"
R[reload,unchanged]="$(sighup_reload)"
log "startup with the hash cache: catalog loaded in ${R[load,warm]} s; unchanged reload ${R[reload,unchanged]} s"

# Grants: sizes, decoders, the first grant (encodes the list), then latency.
mkdir -p "$WORK_DIR/nginx/grants"
for product in "$TILES" "$LEVELS" "$SAMPLE"; do
    request="$WORK_DIR/request-$product.json"
    buy "$product" >"$request"
    first="$(curl -sS --fail-with-body -o "$WORK_DIR/grant-$product.json" -w '%{time_total}' \
        -H 'Content-Type: application/json' -H 'Accept-Encoding: gzip' --data-binary "@$request" "$KIOSK_BASE/v1/downloads" |
        awk '{printf "%.1f", $1 * 1000}')"
    R[$product,first]="$first"
    mv "$WORK_DIR/grant-$product.json" "$WORK_DIR/grant-$product.json.gz"
    gzip -t "$WORK_DIR/grant-$product.json.gz" || die "gzip -t refused the gzipped grant of $product"
    curl -sS --fail-with-body -o "$WORK_DIR/grant-$product.json" -H 'Content-Type: application/json' \
        --data-binary "@$request" "$KIOSK_BASE/v1/downloads"
    curl -sS --fail-with-body --compressed -o "$WORK_DIR/grant-$product.curl.json" -H 'Content-Type: application/json' \
        --data-binary "@$request" "$KIOSK_BASE/v1/downloads"
    gzip -dc "$WORK_DIR/grant-$product.json.gz" >"$WORK_DIR/grant-$product.gunzip.json"
    for decoded in "$WORK_DIR/grant-$product.gunzip.json" "$WORK_DIR/grant-$product.curl.json"; do
        cmp -s <(jq -c .files "$WORK_DIR/grant-$product.json") <(jq -c .files "$decoded") ||
            die "a gzipped grant of $product does not decode to the plain grant's files"
    done
    R[$product,files]="$(jq '.files | length' "$WORK_DIR/grant-$product.json")"
    R[$product,plain]="$(stat -c %s "$WORK_DIR/grant-$product.json")"
    R[$product,gzip]="$(stat -c %s "$WORK_DIR/grant-$product.json.gz")"
    log "$product: ${R[$product,files]} files; grant ${R[$product,plain]} bytes, ${R[$product,gzip]} gzipped; first grant ${first} ms"
    latencies "$product,kiosk_plain" "$KIOSK_BASE/v1/downloads" POST -H 'Content-Type: application/json' \
        --data-binary "@$request"
    latencies "$product,kiosk_gzip" "$KIOSK_BASE/v1/downloads" POST -H 'Content-Type: application/json' \
        -H 'Accept-Encoding: gzip' --data-binary "@$request"
done
R[kiosk,rss]="$(kib_to_mib "$(status_kib "$KIOSK_PID" VmHWM)")"
stop_process "$KIOSK_PID" || true  # its status is the stopped process's

# The previous behaviour, when BENCH_BASELINE_BIN names an older build: the same grants, plain JSON (it had no gzip).
if [[ -n "$BASELINE_BIN" ]]; then
    log "baseline: $BASELINE_BIN"
    CURRENT_BIN="$KIOSK_BIN"
    KIOSK_BIN="$BASELINE_BIN"
    DATA_DIR="$WORK_DIR/data-baseline"
    mkdir -p "$DATA_DIR"
    start_kiosk --log-level info
    KIOSK_BIN="$CURRENT_BIN"
    for product in "$TILES" "$LEVELS" "$SAMPLE"; do
        request="$WORK_DIR/request-baseline-$product.json"
        buy "$product" >"$request"
        R[$product,baseline_first]="$(curl -sS --fail-with-body -o /dev/null -w '%{time_total}' \
            -H 'Content-Type: application/json' --data-binary "@$request" "$KIOSK_BASE/v1/downloads" |
            awk '{printf "%.1f", $1 * 1000}')"
        latencies "$product,baseline_plain" "$KIOSK_BASE/v1/downloads" POST -H 'Content-Type: application/json' \
            --data-binary "@$request"
    done
    stop_process "$KIOSK_PID" || true  # its status is the stopped process's
fi

# nginx serves the 20,000-file grant's bytes (and their gzip form) as a static file: the cost of sending them.
cp "$WORK_DIR/grant-$TILES.json" "$WORK_DIR/nginx/grants/tiles"
cp "$WORK_DIR/grant-$TILES.json.gz" "$WORK_DIR/nginx/grants/tiles.gz"
start_nginx "$WORK_DIR/nginx" "gzip_static on;"
latencies "$TILES,nginx_plain" "$NGINX_BASE/grants/tiles" GET
latencies "$TILES,nginx_gzip" "$NGINX_BASE/grants/tiles" GET -H 'Accept-Encoding: gzip'
stop_process "$NGINX_PID" QUIT || true  # its status is the stopped process's

started="$(now)"
"$KIOSK_BIN" content check "$CONTENT_DIR" >/dev/null 2>"$WORK_DIR/check.err" || {
    cat "$WORK_DIR/check.err" >&2
    die "kiosk content check failed"
}
R[check,seconds]="$(seconds_since "$started")"
log "kiosk content check of $FILES files: ${R[check,seconds]} s"
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------------------------------------------ report
T="$TILES"
measures=(
    "Catalog load at startup, empty data folder (hashes every file), s|${R[load,cold]}|< ${LOAD_TARGET_S} s|$(below "${R[load,cold]}" "$LOAD_TARGET_S")"
    "Catalog load at startup with the hash cache, s|${R[load,warm]}|< ${LOAD_TARGET_S} s|$(below "${R[load,warm]}" "$LOAD_TARGET_S")"
    "Unchanged reload (SIGHUP), s|${R[reload,unchanged]}|< ${LOAD_TARGET_S} s|$(below "${R[reload,unchanged]}" "$LOAD_TARGET_S")"
    "kiosk content check ($FILES files, hashes every file), s|${R[check,seconds]}|< ${LOAD_TARGET_S} s|$(below "${R[check,seconds]}" "$LOAD_TARGET_S")"
    "Kiosk peak RSS (VmHWM), MiB|${R[kiosk,rss]}|(info)|-"
)
grant_rows=()
for product in "$TILES" "$LEVELS" "$SAMPLE"; do
    gzip_verdict="-"; gzip_target="(info)"; ms_target="(info)"; ms_verdict="-"
    if [[ "$product" == "$TILES" ]]; then
        gzip_target="≤ 1 MB"; gzip_verdict="$(awk -v v="${R[$product,gzip]}" -v t="$GZIP_BYTES_TARGET" 'BEGIN {print (v <= t) ? "PASS" : "MISS"}')"
        ms_target="p99 < ${GRANT_MS_TARGET} ms"; ms_verdict="$(below "${R[$product,kiosk_gzip,p99]}" "$GRANT_MS_TARGET")"
    fi
    grant_rows+=(
        "$product (${R[$product,files]} files): grant size JSON / gzip, bytes|${R[$product,plain]} / ${R[$product,gzip]}|$gzip_target|$gzip_verdict"
        "$product: first grant after startup (encodes the list), gzip, ms|${R[$product,first]}|(info)|-"
        "$product: grant latency JSON, median / p99, ms|${R[$product,kiosk_plain,p50]} / ${R[$product,kiosk_plain,p99]}|(info)|-"
        "$product: grant latency gzip, median / p99, ms|${R[$product,kiosk_gzip,p50]} / ${R[$product,kiosk_gzip,p99]}|$ms_target|$ms_verdict"
    )
    [[ -n "$BASELINE_BIN" ]] && grant_rows+=(
        "$product: baseline build, first grant after startup, JSON, ms|${R[$product,baseline_first]}|(info)|-"
        "$product: baseline build, grant latency JSON, median / p99, ms|${R[$product,baseline_plain,p50]} / ${R[$product,baseline_plain,p99]}|(info)|-"
        "$product: speed-up over the baseline (its median / this build's), JSON / gzip|$(ratio "${R[$product,baseline_plain,p50]}" "${R[$product,kiosk_plain,p50]}")× / $(ratio "${R[$product,baseline_plain,p50]}" "${R[$product,kiosk_gzip,p50]}")×|(info)|-"
    )
done
grant_rows+=(
    "nginx, the $T grant's bytes as a static file, JSON, median / p99, ms|${R[$T,nginx_plain,p50]} / ${R[$T,nginx_plain,p99]}|(reference)|-"
    "nginx, the same, gzip_static, median / p99, ms|${R[$T,nginx_gzip,p50]} / ${R[$T,nginx_gzip,p99]}|(reference)|-"
    "Kiosk/nginx median latency, $T, JSON / gzip|$(ratio "${R[$T,kiosk_plain,p50]}" "${R[$T,nginx_plain,p50]}")× / $(ratio "${R[$T,kiosk_gzip,p50]}" "${R[$T,nginx_gzip,p50]}")×|(info)|-"
    "Kiosk $T over the 10-file sample grant, median, JSON / gzip|$(ratio "${R[$T,kiosk_plain,p50]}" "${R[$SAMPLE,kiosk_plain,p50]}")× / $(ratio "${R[$T,kiosk_gzip,p50]}" "${R[$SAMPLE,kiosk_gzip,p50]}")×|(info)|-"
)
cpu_model="$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
machine="$(nproc) CPUs (${cpu_model:-unknown}), load average $LOAD_BEFORE before, $LOAD_AFTER after"
{
    printf '\nMany-file products: the server — %s%s\n%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "${LABEL:+, $LABEL}" "$machine"
    printf '%s sequential requests per latency row, one kept-alive curl connection\n\n' "$REQUESTS"
    for row in "${measures[@]}" "${grant_rows[@]}"; do
        IFS='|' read -r t v tg verdict <<<"$row"
        printf '%-78s %18s %16s %6s\n' "$t" "$v" "$tg" "$verdict"
    done
    echo
} >&2
mkdir -p "$(dirname "$OUT_FILE")"
{
    echo "## Many files: the server"
    echo
    echo "Run $(date -u '+%Y-%m-%d %H:%M UTC')${LABEL:+ — $LABEL}, by \`scripts/bench-grants.sh\`: $machine."
    echo "Products of 20,000 × 1 KiB and 2,000 × 8 KiB files beside the sample catalog ($FILES files in all);"
    echo "$REQUESTS sequential grant requests per latency row on one kept-alive curl connection."
    echo
    echo "| measure | value | target | result |"
    echo "|---|---:|---|---|"
    for row in "${measures[@]}" "${grant_rows[@]}"; do
        IFS='|' read -r t v tg verdict <<<"$row"
        echo "| $t | $v | $tg | $verdict |"
    done
} >"$OUT_FILE"
log "wrote $OUT_FILE"
