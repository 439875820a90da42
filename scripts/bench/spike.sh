#!/usr/bin/env bash
# The launch-day spike rows of scripts/bench-server.sh (issue #32): Kiosk's embedded default (SQLite, the sandbox
# store, no offload) against nginx on the same machine, in one run, with thousands of connections and with the small
# answers every app asks for when it starts. It runs on its own too:
#
#   scripts/bench/spike.sh                              # from the repository root
#   KIOSK_BEFORE_BIN=/path/to/older/kiosk scripts/bench/spike.sh   # adds an earlier build's rows ("before")
#
# What it does (all traffic on 127.0.0.1):
#   1. a content folder: the repository's samples, `bench.spike` (one 1 MiB file) and BENCH_SPIKE_PRODUCTS (10,000)
#      more products, so that the catalog is the size of a large store's;
#   2. starts Kiosk (KIOSK_BIN, or a release build), and the earlier build when KIOSK_BEFORE_BIN is set, each with
#      its own data folder; buys `bench.spike` from each and takes a grant;
#   3. starts nginx with scripts/bench/nginx-spike.conf (printed below the results): one worker per CPU, as Kiosk runs
#      one event loop per CPU; no access log on either side; the same 1 MiB file at the same URL path, and Kiosk's
#      own catalog bytes (JSON and gzip) as a static file with gzip_static;
#   4. measures each server with the same wrk command:
#        e/f. BENCH_SPIKE_CONNECTIONS (2,000 and 10,000) keep-alive connections on the granted 1 MiB file: MiB/s,
#             errors, and Kiosk's memory: VmRSS before the run (after a 1 s warm-up with 16 connections, for every
#             server), the peak during it (VmHWM, reset before the run, and VmRSS sampled every 0.2 s), and
#             (peak − before) / connections;
#        g.   -c16 `GET /v1/products` with its `If-None-Match` (304): Kiosk's catalog, nginx's static file;
#        h.   -c16 `GET /healthz` (Kiosk) against nginx's static 304 of g;
#        i.   -c16 the whole catalog, gzip (`Accept-Encoding: gzip`), the same bytes from both;
#      and for every run the CPU time each server spent per request (user and system, from /proc/PID/stat): on a
#      shared 2-CPU machine, where wrk takes its part of the CPUs, the steadier figure of the two;
#   5. prints a table with the ratios and the targets of issue #32 and writes it to BENCH_SPIKE_OUT.
#
# Each row runs BENCH_SPIKE_ROUNDS (3) times, the servers taking turns, and reports the median throughput and the
# largest memory per connection: on a shared 2-CPU machine one run swings by a fifth either way.
#
# Environment knobs: BENCH_SPIKE_DURATION (wrk seconds, 15), BENCH_SPIKE_CONNECTIONS ("2000 10000"),
# BENCH_SPIKE_ROUNDS (3),
# BENCH_SPIKE_PRODUCTS (10000), BENCH_SPIKE_OUT (bench-out/spike.md), KIOSK_BIN, KIOSK_BEFORE_BIN,
# KIOSK_BEFORE_LABEL (what the earlier build is, for the table), BENCH_LABEL.
set -euo pipefail

DURATION="${BENCH_SPIKE_DURATION:-15}"
CONNECTION_ROWS="${BENCH_SPIKE_CONNECTIONS:-2000 10000}"
PRODUCTS="${BENCH_SPIKE_PRODUCTS:-10000}"
OUT_FILE="${BENCH_SPIKE_OUT:-bench-out/spike.md}"
ROUNDS="${BENCH_SPIKE_ROUNDS:-3}"
BEFORE_BIN="${KIOSK_BEFORE_BIN:-}"
BEFORE_LABEL="${KIOSK_BEFORE_LABEL:-earlier build}"
LABEL="${BENCH_LABEL:-}"
SMALL_CONNECTIONS=16
SPIKE_ID="bench.spike"
LOG_TAG=spike

source "$(dirname "${BASH_SOURCE[0]}")/../reliability/common.sh"
cd "$REPO_ROOT"
WRK_LUA="$REPO_ROOT/scripts/bench/wrk-stats.lua"
trap_cleanup

