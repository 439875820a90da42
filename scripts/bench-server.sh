#!/usr/bin/env bash
# Benchmarks Kiosk's content streaming against nginx serving the same files on the same machine.
#
#   scripts/bench-server.sh            # from the repository root
#
# What it does (all traffic on 127.0.0.1):
#   1. installs nginx, wrk, curl and jq with apt-get when missing;
#   2. builds `kiosk` in release into .build-release (skipped when KIOSK_BIN points at a built binary);
#   3. makes a temporary content folder: bench.big (1 GiB) and bench.mid (50 MiB) of random bytes;
#   4. starts `kiosk serve --port 0`, buys both products in the sandbox store and gets download grants;
#   5. starts nginx (own config: worker_processes auto, sendfile on) serving the same files at the same paths, and
#      "offload": a second Kiosk (`--offload nginx:/_kiosk/files`, the same grant secret) behind a second nginx
#      configured by deploy/nginx/kiosk-offload.conf itself, so Kiosk admits each request and nginx sends the bytes;
#   6. measures with the same client for both servers:
#        a. one client, curl -o /dev/null of the 1 GiB file, median of BENCH_CURL_RUNS runs;
#        b. wrk -t2 -c64 on the 50 MiB file (full 200 responses);
#        c. wrk -t2 -c64 on the 50 MiB file with Range: bytes=<random offset>- (206, mean 25 MiB);
#        d. wrk -t2 -c64 on the 1 GiB file with 1 MiB ranges at random offsets (206, per-request overhead);
#      while sampling Kiosk's VmRSS every 0.5 s; VmHWM is read at the end;
#   7. prints a table (and writes bench-out/server.md) with Kiosk/nginx and offload/nginx ratios and PASS/MISS
#      against the targets:
#      ≥ 0.8× nginx with 64 clients (≥ 0.9× for the 1 MiB ranges of d), Kiosk peak RSS < 128 MiB;
#   8. kills both servers and removes its temporary files on exit;
#   9. then the launch-day spike rows of scripts/bench/spike.sh (2,000 and 10,000 connections, the catalog's 304,
#      /healthz, the gzipped catalog of 10,000 products, against nginx; see that script).
#
# Environment knobs: BENCH_DURATION (wrk seconds, default 20), BENCH_CONNECTIONS (64), BENCH_THREADS (2),
# BENCH_CURL_RUNS (3), BENCH_BIG_MIB (1024), BENCH_MID_MIB (50), KIOSK_BIN (use this binary, skip the build),
# BENCH_BUILD_RETRIES (3), BENCH_OUT (bench-out/server.md), BENCH_LABEL (a note printed with the results),
# BENCH_PARTS ("streaming spike": which rows to run), and spike.sh's own (BENCH_SPIKE_*, KIOSK_BEFORE_BIN).
set -euo pipefail

# ---------------------------------------------------------------------------------------------- configuration
DURATION="${BENCH_DURATION:-20}"
CONNECTIONS="${BENCH_CONNECTIONS:-64}"
THREADS="${BENCH_THREADS:-2}"
CURL_RUNS="${BENCH_CURL_RUNS:-3}"
BIG_MIB="${BENCH_BIG_MIB:-1024}"
MID_MIB="${BENCH_MID_MIB:-50}"
BUILD_RETRIES="${BENCH_BUILD_RETRIES:-3}"
OUT_FILE="${BENCH_OUT:-bench-out/server.md}"
LABEL="${BENCH_LABEL:-}"
PARTS="${BENCH_PARTS:-streaming spike}"
RATIO_TARGET="0.8"
SHORT_RANGE_TARGET="0.9"   # scenario d: per-request cost (issue #11)
RSS_TARGET_MIB=128
RANGE_LENGTH=$((1024 * 1024))
BIG_ID="bench.big"; BIG_SIZE=$((BIG_MIB * 1024 * 1024))
MID_ID="bench.mid"; MID_SIZE=$((MID_MIB * 1024 * 1024))
VERSION="1"

LOG_TAG=bench
RELIABILITY_BUILD_RETRIES="$BUILD_RETRIES"
source "$(dirname "${BASH_SOURCE[0]}")/reliability/common.sh"
WRK_LUA="$REPO_ROOT/scripts/bench/wrk-stats.lua"
cd "$REPO_ROOT"
[[ -f "$WRK_LUA" ]] || die "missing $WRK_LUA"

