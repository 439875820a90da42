#!/usr/bin/env bash
# Benchmarks the catalog at scale: the same requests against a catalog of 4 products (the sample) and one of
# 10,000 products with 100,000 files, in one run, with nginx serving the same catalog bytes for reference.
#
#   scripts/bench-catalog.sh            # from the repository root
#
# For each catalog (all traffic on 127.0.0.1):
#   - startup time of `kiosk serve` with an empty data folder (every file hashed) and again with its hash cache;
#   - an unchanged reload (SIGHUP) and a reload after one Info.json changed, from Kiosk's "catalog loaded" log line;
#   - the CPU that reloads every 10 s cost while idle (`--reload-interval 10`, BENCH_IDLE seconds);
#   - wrk -t2 -c16: gzipped GET /v1/products, the same with If-None-Match (304), GET ?ids= with 500 IDs
#     (gzipped), GET /healthz; and nginx (gzip_static, etag) serving the same catalog bytes, gzipped and 304;
#   - `kiosk content check` of the folder (no hash cache: it hashes every file);
#   - Kiosk's peak RSS (VmHWM).
# Then it prints, per request kind, the ratio 10,000 vs 4 products (target ≥ 0.8×), the reload and RSS targets,
# and the machine (nproc, CPU model, load average), and writes the same as Markdown to BENCH_OUT.
#
# Environment knobs: BENCH_DURATION (wrk seconds, default 5), BENCH_CONNECTIONS (16), BENCH_THREADS (2),
# BENCH_PRODUCTS (10000), BENCH_FILES_PER_PRODUCT (10), BENCH_IDLE (30), BENCH_OUT (bench-out/catalog.md),
# BENCH_LABEL, KIOSK_BIN (use this binary, skip the release build).
set -euo pipefail

DURATION="${BENCH_DURATION:-5}"
CONNECTIONS="${BENCH_CONNECTIONS:-16}"
THREADS="${BENCH_THREADS:-2}"
PRODUCTS="${BENCH_PRODUCTS:-10000}"
FILES_PER_PRODUCT="${BENCH_FILES_PER_PRODUCT:-10}"
IDLE="${BENCH_IDLE:-30}"
OUT_FILE="${BENCH_OUT:-bench-out/catalog.md}"
LABEL="${BENCH_LABEL:-}"
RATIO_TARGET="0.8"
RELOAD_TARGET_S=2
RELOAD_CPU_TARGET=10
RSS_TARGET_MIB=256
CHECK_TARGET_S=5

LOG_TAG=bench-catalog
source "$(dirname "${BASH_SOURCE[0]}")/reliability/common.sh"
WRK_LUA="$REPO_ROOT/scripts/bench/wrk-stats.lua"
cd "$REPO_ROOT"
trap_cleanup

require_tools nginx wrk curl jq ss python3
command -v swift >/dev/null || [[ -n "${KIOSK_BIN:-}" ]] || die "swift is not on PATH (install a Swift 6.2+ toolchain)"
build_kiosk
make_work_dir
CLK_TCK="$(getconf CLK_TCK)"
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"

cpu_ms() { awk -v t="$CLK_TCK" '{printf "%d", ($14 + $15) * 1000 / t}' "/proc/$1/stat"; }

# generate_catalog dir count files — `count` dated products (an issue every 6 hours, the newest first in the catalog)
# with `files` small files each; every hundredth product is undated.
generate_catalog() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, os, sys, datetime
root, count, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
start = datetime.datetime(2006, 1, 1, tzinfo=datetime.timezone.utc)
for n in range(count):
    pid = f"com.example.archive.issue{n:05d}"
    contents = os.path.join(root, pid, "Contents")
    os.makedirs(contents)
    info = {"product_id": pid, "type": "non_consumable", "title": f"Archive issue {n}",
            "description": "An issue from the archive.", "content_version": "1"}
    if n % 100:
        info["published_at"] = (start + datetime.timedelta(hours=6 * n)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with open(os.path.join(root, pid, "Info.json"), "w") as f:
        json.dump(info, f)
    for k in range(files):
        with open(os.path.join(contents, f"page{k:02d}.txt"), "w") as f:
            f.write(f"{pid} page {k}\n" * 4)
PY
}