require_tools nginx wrk curl jq ss python3
build_kiosk
[[ -z "$BEFORE_BIN" || -x "$BEFORE_BIN" ]] || die "KIOSK_BEFORE_BIN=$BEFORE_BIN is not executable"
MOST_CONNECTIONS="$(tr ' ' '\n' <<<"$CONNECTION_ROWS" | sort -n | tail -1)"
ulimit -n "$(ulimit -Hn)"
(($(ulimit -n) >= MOST_CONNECTIONS + 500)) ||
    die "ulimit -n is $(ulimit -n): raise the hard limit above $((MOST_CONNECTIONS + 500)) for $MOST_CONNECTIONS connections"

# ---------------------------------------------------------------------------------------------- content, servers
make_work_dir
make_product "$SPIKE_ID" small.bin 1 "Launch-day payload"
log "generating $PRODUCTS more products"
python3 - "$CONTENT_DIR" "$PRODUCTS" <<'PY'
import json, os, sys
root, count = sys.argv[1], int(sys.argv[2])
for n in range(count):
    product = f"com.example.spike.issue{n:05d}"
    os.makedirs(f"{root}/{product}/Contents")
    with open(f"{root}/{product}/Info.json", "w") as f:
        json.dump({"product_id": product, "type": "non_consumable", "title": f"Issue {n}",
                   "description": "A generated issue of a large catalog.", "content_version": "1"}, f)
    with open(f"{root}/{product}/Contents/page.txt", "w") as f:
        f.write(f"page of issue {n}\n")
PY

declare -A BASE PID PATH_OF
SERVERS=(kiosk)
[[ -n "$BEFORE_BIN" ]] && SERVERS+=(before)
AFTER_BIN="$KIOSK_BIN"
mkdir -p "$WORK_DIR/data-before"

# start_kiosks — (re)starts Kiosk and the earlier build (a fresh process each time, so that a row's memory figures
# start from an idle server), buys the 1 MiB product from each and takes a grant.
start_kiosks() {
    local server
    for server in "${SERVERS[@]}"; do stop_process "${PID[$server]:-}" || true; done
    KIOSK_BIN="$AFTER_BIN" DATA_DIR="$WORK_DIR/data"
    start_kiosk
    grant "$SPIKE_ID"
    BASE[kiosk]="$KIOSK_BASE"; PID[kiosk]="$KIOSK_PID"; PATH_OF[kiosk]="$GRANT_PATH"; FILE_URL="$GRANT_URL"
    if [[ -n "$BEFORE_BIN" ]]; then
        KIOSK_BIN="$BEFORE_BIN" DATA_DIR="$WORK_DIR/data-before"
        cp "$WORK_DIR/kiosk.err" "$WORK_DIR/kiosk-after.err"
        start_kiosk
        grant "$SPIKE_ID"
        BASE[before]="$KIOSK_BASE"; PID[before]="$KIOSK_PID"; PATH_OF[before]="$GRANT_PATH"
        EXTRA_PIDS+=("$KIOSK_PID")
    fi
    KIOSK_BIN="$AFTER_BIN" KIOSK_PID="${PID[kiosk]}" KIOSK_BASE="${BASE[kiosk]}"
}
log "starting Kiosk (it hashes $PRODUCTS files first)"
start_kiosks

NGINX_DIR="$WORK_DIR/nginx"
ROOT="$WORK_DIR/nginx-root"
mkdir -p "$NGINX_DIR/tmp" "$ROOT/v1/content/$SPIKE_ID"
ln -s "$CONTENT_DIR/$SPIKE_ID" "$ROOT/v1/content/$SPIKE_ID/1"
curl -sS -o "$ROOT/v1/products" "${BASE[kiosk]}/v1/products"
curl -sS -H 'Accept-Encoding: gzip' -o "$ROOT/v1/products.gz" "${BASE[kiosk]}/v1/products"
touch -r "$ROOT/v1/products" "$ROOT/v1/products.gz"
NGINX_PORT="$(free_port)"
WORKERS="$(nproc)"
sed -e "s|@WORKERS@|$WORKERS|" -e "s|@DIR@|$NGINX_DIR|g" -e "s|@LISTEN@|127.0.0.1:$NGINX_PORT|" -e "s|@ROOT@|$ROOT|" \
    "$REPO_ROOT/scripts/bench/nginx-spike.conf" >"$NGINX_DIR/nginx.conf"