SAMPLER_PID=""
trap_cleanup

# ------------------------------------------------------------------------------------------------ 1. tools, build
require_tools nginx wrk curl jq ss
command -v swift >/dev/null || [[ -n "${KIOSK_BIN:-}" ]] || die "swift is not on PATH (install a Swift 6.2+ toolchain)"
build_kiosk
export KIOSK_BIN
# The launch-day spike rows (thousands of connections, small answers) are scripts/bench/spike.sh's.
if [[ " $PARTS " != *" streaming "* ]]; then
    [[ " $PARTS " == *" spike "* ]] || die "BENCH_PARTS='$PARTS' names neither streaming nor spike"
    exec "$REPO_ROOT/scripts/bench/spike.sh"
fi

# ------------------------------------------------------------------------------------------------ 3. content
make_work_dir
log "generating ${BIG_MIB} MiB + ${MID_MIB} MiB of random content in $CONTENT_DIR"
make_product "$BIG_ID" big.bin "$BIG_MIB" "Benchmark big file"
make_product "$MID_ID" mid.bin "$MID_MIB" "Benchmark mid file"

# ------------------------------------------------------------------------------------------------ 4. Kiosk
log "starting kiosk (it hashes the content first)"
# One grant secret for both Kiosks: a token of the first opens the files at the offloading one.
export KIOSK_GRANT_SECRET="bench-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
start_kiosk
case "$KIOSK_BASE" in http://127.0.0.1:*) ;; *) die "kiosk is not on loopback: $KIOSK_BASE" ;; esac
grant "$BIG_ID"
BIG_PATH="$GRANT_PATH"
grant "$MID_ID"
MID_PATH="$GRANT_PATH"

# ------------------------------------------------------------------------------------------------ 5. nginx
# nginx serves the same bytes at the same URL paths: /v1/content/<id>/<version>/Contents/<file>.
for id in "$BIG_ID" "$MID_ID"; do
    mkdir -p "$WORK_DIR/nginx-root/v1/content/$id"
    ln -s "$CONTENT_DIR/$id" "$WORK_DIR/nginx-root/v1/content/$id/$VERSION"
done
start_nginx "$WORK_DIR/nginx-root"

# "offload": a second Kiosk with --offload behind nginx configured by the shipped deploy/nginx/kiosk-offload.conf.
OFFLOAD_DIR="$WORK_DIR/offload"
mkdir -p "$OFFLOAD_DIR/data"
OFFLOAD_KIOSK_PORT="$(free_port)"
"$KIOSK_BIN" serve --host 127.0.0.1 --port "$OFFLOAD_KIOSK_PORT" --content "$CONTENT_DIR" --data "$OFFLOAD_DIR/data" \
    --reload-interval 0 --log-level warning --offload nginx:/_kiosk/files >"$OFFLOAD_DIR/kiosk.out" 2>&1 &
OFFLOAD_KIOSK_PID=$!
EXTRA_PIDS+=("$OFFLOAD_KIOSK_PID")
OFFLOAD_PORT="$(free_port)"
sed -e "s|@LISTEN@|127.0.0.1:$OFFLOAD_PORT|" -e "s|@KIOSK@|127.0.0.1:$OFFLOAD_KIOSK_PORT|" \
    -e "s|@CONTENT@|$CONTENT_DIR|" "$REPO_ROOT/deploy/nginx/kiosk-offload.conf" >"$OFFLOAD_DIR/kiosk-offload.conf"
write_nginx_conf "$OFFLOAD_DIR" "include $OFFLOAD_DIR/kiosk-offload.conf;"
"$NGINX_BIN" -e "$OFFLOAD_DIR/error.log" -p "$OFFLOAD_DIR" -c "$OFFLOAD_DIR/nginx.conf" &
OFFLOAD_NGINX_PID=$!
EXTRA_PIDS+=("$OFFLOAD_NGINX_PID")
OFFLOAD_BASE="http://127.0.0.1:$OFFLOAD_PORT"
for _ in $(seq 1 600); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' "$OFFLOAD_BASE/healthz")" == 200 ]] && break
    kill -0 "$OFFLOAD_NGINX_PID" 2>/dev/null || { cat "$OFFLOAD_DIR/error.log" >&2; die "offload nginx exited"; }
    sleep 0.1
