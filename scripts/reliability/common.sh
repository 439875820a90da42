# Shared by the reliability and benchmark scripts (source it; do not run it): tools, the release build, content,
# start/stop of Kiosk and nginx, grants, and /proc readings. Conventions: a release build in .build-release
# (KIOSK_BIN skips it), logs on stderr, everything on 127.0.0.1, and a cleanup trap (`trap cleanup EXIT`) that stops
# every process started here and removes the temporary folder.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LOG_TAG="${LOG_TAG:-reliability}"
BUILD_RETRIES="${RELIABILITY_BUILD_RETRIES:-3}"

log() { printf '[%s %s] %s\n' "$LOG_TAG" "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

WORK_DIR=""
KIOSK_PID=""
NGINX_PID=""
EXTRA_PIDS=()

# stop_process pid [signal] — sends the signal (TERM by default), waits up to 5 s, then kills the process.
stop_process() {
    [[ -n "$1" ]] && kill -0 "$1" 2>/dev/null || return 0
    kill "-${2:-TERM}" "$1" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}

cleanup() {
    local status=$?
    set +e
    for pid in "${EXTRA_PIDS[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
    stop_process "$KIOSK_PID"
    stop_process "$NGINX_PID" QUIT   # graceful: the master stops its workers
    [[ -n "$WORK_DIR" && -d "$WORK_DIR" ]] && rm -rf "$WORK_DIR"
    exit "$status"
}

# trap_cleanup — runs cleanup when the script ends, however it ends (Ctrl-C: status 130, TERM: 143).
trap_cleanup() {
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# require_tools tool… — installs missing ones with apt-get (package name = tool name, except ss → iproute2,
# aria2c → aria2 and time → GNU time in /usr/bin/time).
require_tools() {
    local missing=() tool
    for tool in "$@"; do
        case "$tool" in
        nginx) command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || missing+=(nginx) ;;
        time) [[ -x /usr/bin/time ]] || missing+=(time) ;;
        ss) command -v ss >/dev/null || missing+=(iproute2) ;;
        aria2c) command -v aria2c >/dev/null || missing+=(aria2) ;;
        *) command -v "$tool" >/dev/null || missing+=("$tool") ;;
        esac
    done
    ((${#missing[@]})) || return 0
    local sudo=""
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || die "not root and no sudo: install ${missing[*]} yourself"
        sudo="sudo"
    fi
    log "installing ${missing[*]}"
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "${missing[@]}"
}

# build_kiosk — sets KIOSK_BIN (a release build in .build-release unless KIOSK_BIN is set already).
build_kiosk() {
    cd "$REPO_ROOT"
    if [[ -n "${KIOSK_BIN:-}" ]]; then
        [[ -x "$KIOSK_BIN" ]] || die "KIOSK_BIN=$KIOSK_BIN is not executable"
        log "using KIOSK_BIN=$KIOSK_BIN (no build)"
        return
    fi
    local attempt=1
    until log "building kiosk (release, .build-release), attempt $attempt" &&
        swift build -c release --product kiosk --scratch-path .build-release >&2; do
        ((attempt < BUILD_RETRIES)) || die "the release build failed $attempt times"
        log "build failed (someone may be mid-edit); retrying in 90 s"
        sleep 90
        attempt=$((attempt + 1))
    done
    KIOSK_BIN="$(swift build -c release --product kiosk --scratch-path .build-release --show-bin-path)/kiosk"
}

# make_work_dir [parent] — a temporary folder (in /tmp unless `parent` is given) with content/ (a copy of the sample
# catalog) and data/.
make_work_dir() {
    WORK_DIR="$(mktemp -d "${1:-/tmp}/kiosk-$LOG_TAG.XXXXXX")"
    CONTENT_DIR="$WORK_DIR/content"
    DATA_DIR="$WORK_DIR/data"
    mkdir -p "$DATA_DIR"
    cp -R "$REPO_ROOT/content" "$CONTENT_DIR"
}

# make_disk_work_dir — make_work_dir under BENCH_DIR (default /var/tmp), refusing tmpfs, where fsync costs nothing;
# logs `df -T` of it and keeps its line in DF_LINE.
make_disk_work_dir() {
    make_work_dir "${BENCH_DIR:-/var/tmp}"
    DF_LINE="$(df -T "$WORK_DIR" | tail -1)"
    log "work folder $WORK_DIR on: $DF_LINE"
    df -T "$WORK_DIR" >&2
    [[ "$(awk '{print $2}' <<<"$DF_LINE")" != tmpfs ]] || die "$WORK_DIR is on tmpfs: set BENCH_DIR to a folder on a disk"
}

# make_product id file mib [title] — a non-consumable product with one file of random bytes, version "1".
make_product() {
    mkdir -p "$CONTENT_DIR/$1/Contents"
    cat >"$CONTENT_DIR/$1/Info.json" <<JSON
{"product_id": "$1", "type": "non_consumable", "title": "${4:-Generated $1}", "content_version": "1"}
JSON
    head -c "$(($3 * 1024 * 1024))" /dev/urandom >"$CONTENT_DIR/$1/Contents/$2"
}

# start_kiosk [serve options…] — starts Kiosk on an ephemeral port; sets KIOSK_PID and KIOSK_BASE.
start_kiosk() {
    # Emptied here, not only by the redirection below: that runs in the child, which a quick read of an earlier
    # run's address could beat.
    : >"$WORK_DIR/kiosk.out"
    "$KIOSK_BIN" serve --host 127.0.0.1 --port 0 --content "$CONTENT_DIR" --data "$DATA_DIR" --reload-interval 0 \
        --log-level warning "$@" >"$WORK_DIR/kiosk.out" 2>"$WORK_DIR/kiosk.err" &
    KIOSK_PID=$!
    wait_listening kiosk
    KIOSK_PORT="${KIOSK_BASE##*:}"
    log "kiosk pid $KIOSK_PID at $KIOSK_BASE"
}

# post_json url json — POSTs a JSON body and prints the answer (fails on HTTP errors).
# wait_listening NAME — waits (up to 2 minutes) for KIOSK_PID to print `Kiosk listening on URL` into
# $WORK_DIR/NAME.out; KIOSK_BASE is that URL. Dies with NAME.err when it exits or never says.
wait_listening() {
    KIOSK_BASE=""
    local line
    for _ in $(seq 1 1200); do
        if line="$(grep -m1 -o 'Kiosk listening on http://[^[:space:]]*' "$WORK_DIR/$1.out" 2>/dev/null)"; then
            KIOSK_BASE="${line#Kiosk listening on }"
            return
        fi
        kill -0 "$KIOSK_PID" 2>/dev/null || { cat "$WORK_DIR/$1.err" >&2; die "$1 exited during startup"; }
        sleep 0.1
    done
    cat "$WORK_DIR/$1.err" >&2
    die "$1 did not print its address"
}

# start_bench FOLDER — `kiosk bench FOLDER` on a free loopback port with seed 7 (KIOSK_PID; BASE: its address).
start_bench() {
    : >"$WORK_DIR/bench.out"
    "$KIOSK_BIN" bench "$1" --port 0 --seed 7 --log-level warning >"$WORK_DIR/bench.out" 2>"$WORK_DIR/bench.err" &
    KIOSK_PID=$!
    wait_listening bench
    BASE="$KIOSK_BASE"
}

# debug_kiosk — KIOSK_BIN when set, else the debug build of kiosk, built now (a no-op when it is up to date).
debug_kiosk() {
    cd "$REPO_ROOT"
    [[ -z "${KIOSK_BIN:-}" ]] || return 0
    log "building kiosk (debug)"
    swift build --product kiosk >&2
    KIOSK_BIN="$(swift build --show-bin-path)/kiosk"
}

post_json() { curl -sS --fail-with-body -H 'Content-Type: application/json' --data "$2" "$1"; }

# grant product_id — buys the product in the sandbox store and asks for a grant; sets GRANT_RECEIPT, GRANT_TOKEN,
# GRANT_URL (the first file's URL path), GRANT_PATH (the same with ?token=), GRANT_LENGTH (its length) and GRANT_BODY
# (the whole answer).
grant() {
    local body
    GRANT_RECEIPT="$(post_json "$KIOSK_BASE/sandbox/purchases" "$(jq -nc --arg p "$1" '{product_id: $p, quantity: 1}')" |
        jq -er '."receipt-data"')" || die "purchase of $1 failed"
    body="$(post_json "$KIOSK_BASE/v1/downloads" \
        "$(jq -nc --arg r "$GRANT_RECEIPT" --arg p "$1" --arg i "$LOG_TAG" '{"receipt-data": $r, product_id: $p, installation_id: $i}')")" ||
        die "grant of $1 failed: $body"
    GRANT_BODY="$body"
    GRANT_TOKEN="$(jq -er '.token' <<<"$body")"
    GRANT_URL="$(jq -er '.files[0].url' <<<"$body")"
    GRANT_PATH="$GRANT_URL?token=$(jq -er '.token | @uri' <<<"$body")"
    GRANT_LENGTH="$(jq -er '.files[0].length' <<<"$body")"
}

# reload_count — the number of "catalog loaded" lines in Kiosk's log (start_kiosk with --log-level info).
reload_count() { grep -c 'catalog loaded' "$WORK_DIR/kiosk.err" || true; }
# last_reload_seconds — the duration of the newest "catalog loaded" line of Kiosk's log.
last_reload_seconds() {
    grep 'catalog loaded' "$WORK_DIR/kiosk.err" | tail -1 | grep -o 'duration=[0-9.e+-]* seconds' |
        awk -F'[= ]' '{printf "%.3f", $2}'
}
# sighup_reload — sends SIGHUP to Kiosk and prints the seconds of the reload it triggers.
sighup_reload() {
    local before; before="$(reload_count)"
    kill -HUP "$KIOSK_PID"
    for _ in $(seq 1 600); do
        (($(reload_count) > before)) && { last_reload_seconds; return; }
        sleep 0.05
    done
    die "no reload after SIGHUP"
}

# free_port — a TCP port no socket uses at the moment, below the kernel's ephemeral range: a port in that range may
# be taken by a client connection (thousands of them in a load run) between the check and the server's bind.
free_port() {
    local port low
    low="$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)"
    ((low > 11000)) || low=32768
    for _ in $(seq 1 200); do
        port=$((10000 + RANDOM % (low - 10000)))
        ss -Htan "sport = :$port" | grep -q . || { echo "$port"; return; }
    done
    die "no free port found"
}

# write_nginx_conf dir http-body — writes dir/nginx.conf: Debian's nginx in the foreground with its pid, logs and temp
# folders in `dir`, sendfile on, no access log, and `http-body` (server blocks, includes) inside its http block.
write_nginx_conf() {
    mkdir -p "$1/tmp"
    cat >"$1/nginx.conf" <<CONF
worker_processes auto;
daemon off;
pid $1/nginx.pid;
error_log $1/error.log warn;
events { worker_connections 1024; }
http {
    sendfile on;
    tcp_nopush on;
    access_log off;
    keepalive_requests 100000;
    keepalive_timeout 60s;
    client_body_temp_path $1/tmp/body;
    proxy_temp_path $1/tmp/proxy;
    fastcgi_temp_path $1/tmp/fastcgi;
    uwsgi_temp_path $1/tmp/uwsgi;
    scgi_temp_path $1/tmp/scgi;
    default_type application/octet-stream;
    $2
}
CONF
}

# start_nginx root [http-directives] — Debian's nginx (write_nginx_conf) serving the folder `root` on 127.0.0.1;
# sets NGINX_PID, NGINX_BASE and NGINX_BIN. Its workers run as nobody, so the work folder is made readable to all.
start_nginx() {
    local dir="$WORK_DIR/nginx" port
    NGINX_BIN="$(command -v nginx || echo /usr/sbin/nginx)"
    chmod -R a+rX "$WORK_DIR"
    port="$(free_port)"
    write_nginx_conf "$dir" "${2:-}
    server {
        listen 127.0.0.1:$port;
        root $1;
    }"
    log "starting nginx on 127.0.0.1:$port"
    "$NGINX_BIN" -e "$dir/error.log" -p "$dir" -c "$dir/nginx.conf" &
    NGINX_PID=$!
    NGINX_BASE="http://127.0.0.1:$port"
    for _ in $(seq 1 100); do
        curl -s -o /dev/null "$NGINX_BASE/" && return
        kill -0 "$NGINX_PID" 2>/dev/null || { cat "$dir/error.log" >&2; die "nginx exited"; }
        sleep 0.1
    done
    die "nginx did not answer"
}

# now — seconds since 1970 with nanoseconds; seconds_since start — seconds elapsed since `now` gave start.
now() { date +%s.%N; }
seconds_since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.2f", b - a}'; }
# ratio a b — a / b to two decimals ("n/a" when b is 0); at_least / below value target — PASS or MISS.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}'; }
at_least() { awk -v v="$1" -v t="$2" 'BEGIN {print (v + 0 >= t + 0) ? "PASS" : "MISS"}'; }
below() { awk -v v="$1" -v t="$2" 'BEGIN {print (v + 0 < t + 0) ? "PASS" : "MISS"}'; }

fd_count() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# fd_count_under pid dir — the process's descriptors open on files under dir (for Kiosk and the content folder: the
# files its open-file cache keeps open on purpose, one per file served at most); fd_count_elsewhere pid dir — the
# others (connections, the database, logs), which must return to their baseline.
fd_targets() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 -printf '%l\n' 2>/dev/null; }
fd_count_under() { fd_targets "$1" | awk -v d="$2/" 'index($0, d) == 1' | wc -l; }
fd_count_elsewhere() { fd_targets "$1" | awk -v d="$2/" 'index($0, d) != 1' | wc -l; }
status_kib() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }
kib_to_mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

# wait_for_fds pid target seconds [dir] — polls until the process has at most target descriptors (with dir: at most
# target outside dir, see fd_count_elsewhere); prints the count.
wait_for_fds() {
    local count
    for _ in $(seq 1 $(($3 * 10))); do
        if [[ -n "${4:-}" ]]; then count="$(fd_count_elsewhere "$1" "$4")"; else count="$(fd_count "$1")"; fi
        ((count <= $2)) && break
        sleep 0.1
    done
    echo "$count"
}

# healthz_ms — the time of one GET /healthz in milliseconds ("fail" when it does not answer 200 within 5 s).
healthz_ms() {
    curl -sS -o /dev/null --max-time 5 -w '%{http_code} %{time_total}' "$KIOSK_BASE/healthz" 2>/dev/null |
        awk '$1 == 200 {printf "%d", $2 * 1000; ok = 1} END {if (!ok) printf "fail"}'
}