chmod -R a+rX "$WORK_DIR"
NGINX_BIN="$(command -v nginx || echo /usr/sbin/nginx)"
"$NGINX_BIN" -e "$NGINX_DIR/error.log" -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" &
NGINX_PID=$!
BASE[nginx]="http://127.0.0.1:$NGINX_PORT"; PID[nginx]="$NGINX_PID"; PATH_OF[nginx]="$FILE_URL"
for _ in $(seq 1 100); do curl -s -o /dev/null "${BASE[nginx]}/v1/products" && break; sleep 0.1; done

# Every server answers the same bytes before anything is measured.
same() { # what url-a url-b [curl options…]
    local what=$1 a=$2 b=$3
    shift 3
    cmp -s <(curl -gsS "$@" "$a") <(curl -gsS "$@" "$b") || die "$what: $a and $b answer different bytes"
}
for server in "${SERVERS[@]}"; do
    same "the 1 MiB file" "${BASE[$server]}${PATH_OF[$server]}" "${BASE[nginx]}$FILE_URL"
    same "the catalog" "${BASE[$server]}/v1/products" "${BASE[nginx]}/v1/products"
    same "the gzip catalog" "${BASE[$server]}/v1/products" "${BASE[nginx]}/v1/products" -H 'Accept-Encoding: gzip'
done
etag_of() { curl -gsSI "$@" | tr -d '\r' | awk 'tolower($1) == "etag:" {print $2}'; }
declare -A ETAG
for server in "${SERVERS[@]}" nginx; do
    ETAG[$server]="$(etag_of "${BASE[$server]}/v1/products")"
    [[ "$(curl -gs -o /dev/null -w '%{http_code}' -H "If-None-Match: ${ETAG[$server]}" "${BASE[$server]}/v1/products")" == 304 ]] ||
        die "$server does not answer 304 to its own ETag"
done
CATALOG_BYTES="$(stat -c %s "$ROOT/v1/products")"
CATALOG_GZIP_BYTES="$(stat -c %s "$ROOT/v1/products.gz")"
log "servers ready: ${SERVERS[*]} nginx; catalog $CATALOG_BYTES bytes ($CATALOG_GZIP_BYTES gzip)"

# ---------------------------------------------------------------------------------------------- measure
declare -A RES
RSS_LOG="$WORK_DIR/rss.log"
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"

# cpu_ticks pid — user and system CPU time (clock ticks) of a server so far: the process's own for Kiosk, the
# master's and its workers' for nginx.
cpu_ticks() {
    local pids=("$1") pid user=0 system=0 fields
    pids+=($(pgrep -P "$1" || true))
    for pid in "${pids[@]}"; do
        fields="$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null)" || continue
        read -r -a stat <<<"$fields"
        user=$((user + stat[11])); system=$((system + stat[12]))
    done
    echo "$user $system"
}
TICK_US=$((1000000 / $(getconf CLK_TCK)))