done
[[ "$(curl -s -o /dev/null -w '%{http_code}' "$OFFLOAD_BASE/healthz")" == 200 ]] || die "offload Kiosk not ready"
log "offload: Kiosk --offload on 127.0.0.1:$OFFLOAD_KIOSK_PORT behind nginx on $OFFLOAD_BASE"

# base_of server — the URL base of kiosk, offload or nginx.
base_of() {
    case "$1" in
    kiosk) echo "$KIOSK_BASE" ;;
    offload) echo "$OFFLOAD_BASE" ;;
    nginx) echo "$NGINX_BASE" ;;
    esac
}

# Both servers must answer the same bytes before anything is measured.
check() { # base path expect-size [range]
    local args=(-g -s -o /dev/null -w '%{http_code} %{size_download}')
    [[ -n "${4:-}" ]] && args+=(-H "Range: $4")
    local got; got="$(curl "${args[@]}" "$1$2")"
    [[ "$got" == "$3" ]] || die "$1$2 ${4:-} answered '$got', expected '$3'"
}
for base in "$KIOSK_BASE" "$OFFLOAD_BASE" "$NGINX_BASE"; do
    check "$base" "$MID_PATH" "200 $MID_SIZE"
    check "$base" "$BIG_PATH" "200 $BIG_SIZE"
    check "$base" "$MID_PATH" "206 $((MID_SIZE - 1000))" "bytes=1000-"
    check "$base" "$BIG_PATH" "206 $RANGE_LENGTH" "bytes=5000-$((5000 + RANGE_LENGTH - 1))"
done
cmp <(curl -gs -r 12345-1012344 "$KIOSK_BASE$BIG_PATH") <(curl -gs -r 12345-1012344 "$NGINX_BASE$BIG_PATH") ||
    die "kiosk and nginx answered different bytes"
cmp <(curl -gs -r 12345-1012344 "$OFFLOAD_BASE$BIG_PATH") <(curl -gs -r 12345-1012344 "$NGINX_BASE$BIG_PATH") ||
    die "the offload and nginx answered different bytes"