declare -A R   # R[size,metric]

# run_wrk size name url [header…] — requests/s into R[size,name]; fails on errors or unexpected statuses.
run_wrk() {
    local size=$1 name=$2 url=$3
    shift 3
    local args=() header out="$WORK_DIR/wrk.$size.$name"
    for header in "$@"; do args+=(-H "$header"); done
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --timeout 10s "${args[@]}" -s "$WRK_LUA" "$url" >"$out" 2>&1 ||
        { cat "$out" >&2; die "wrk failed ($size $name)"; }
    local result; result="$(grep '^BENCH_RESULT' "$out")" || { cat "$out" >&2; die "no wrk summary"; }
    local -A f=()
    local kv
    for kv in ${result#BENCH_RESULT }; do f[${kv%%=*}]="${kv#*=}"; done
    local errors=$((f[err_connect] + f[err_read] + f[err_write] + f[err_status] + f[err_timeout]))
    ((errors == 0)) || { cat "$out" >&2; die "wrk counted $errors errors ($size $name)"; }
    R[$size,$name]="$(awk -v r="${f[requests]}" -v d="${f[duration_us]}" 'BEGIN {printf "%.0f", r / (d / 1e6)}')"
    log "  $name: ${R[$size,$name]} req/s"
}

# expect_status url status [header…]
expect_status() {
    local url=$1 status=$2 args=() header
    shift 2
    for header in "$@"; do args+=(-H "$header"); done
    local got; got="$(curl -gs -o /dev/null -w '%{http_code}' "${args[@]}" "$url")"
    [[ "$got" == "$status" ]] || die "$url answered $got, expected $status"
}

measure() { # size content-folder
    local size=$1 folder=$2
    log "=== catalog of $size products ($(find "$folder" -type f | wc -l) files)"
    CONTENT_DIR="$folder"
    DATA_DIR="$WORK_DIR/data-$size"
    mkdir -p "$DATA_DIR"

    local started; started="$(now)"
    start_kiosk --log-level info
    R[$size,startup_cold]="$(seconds_since "$started")"
    stop_process "$KIOSK_PID" || true  # its status is the stopped process's
    started="$(now)"
    start_kiosk --log-level info --reload-interval 10
    R[$size,startup_warm]="$(seconds_since "$started")"
    log "  startup: ${R[$size,startup_cold]} s hashing every file, ${R[$size,startup_warm]} s with the hash cache"

    R[$size,reload_unchanged]="$(sighup_reload)"
    local first; first="$(find "$folder" -mindepth 1 -maxdepth 1 -type d -print -quit)"
    sed -i 's/"title": "/"title": "Changed: /' "$first/Info.json"
    R[$size,reload_changed]="$(sighup_reload)"
    log "  reload: ${R[$size,reload_unchanged]} s unchanged, ${R[$size,reload_changed]} s with one Info.json changed"
    local cpu_before; cpu_before="$(cpu_ms "$KIOSK_PID")"
    sleep "$IDLE"
    R[$size,reload_cpu]="$(awk -v c="$(($(cpu_ms "$KIOSK_PID") - cpu_before))" -v s="$IDLE" 'BEGIN {printf "%.1f", c / (s * 10)}')"
    log "  idle with a reload check every 10 s: ${R[$size,reload_cpu]} % of one core"

    local catalog="$WORK_DIR/catalog-$size.json"
    curl -gsS -o "$catalog" "$KIOSK_BASE/v1/products"
    local gzip_tag; gzip_tag="$(curl -gsS -o /dev/null -D - -H 'Accept-Encoding: gzip' "$KIOSK_BASE/v1/products" |
        awk -F': ' 'tolower($1) == "etag" {sub(/\r$/, "", $2); print $2}')"
    local ids; ids="$(jq -r '[.products[].id] | .[:500] | join(",")' "$catalog")"
    local known; known="$(jq '.products | length' "$catalog")"
    for n in $(seq "$((known + 1))" 500); do ids+=",com.example.unknown.p$n"; done
    R[$size,json_kib]="$(($(stat -c %s "$catalog") / 1024))"

    # The same bytes for nginx: the JSON and its gzip form (gzip_static), with nginx's own ETag.
    local root="$WORK_DIR/nginx-$size/v1"
    mkdir -p "$root"
    cp "$catalog" "$root/products"
    curl -gsS -H 'Accept-Encoding: gzip' -o "$root/products.gz" "$KIOSK_BASE/v1/products"
    R[$size,gzip_kib]="$(($(stat -c %s "$root/products.gz") / 1024))"
    start_nginx "$WORK_DIR/nginx-$size" "gzip_static on; etag on;"
    local nginx_tag; nginx_tag="$(curl -gsS -o /dev/null -D - -H 'Accept-Encoding: gzip' "$NGINX_BASE/v1/products" |
        awk -F': ' 'tolower($1) == "etag" {sub(/\r$/, "", $2); print $2}')"

    expect_status "$KIOSK_BASE/v1/products" 304 "Accept-Encoding: gzip" "If-None-Match: $gzip_tag"
    expect_status "$NGINX_BASE/v1/products" 304 "Accept-Encoding: gzip" "If-None-Match: $nginx_tag"
    expect_status "$KIOSK_BASE/v1/products?ids=$ids" 200 "Accept-Encoding: gzip"
    log "  catalog: ${R[$size,json_kib]} KiB of JSON, ${R[$size,gzip_kib]} KiB gzipped; wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s:"
    run_wrk "$size" get "$KIOSK_BASE/v1/products" "Accept-Encoding: gzip"
    run_wrk "$size" not_modified "$KIOSK_BASE/v1/products" "Accept-Encoding: gzip" "If-None-Match: $gzip_tag"
    run_wrk "$size" ids "$KIOSK_BASE/v1/products?ids=$ids" "Accept-Encoding: gzip"
    run_wrk "$size" healthz "$KIOSK_BASE/healthz"
    run_wrk "$size" nginx_get "$NGINX_BASE/v1/products" "Accept-Encoding: gzip"
    run_wrk "$size" nginx_not_modified "$NGINX_BASE/v1/products" "Accept-Encoding: gzip" "If-None-Match: $nginx_tag"
    R[$size,rss]="$(kib_to_mib "$(status_kib "$KIOSK_PID" VmHWM)")"
    stop_process "$NGINX_PID" QUIT || true  # its status is the stopped process's
    stop_process "$KIOSK_PID" || true  # its status is the stopped process's

    started="$(now)"
    "$KIOSK_BIN" content check "$folder" >/dev/null 2>"$WORK_DIR/check-$size.err" || {
        cat "$WORK_DIR/check-$size.err" >&2
        die "kiosk content check failed"
    }
    R[$size,check]="$(seconds_since "$started")"
    log "  kiosk content check: ${R[$size,check]} s; Kiosk peak RSS ${R[$size,rss]} MiB"
}