# run server row connections target [header…] — one wrk run; fills RES[row,server,*].
run() {
    local server=$1 row=$2 connections=$3 target=$4
    shift 4
    local headers=() header
    for header in "$@"; do headers+=(-H "$header"); done
    local pid="${PID[$server]}" sampler="" out="$WORK_DIR/wrk.$row.$server"
    if [[ $server != nginx ]]; then
        RES[$row,$server,rss_before]="$(status_kib "$pid" VmRSS)"
        echo 5 >"/proc/$pid/clear_refs" 2>/dev/null || true
        : >"$RSS_LOG"
        (while kill -0 "$pid" 2>/dev/null; do status_kib "$pid" VmRSS >>"$RSS_LOG"; sleep 0.2; done) &
        sampler=$!
    fi
    local cpu_before cpu_after
    cpu_before="$(cpu_ticks "$pid")"
    wrk -t2 -c"$connections" -d"${DURATION}s" --timeout 30s -s "$WRK_LUA" "${headers[@]}" "$target" >"$out" 2>&1 ||
        { cat "$out" >&2; die "wrk failed ($row $server)"; }
    cpu_after="$(cpu_ticks "$pid")"
    if [[ -n "$sampler" ]]; then
        kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
        local hwm sampled
        hwm="$(status_kib "$pid" VmHWM)"
        sampled="$(awk 'BEGIN {m = 0} $1 > m {m = $1} END {print m}' "$RSS_LOG")"
        RES[$row,$server,rss_peak]="$(( hwm > sampled ? hwm : sampled ))"
    fi
    local result kv
    result="$(grep '^BENCH_RESULT' "$out")" || { cat "$out" >&2; die "no wrk summary ($row $server)"; }
    local -A f=()
    for kv in ${result#BENCH_RESULT }; do f[${kv%%=*}]="${kv#*=}"; done
    RES[$row,$server,mibs]="$(awk -v b="${f[bytes]}" -v d="${f[duration_us]}" 'BEGIN {printf "%.1f", b / 1048576 / (d / 1e6)}')"
    RES[$row,$server,rps]="$(awk -v r="${f[requests]}" -v d="${f[duration_us]}" 'BEGIN {printf "%.0f", r / (d / 1e6)}')"
    RES[$row,$server,errors]="$((f[err_connect] + f[err_read] + f[err_write] + f[err_status] + f[err_timeout]))"
    RES[$row,$server,p99]="$(awk -v u="${f[lat_p99_us]}" 'BEGIN {printf "%.0f", u / 1000}')"
    read -r RES[$row,$server,cpu_user] RES[$row,$server,cpu_system] < <(awk -v b="$cpu_before" -v a="$cpu_after" \
        -v r="${f[requests]}" -v t="$TICK_US" 'BEGIN {split(b, x, " "); split(a, y, " ");
            printf "%.1f %.1f\n", (y[1] - x[1]) * t / r, (y[2] - x[2]) * t / r}')
    log "  $row $server: ${RES[$row,$server,rps]} req/s, ${RES[$row,$server,mibs]} MiB/s, ${RES[$row,$server,errors]} errors, p99 ${RES[$row,$server,p99]} ms${RES[$row,$server,rss_peak]:+, peak RSS $(kib_to_mib "${RES[$row,$server,rss_peak]}") MiB (before $(kib_to_mib "${RES[$row,$server,rss_before]}"))}"
    sleep 2   # let the connections close before the next run
}

# aggregate row — RES[row,server,*] from the rounds RES[row.N,server,*]: median MiB/s and req/s, summed errors,
# and the memory of the round whose peak grew most over its start.
median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else printf "%.1f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
aggregate() {
    local row=$1 server round best grown most
    for server in "${SERVERS[@]}" nginx; do
        for field in mibs rps p99 cpu_user cpu_system; do
            RES[$row,$server,$field]="$(for round in $(seq 1 "$ROUNDS"); do echo "${RES[$row.$round,$server,$field]:-0}"; done | median)"
        done
        RES[$row,$server,errors]=0
        RES[$row,$server,runs]=""
        most=-1
        for round in $(seq 1 "$ROUNDS"); do
            RES[$row,$server,errors]=$((RES[$row,$server,errors] + ${RES[$row.$round,$server,errors]:-0}))
            RES[$row,$server,runs]+="${RES[$row,$server,runs]:+ }$(measure "$row.$round" "$server")"
            [[ $server == nginx ]] && continue
            grown=$((${RES[$row.$round,$server,rss_peak]:-0} - ${RES[$row.$round,$server,rss_before]:-0}))
            if ((grown > most)); then most=$grown; best=$round; fi
        done
        if [[ $server != nginx ]]; then
            RES[$row,$server,rss_peak]="${RES[$row.$best,$server,rss_peak]}"
            RES[$row,$server,rss_before]="${RES[$row.$best,$server,rss_before]}"
        fi
    done
}
measure() { # row server → the figure compared: MiB/s for the file rows, req/s otherwise
    if [[ $1 == file-* ]]; then echo "${RES[$1,$2,mibs]}"; else echo "${RES[$1,$2,rps]}"; fi
}

ROWS=()
for connections in $CONNECTION_ROWS; do
    row="file-$connections"
    ROWS+=("$row")
    log "row $row: wrk -c$connections, the granted 1 MiB file ($ROUNDS rounds, Kiosk restarted before each)"
    for round in $(seq 1 "$ROUNDS"); do
        start_kiosks
        for server in "${SERVERS[@]}" nginx; do
            # A second of a few connections first: what serving costs once (the first allocations of each event
            # loop's thread, caches filled on first use) is not counted per connection.
            wrk -t1 -c16 -d1s "${BASE[$server]}${PATH_OF[$server]}" >/dev/null 2>&1 || die "warm-up failed ($server)"
            run "$server" "$row.$round" "$connections" "${BASE[$server]}${PATH_OF[$server]}"
        done
    done
    aggregate "$row"
done
ROWS+=(catalog-304 healthz catalog-gzip)
log "row catalog-304: wrk -c$SMALL_CONNECTIONS, If-None-Match ($ROUNDS rounds)"
for round in $(seq 1 "$ROUNDS"); do
    for server in "${SERVERS[@]}" nginx; do
        run "$server" "catalog-304.$round" "$SMALL_CONNECTIONS" "${BASE[$server]}/v1/products" "If-None-Match: ${ETAG[$server]}"
    done
done
aggregate catalog-304
log "row healthz: wrk -c$SMALL_CONNECTIONS, GET /healthz (nginx: its static 304 of the row before)"
for round in $(seq 1 "$ROUNDS"); do
    for server in "${SERVERS[@]}"; do run "$server" "healthz.$round" "$SMALL_CONNECTIONS" "${BASE[$server]}/healthz"; done
    for field in mibs rps p99 errors cpu_user cpu_system; do RES[healthz.$round,nginx,$field]="${RES[catalog-304.$round,nginx,$field]}"; done
done
aggregate healthz
log "row catalog-gzip: wrk -c$SMALL_CONNECTIONS, the whole catalog with Accept-Encoding: gzip ($ROUNDS rounds)"
for round in $(seq 1 "$ROUNDS"); do
    for server in "${SERVERS[@]}" nginx; do
        run "$server" "catalog-gzip.$round" "$SMALL_CONNECTIONS" "${BASE[$server]}/v1/products" "Accept-Encoding: gzip"
    done
done
aggregate catalog-gzip
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
for server in "${SERVERS[@]}"; do kill -0 "${PID[$server]}" 2>/dev/null || die "$server died during the runs"; done

# ---------------------------------------------------------------------------------------------- report
declare -A TITLE=([catalog-304]="catalog 304, -c$SMALL_CONNECTIONS" [healthz]="/healthz, -c$SMALL_CONNECTIONS (nginx: static 304)"
    [catalog-gzip]="catalog of $PRODUCTS products, gzip, -c$SMALL_CONNECTIONS")
declare -A TARGET=([catalog-304]=0.5 [healthz]=0.5 [catalog-gzip]=0.8)
for connections in $CONNECTION_ROWS; do
    TITLE[file-$connections]="$connections connections, 1 MiB file"; TARGET[file-$connections]=1.0
done
per_connection() { # row server → KiB per connection while the row ran
    local connections="${1#file-}"
    awk -v p="${RES[$1,$2,rss_peak]}" -v b="${RES[$1,$2,rss_before]}" -v c="$connections" \
        'BEGIN {printf "%.1f", (p - b) / c}'
}
{
    echo "# Launch-day spike: Kiosk and nginx, $(date -u '+%Y-%m-%d %H:%M UTC')${LABEL:+ ($LABEL)}"
    echo
    echo "Machine: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) CPUs, $(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo);" \
        "load average $LOAD_BEFORE before the runs, $LOAD_AFTER after (wrk shares the CPUs)."
    echo "Kiosk: \`${KIOSK_BIN#"$REPO_ROOT"/}\`, embedded default (SQLite, sandbox store, no offload), one event loop per CPU ($(nproc));" \
        "${BEFORE_BIN:+before: \`$BEFORE_BIN\` ($BEFORE_LABEL); }nginx $("$NGINX_BIN" -v 2>&1 | sed 's/^nginx version: nginx\///'), $WORKERS workers." \
        "No access log on either side. wrk $(wrk -v 2>&1 | head -1 | awk '{print $2}'), -t2, ${DURATION} s a run, --timeout 30s."
    echo "Catalog: $((PRODUCTS + $(find "$REPO_ROOT/content" -name Info.json | wc -l) + 1)) products, $CATALOG_BYTES bytes of JSON, $CATALOG_GZIP_BYTES gzip."
    echo
    header="| row | Kiosk |"; rule="|---|---:|"
    [[ -n "$BEFORE_BIN" ]] && { header+=" before |"; rule+="---:|"; }
    header+=" nginx | Kiosk/nginx |"; rule+="---:|---:|"
    [[ -n "$BEFORE_BIN" ]] && { header+=" before/nginx |"; rule+="---:|"; }
    header+=" target | result | Kiosk peak RSS | per connection |"; rule+="---|---|---:|---:|"
    [[ -n "$BEFORE_BIN" ]] && { header+=" before: peak, per connection |"; rule+="---:|"; }
    header+=" errors K/n |"; rule+="---|"
    echo "$header"; echo "$rule"
    for row in "${ROWS[@]}"; do
        unit="req/s"; [[ $row == file-* ]] && unit="MiB/s"
        k="$(measure "$row" kiosk)"; n="$(measure "$row" nginx)"; r="$(ratio "$k" "$n")"
        line="| ${TITLE[$row]} ($unit) | $k |"
        [[ -n "$BEFORE_BIN" ]] && line+=" $(measure "$row" before) |"
        line+=" $n | $r |"
        [[ -n "$BEFORE_BIN" ]] && line+=" $(ratio "$(measure "$row" before)" "$n") |"
        line+=" ≥ ${TARGET[$row]}× | $(at_least "$r" "${TARGET[$row]}") |"
        if [[ $row == file-* ]]; then
            pc="$(per_connection "$row" kiosk)"
            line+=" $(kib_to_mib "${RES[$row,kiosk,rss_peak]}") MiB | $pc KiB ($(below "$pc" 12.01) ≤ 12) |"
            [[ -n "$BEFORE_BIN" ]] && line+=" $(kib_to_mib "${RES[$row,before,rss_peak]}") MiB, $(per_connection "$row" before) KiB |"
        else
            line+=" | |"
            [[ -n "$BEFORE_BIN" ]] && line+=" |"
        fi
        line+=" ${RES[$row,kiosk,errors]}/${RES[$row,nginx,errors]} |"
        echo "$line"
    done
    echo
    echo "Throughput: the median of $ROUNDS rounds (the servers take turns in each); every round's figure:"
    echo
    for row in "${ROWS[@]}"; do
        echo "- ${TITLE[$row]}: Kiosk ${RES[$row,kiosk,runs]}${BEFORE_BIN:+; before ${RES[$row,before,runs]}}; nginx ${RES[$row,nginx,runs]}"
    done
    echo
    echo "CPU time per request (µs, user + system, the median of the rounds; from \`/proc/PID/stat\`, the server's" \
        "own processes only, not wrk's; nginx: the master and its workers):"
    echo
    echo "| row | Kiosk |${BEFORE_BIN:+ before |} nginx |"
    echo "|---|---:|${BEFORE_BIN:+---:|}---:|"
    cpu() { echo "${RES[$1,$2,cpu_user]} + ${RES[$1,$2,cpu_system]}"; }
    for row in "${ROWS[@]}"; do
        echo "| ${TITLE[$row]} | $(cpu "$row" kiosk) |${BEFORE_BIN:+ $(cpu "$row" before) |} $(cpu "$row" nginx) |"
    done
    echo
    echo "Per connection: (peak VmRSS during the run − VmRSS before it, after a 1 s warm-up with 16 connections) / connections, the largest of the rounds (Kiosk" \
        "is restarted before each); the peak is the larger of VmHWM (reset with \`clear_refs\` before the run) and" \
        "VmRSS sampled every 0.2 s. Kernel socket buffers are not in it, for either server."
    echo
    echo "nginx configuration (\`scripts/bench/nginx-spike.conf\`, as run):"
    echo
    echo '```nginx'
    cat "$NGINX_DIR/nginx.conf"
    echo '```'
} | tee "$WORK_DIR/spike.md"
mkdir -p "$(dirname "$OUT_FILE")"
cp "$WORK_DIR/spike.md" "$OUT_FILE"
log "wrote $OUT_FILE"