[[ "$(curl -gs -o /dev/null -D - "$OFFLOAD_BASE$BIG_PATH" | grep -ci '^etag: "')" == 1 ]] ||
    die "the offload answer lost Kiosk's ETag"
log "the three servers answer identical content (page cache is now warm)"

# ------------------------------------------------------------------------------------------------ 6. measure
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
log "load average before the runs: $LOAD_BEFORE (other work on this machine skews every figure)"
RSS_LOG="$WORK_DIR/rss.log"
: >"$RSS_LOG"
(
    while kill -0 "$KIOSK_PID" 2>/dev/null; do
        awk '/^VmRSS:/ {print $2}' "/proc/$KIOSK_PID/status" 2>/dev/null >>"$RSS_LOG" || true
        sleep 0.5
    done
) &
SAMPLER_PID=$!
EXTRA_PIDS+=("$SAMPLER_PID")
HWM_STARTUP_KIB="$(status_kib "$KIOSK_PID" VmHWM)"   # includes startup (hashing the content)
RSS_IDLE_KIB="$(status_kib "$KIOSK_PID" VmRSS)"
# Reset the peak so that VmHWM at the end covers the benchmark runs only (Linux ≥ 4.0; harmless if refused).
HWM_RESET="no"
if echo 5 >"/proc/$KIOSK_PID/clear_refs" 2>/dev/null; then HWM_RESET="yes"; fi
rss_mark() { wc -l <"$RSS_LOG"; }
rss_max_since() { # line mark → max VmRSS KiB of the samples after it
    tail -n +"$(($1 + 1))" "$RSS_LOG" | awk 'BEGIN {m = 0} $1 > m {m = $1} END {print m}'
}

median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else printf "%.6f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
declare -A RES   # RES[scenario,server,metric]
declare -A RSS_PEAK

# a. one client, whole 1 GiB file, curl.
log "scenario a: 1 client, curl, ${BIG_MIB} MiB file, $CURL_RUNS runs per server"
mark="$(rss_mark)"
for server in kiosk offload nginx; do : >"$WORK_DIR/curl.$server"; done
for run in $(seq 1 "$CURL_RUNS"); do
    for server in kiosk offload nginx; do   # interleaved, so drift affects all alike
        base="$(base_of "$server")"
        out="$(curl -g -s -o /dev/null -w '%{http_code} %{size_download} %{speed_download}' "$base$BIG_PATH")"
        read -r code size speed <<<"$out"
        [[ "$code" == 200 && "$size" == "$BIG_SIZE" ]] || die "curl $server: $out"
        mibs="$(awk -v s="$speed" 'BEGIN {printf "%.1f", s / 1048576}')"
        echo "$mibs" >>"$WORK_DIR/curl.$server"
        log "  run $run $server: $mibs MiB/s"
    done
done
for server in kiosk offload nginx; do
    RES[a,$server,mibs]="$(median <"$WORK_DIR/curl.$server")"
    RES[a,$server,rps]="-"
    RES[a,$server,runs]="$(paste -sd' ' "$WORK_DIR/curl.$server")"
done
sleep 1
RSS_PEAK[a]="$(rss_max_since "$mark")"

# CPU time (user + system, ms) of a server's processes: Kiosk's pid, nginx's master and workers, or for the offload
# both (its Kiosk and its nginx). Under a busy machine the throughput figures swing; CPU per GiB served is the
# steadier measure of efficiency.
nginx_pids() { # master pid — it and its workers
    echo "$1 $(cat "/proc/$1/task/$1/children" 2>/dev/null || pgrep -P "$1" 2>/dev/null | tr '\n' ' ' || true)"
}
cpu_ms() { # server
    local pids="$KIOSK_PID"
    case "$1" in
    nginx) pids="$(nginx_pids "$NGINX_PID")" ;;
    offload) pids="$OFFLOAD_KIOSK_PID $(nginx_pids "$OFFLOAD_NGINX_PID")" ;;
    esac
    local total=0 pid t
    for pid in $pids; do
        t="$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)"
        total=$((total + t))
    done
    echo $((total * 1000 / CLK_TCK))
}
CLK_TCK="$(getconf CLK_TCK)"