SMALL="$WORK_DIR/content"
LARGE="$WORK_DIR/content-$PRODUCTS"
log "generating $PRODUCTS products with $FILES_PER_PRODUCT files each in $LARGE"
generate_catalog "$LARGE" "$PRODUCTS" "$FILES_PER_PRODUCT"
measure 4 "$SMALL"
measure "$PRODUCTS" "$LARGE"
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------------------------------------------ report
L="$PRODUCTS"
rows=()
for kind in "get|Kiosk GET /v1/products, gzip" "not_modified|Kiosk GET /v1/products, If-None-Match → 304" \
    "ids|Kiosk GET ?ids= (500 IDs), gzip" "healthz|Kiosk GET /healthz" "nginx_get|nginx, same bytes, gzip_static" \
    "nginx_not_modified|nginx, If-None-Match → 304"; do
    key="${kind%%|*}"
    r="$(ratio "${R[$L,$key]}" "${R[4,$key]}")"
    case "$key" in get | not_modified | ids) target="≥ ${RATIO_TARGET}×"; v="$(at_least "$r" "$RATIO_TARGET")" ;; *) target="(reference)"; v="-" ;; esac
    rows+=("${kind#*|}|${R[4,$key]}|${R[$L,$key]}|$r|$target|$v")
done
other=(
    "Startup, empty data folder (hashes every file), s|${R[4,startup_cold]}|${R[$L,startup_cold]}|(info)|-"
    "Startup with the hash cache, s|${R[4,startup_warm]}|${R[$L,startup_warm]}|(info)|-"
    "Unchanged reload, s|${R[4,reload_unchanged]}|${R[$L,reload_unchanged]}|< ${RELOAD_TARGET_S} s|$(below "${R[$L,reload_unchanged]}" "$RELOAD_TARGET_S")"
    "Reload after one Info.json changed, s|${R[4,reload_changed]}|${R[$L,reload_changed]}|(info)|-"
    "Idle CPU with a reload check every 10 s, % of one core|${R[4,reload_cpu]}|${R[$L,reload_cpu]}|< ${RELOAD_CPU_TARGET} %|$(below "${R[$L,reload_cpu]}" "$RELOAD_CPU_TARGET")"
    "Kiosk peak RSS (VmHWM), MiB|${R[4,rss]}|${R[$L,rss]}|< ${RSS_TARGET_MIB}|$(below "${R[$L,rss]}" "$RSS_TARGET_MIB")"
    "kiosk content check (hashes every file), s|${R[4,check]}|${R[$L,check]}|< ${CHECK_TARGET_S} s|$(below "${R[$L,check]}" "$CHECK_TARGET_S")"
    "Catalog JSON / gzipped, KiB|${R[4,json_kib]} / ${R[4,gzip_kib]}|${R[$L,json_kib]} / ${R[$L,gzip_kib]}|(info)|-"
)
cpu_model="$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
machine="$(nproc) CPUs (${cpu_model:-unknown}), load average $LOAD_BEFORE before, $LOAD_AFTER after"
{
    printf '\nCatalog at 4 and %s products — %s%s\n%s\n' "$L" "$(date -u '+%Y-%m-%d %H:%M UTC')" "${LABEL:+, $LABEL}" "$machine"
    printf 'wrk -t%s -c%s -d%ss per request kind; %s files per generated product\n\n' "$THREADS" "$CONNECTIONS" "$DURATION" "$FILES_PER_PRODUCT"
    printf '%-46s %10s %10s %7s %12s %6s\n' "requests/s" "4" "$L" "ratio" "target" ""
    for row in "${rows[@]}"; do
        IFS='|' read -r t a b r tg v <<<"$row"
        printf '%-46s %10s %10s %7s %12s %6s\n' "$t" "$a" "$b" "$r" "$tg" "$v"
    done
    printf '\n%-56s %10s %14s %12s %6s\n' "" "4" "$L" "target" ""
    for row in "${other[@]}"; do
        IFS='|' read -r t a b tg v <<<"$row"
        printf '%-56s %10s %14s %12s %6s\n' "$t" "$a" "$b" "$tg" "$v"
    done
    echo
} >&2
mkdir -p "$(dirname "$OUT_FILE")"
{
    echo "## Catalog: 4 products against $L"
    echo
    echo "Run $(date -u '+%Y-%m-%d %H:%M UTC')${LABEL:+ — $LABEL}, by \`scripts/bench-catalog.sh\`: $machine."
    echo "\`wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s\`; the generated catalog has $L products with $FILES_PER_PRODUCT small files each."
    echo
    echo "| requests/s | 4 products | $L products | ratio | target | result |"
    echo "|---|---:|---:|---:|---|---|"
    for row in "${rows[@]}"; do IFS='|' read -r t a b r tg v <<<"$row"; echo "| $t | $a | $b | $r | $tg | $v |"; done
    echo
    echo "| measure | 4 products | $L products | target | result |"
    echo "|---|---:|---:|---|---|"
    for row in "${other[@]}"; do IFS='|' read -r t a b tg v <<<"$row"; echo "| $t | $a | $b | $tg | $v |"; done
} >"$OUT_FILE"
log "wrote $OUT_FILE"