run_wrk() { # scenario server path mode size
    local scenario=$1 server=$2 path=$3 mode=$4 size=$5 base
    base="$(base_of "$server")"
    local out="$WORK_DIR/wrk.$scenario.$server"
    local cpu_before; cpu_before="$(cpu_ms "$server")"
    BENCH_RANGE_MODE="$mode" BENCH_FILE_SIZE="$size" BENCH_RANGE_LENGTH="$RANGE_LENGTH" BENCH_SEED=42 \
        wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --timeout 60s -s "$WRK_LUA" "$base$path" >"$out" 2>&1 ||
        { cat "$out" >&2; die "wrk failed ($scenario $server)"; }
    local cpu_used=$(($(cpu_ms "$server") - cpu_before))
    local result; result="$(grep '^BENCH_RESULT' "$out")" || { cat "$out" >&2; die "no wrk summary"; }
    local -A f=()
    local kv
    for kv in ${result#BENCH_RESULT }; do f[${kv%%=*}]="${kv#*=}"; done
    RES[$scenario,$server,mibs]="$(awk -v b="${f[bytes]}" -v d="${f[duration_us]}" 'BEGIN {printf "%.1f", b / 1048576 / (d / 1e6)}')"
    RES[$scenario,$server,rps]="$(awk -v r="${f[requests]}" -v d="${f[duration_us]}" 'BEGIN {printf "%.1f", r / (d / 1e6)}')"
    RES[$scenario,$server,cpu]="$(awk -v c="$cpu_used" -v b="${f[bytes]}" 'BEGIN {if (b > 0) printf "%.0f", c / (b / 1073741824); else print "n/a"}')"
    RES[$scenario,$server,transfer]="$(awk '/^Transfer\/sec:/ {print $2}' "$out")"
    RES[$scenario,$server,errors]="$((f[err_connect] + f[err_read] + f[err_write] + f[err_status] + f[err_timeout]))"
    RES[$scenario,$server,p50]="$(awk -v u="${f[lat_p50_us]}" 'BEGIN {printf "%.0f", u / 1000}')"
    RES[$scenario,$server,p99]="$(awk -v u="${f[lat_p99_us]}" 'BEGIN {printf "%.0f", u / 1000}')"
    log "  $server: ${RES[$scenario,$server,mibs]} MiB/s (wrk Transfer/sec ${RES[$scenario,$server,transfer]}), ${RES[$scenario,$server,rps]} req/s, ${RES[$scenario,$server,cpu]} CPU ms/GiB, ${RES[$scenario,$server,errors]} errors, latency p50 ${RES[$scenario,$server,p50]} ms p99 ${RES[$scenario,$server,p99]} ms"
    local errors="${RES[$scenario,$server,errors]}"
    if ((errors > 0)); then log "  warning: wrk counted errors for $server:"; grep -iE 'error|non-2xx' "$out" >&2 || true; fi
}
wrk_scenario() { # scenario title path mode size
    log "scenario $1: $2"
    local mark; mark="$(rss_mark)"
    run_wrk "$1" kiosk "$3" "$4" "$5"
    sleep 1
    RSS_PEAK[$1]="$(rss_max_since "$mark")"
    run_wrk "$1" offload "$3" "$4" "$5"
    run_wrk "$1" nginx "$3" "$4" "$5"
}
wrk_scenario b "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s, full ${MID_MIB} MiB file" "$MID_PATH" none "$MID_SIZE"
wrk_scenario c "same, Range: bytes=<random offset>- of the ${MID_MIB} MiB file" "$MID_PATH" open "$MID_SIZE"
wrk_scenario d "same, 1 MiB ranges at random offsets of the ${BIG_MIB} MiB file" "$BIG_PATH" fixed "$BIG_SIZE"

HWM_BENCH_KIB="$(status_kib "$KIOSK_PID" VmHWM)"
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
SAMPLED_MAX_KIB="$(rss_max_since 0)"
kill -0 "$KIOSK_PID" 2>/dev/null || die "kiosk died during the runs"

# ------------------------------------------------------------------------------------------------ 7. report
verdict() { awk -v r="$1" -v t="$2" 'BEGIN {print (r + 0 >= t + 0) ? "PASS" : "MISS"}'; }
declare -A TITLE=(
    [a]="a. 1 client, curl, ${BIG_MIB} MiB file (median of $CURL_RUNS)"
    [b]="b. wrk ${CONNECTIONS} conns, full ${MID_MIB} MiB file"
    [c]="c. wrk ${CONNECTIONS} conns, ${MID_MIB} MiB, bytes=<rand>-"
    [d]="d. wrk ${CONNECTIONS} conns, 1 MiB ranges of ${BIG_MIB} MiB"
)
PEAK_KIB="$HWM_BENCH_KIB"
((SAMPLED_MAX_KIB > PEAK_KIB)) && PEAK_KIB="$SAMPLED_MAX_KIB"
RSS_VERDICT="$(awk -v k="$PEAK_KIB" -v t="$RSS_TARGET_MIB" 'BEGIN {print (k / 1024 < t) ? "PASS" : "MISS"}')"

rows=()
for s in a b c d; do
    k="${RES[$s,kiosk,mibs]}"; n="${RES[$s,nginx,mibs]}"; r="$(ratio "$k" "$n")"
    o="${RES[$s,offload,mibs]}"; ro="$(ratio "$o" "$n")"
    goal="$RATIO_TARGET"; [[ $s == d ]] && goal="$SHORT_RANGE_TARGET"
    if [[ $s == a ]]; then target="(info)"; v="-"; else target="≥ ${goal}×"; v="$(verdict "$r" "$goal")"; fi
    rows+=("${TITLE[$s]}|$k|$o|$n|$r|$ro|${RES[$s,kiosk,rps]}|${RES[$s,nginx,rps]}|${RES[$s,kiosk,cpu]:--}|${RES[$s,offload,cpu]:--}|${RES[$s,nginx,cpu]:--}|$(kib_to_mib "${RSS_PEAK[$s]}")|$target|$v")
done

print_table() {
    printf '\n%s\n' "Kiosk, Kiosk offloading to nginx, and nginx — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs${LABEL:+, $LABEL}"
    local format='%-44s %8s %8s %8s %6s %6s %8s %8s %8s %8s %8s %8s %8s %6s\n'
    printf "$format" "scenario" "Kiosk" "offload" "nginx" "ratio" "ratio" "Kiosk" "nginx" "Kiosk" "offload" "nginx" \
        "Kiosk" "target" ""
    printf "$format" "" "MiB/s" "MiB/s" "MiB/s" "K/n" "o/n" "req/s" "req/s" "CPU/GiB" "CPU/GiB" "CPU/GiB" "RSS MiB" \
        "" ""
    local row
    for row in "${rows[@]}"; do
        IFS='|' read -r t k o n r ro kr nr kc oc nc rss tg v <<<"$row"
        printf "$format" "$t" "$k" "$o" "$n" "$r" "$ro" "$kr" "$nr" "$kc" "$oc" "$nc" "$rss" "$tg" "$v"
    done
    printf '%-44s %8s %98s %8s %6s\n' "Kiosk peak RSS during the runs (MiB)" "$(kib_to_mib "$PEAK_KIB")" \
        "" "< ${RSS_TARGET_MIB}" "$RSS_VERDICT"
    printf '  (VmHWM after runs: %s MiB, reset before runs: %s; max sampled VmRSS: %s MiB; idle RSS: %s MiB; VmHWM incl. startup hashing: %s MiB)\n\n' \
        "$(kib_to_mib "$HWM_BENCH_KIB")" "$HWM_RESET" "$(kib_to_mib "$SAMPLED_MAX_KIB")" \
        "$(kib_to_mib "$RSS_IDLE_KIB")" "$(kib_to_mib "$HWM_STARTUP_KIB")"
}
print_table

mkdir -p "$(dirname "$OUT_FILE")"
cpu_model="$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
mem_total="$(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
swift_version="$(command -v swift >/dev/null && swift --version 2>&1 | head -1 || echo "n/a")"
{
    echo "# Kiosk vs nginx: content streaming benchmark"
    echo
    echo "Run $(date -u '+%Y-%m-%d %H:%M UTC')${LABEL:+ — $LABEL}, by \`scripts/bench-server.sh\`."
    echo
    echo "| scenario | Kiosk MiB/s | offload MiB/s | nginx MiB/s | Kiosk/nginx | offload/nginx | Kiosk req/s | nginx req/s | Kiosk CPU ms/GiB | offload CPU ms/GiB | nginx CPU ms/GiB | Kiosk peak RSS MiB | target | result |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
    for row in "${rows[@]}"; do
        IFS='|' read -r t k o n r ro kr nr kc oc nc rss tg v <<<"$row"
        echo "| $t | $k | $o | $n | $r | $ro | $kr | $nr | $kc | $oc | $nc | $rss | $tg | $v |"
    done
    echo "| **Kiosk peak RSS during all runs** | | | | | | | | | | | **$(kib_to_mib "$PEAK_KIB")** | < $RSS_TARGET_MIB MiB | $RSS_VERDICT |"
    echo
    echo "- Kiosk VmHWM after the runs: $(kib_to_mib "$HWM_BENCH_KIB") MiB (peak reset via \`clear_refs\` before the runs: $HWM_RESET);" \
        "max VmRSS sampled every 0.5 s: $(kib_to_mib "$SAMPLED_MAX_KIB") MiB; idle RSS before the runs: $(kib_to_mib "$RSS_IDLE_KIB") MiB;" \
        "VmHWM including startup (hashing the content): $(kib_to_mib "$HWM_STARTUP_KIB") MiB."
    echo "- Single-client runs (MiB/s): Kiosk ${RES[a,kiosk,runs]}; offload ${RES[a,offload,runs]}; nginx ${RES[a,nginx,runs]}."
    for s in b c d; do
        echo "- ${TITLE[$s]}: wrk Transfer/sec Kiosk ${RES[$s,kiosk,transfer]}, nginx ${RES[$s,nginx,transfer]};" \
            "latency p50/p99 Kiosk ${RES[$s,kiosk,p50]}/${RES[$s,kiosk,p99]} ms, nginx ${RES[$s,nginx,p50]}/${RES[$s,nginx,p99]} ms;" \
            "server CPU per GiB served Kiosk ${RES[$s,kiosk,cpu]} ms, nginx ${RES[$s,nginx,cpu]} ms;" \
            "errors Kiosk ${RES[$s,kiosk,errors]}, nginx ${RES[$s,nginx,errors]}."
    done
    echo
    echo "## Machine"
    echo
    echo "- CPUs (\`nproc\`): $(nproc); model: ${cpu_model:-unknown}"
    echo "- Memory: $mem_total"
    echo "- Kernel: $(uname -srm)"
    echo "- OS: $(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown}")"
    echo "- Swift: $swift_version"
    echo "- nginx: $("$NGINX_BIN" -v 2>&1 | sed 's/^nginx version: //'); wrk: $(wrk -v 2>&1 | head -1 | awk '{print $2}'); curl: $(curl --version | head -1 | awk '{print $2}')"
    echo "- Load average (1/5/15 min) before the runs: $LOAD_BEFORE; after: $LOAD_AFTER (the load generator itself adds ~2)"
    echo "- Kiosk binary: \`${KIOSK_BIN#"$REPO_ROOT"/}\` (release)"
    echo
    echo "## Method"
    echo
    echo "- Content: \`$BIG_ID\` ($BIG_MIB MiB) and \`$MID_ID\` ($MID_MIB MiB) of \`/dev/urandom\` bytes in a temporary folder" \
        "(tmpfs or disk as \`/tmp\` is; both files are in the page cache before measuring — each server's answers are first" \
        "checked to be complete and identical)."
    echo "- Kiosk: \`kiosk serve --port 0 --reload-interval 0 --log-level warning\` with the sandbox store; both products bought with" \
        "\`POST /sandbox/purchases\`, grants from \`POST /v1/downloads\`; requests carry the grant as \`?token=\`, so every" \
        "request also pays token verification and a \`stat\` of the file."
    echo "- nginx: Debian's package, own config — \`worker_processes auto\`, \`sendfile on\`, \`tcp_nopush on\`, \`access_log off\`," \
        "serving the same files at the same URL paths (the query string is ignored)."
    echo "- offload: a second Kiosk (\`--offload nginx:/_kiosk/files\`, the same grant secret) behind a second nginx" \
        "configured by \`deploy/nginx/kiosk-offload.conf\` (placeholders replaced, same http settings as the plain" \
        "nginx): every request goes through nginx to Kiosk, which checks the token and the range and answers" \
        "\`X-Accel-Redirect\`; nginx sends the file. Its CPU is both processes'."
    echo "- Both on 127.0.0.1 on the same machine as the load generator (which competes for the same $(nproc) CPUs)."
    echo "- a: \`curl -o /dev/null\` of the whole file, $CURL_RUNS runs per server interleaved, median of \`speed_download\`."
    echo "- b–d: \`wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s --timeout 60s\` with \`scripts/bench/wrk-stats.lua\`; MiB/s = bytes received" \
        "/ duration from wrk's own summary (what its Transfer/sec rounds), req/s = completed requests / duration." \
        "c sends \`Range: bytes=<offset>-\` with offsets uniform over the file (mean response 25 MiB)," \
        "d sends 1 MiB \`bytes=<offset>-<offset+1MiB-1>\` ranges at random offsets of the big file; both servers get the same seeded offsets."
    echo "- Server CPU per GiB: user + system time of the server's processes (Kiosk's pid; nginx's master and workers)" \
        "from \`/proc/<pid>/stat\` across each wrk run, divided by the GiB wrk received — steadier than MiB/s when the" \
        "machine is shared."
    echo "- Kiosk RSS: \`VmRSS\` sampled every 0.5 s from \`/proc/<pid>/status\` during the runs, and \`VmHWM\` after the runs" \
        "(after resetting it with \`echo 5 > /proc/<pid>/clear_refs\` once startup was over); the peak is the larger of the two."
    echo "- Targets: Kiosk ≥ ${RATIO_TARGET}× nginx throughput with $CONNECTIONS clients (b, c) and ≥ ${SHORT_RANGE_TARGET}× for 1 MiB ranges (d); Kiosk peak RSS < $RSS_TARGET_MIB MiB."
} >"$OUT_FILE"
log "wrote $OUT_FILE"

if [[ " $PARTS " == *" spike "* ]]; then
    log "streaming rows done; stopping their servers for the spike rows"
    trap - EXIT
    (cleanup)
    "$REPO_ROOT/scripts/bench/spike.sh"
fi
