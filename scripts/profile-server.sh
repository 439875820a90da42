#!/usr/bin/env bash
# Profiles Kiosk's server under the loads of a launch-day spike (#32): where the CPU time goes, how many system calls
# a request costs, and how much memory an open connection holds. It measures; it judges nothing.
#
#   scripts/profile-server.sh          # from the repository root
#
# What it does (all traffic on 127.0.0.1), with a release `kiosk` (.build-release, or KIOSK_BIN):
#   1. a content folder with one 1 MiB file product; `kiosk serve` (SQLite, the sandbox store, no offload); a grant;
#   2. for each scenario — `file`: wrk with PROFILE_CONNECTIONS (2,000) keep-alive connections on the granted 1 MiB
#      file; `304`: wrk -c16 on `GET /v1/products` with its own `If-None-Match`; `healthz`: wrk -c16 on `/healthz` —
#      a CPU profile of the server process (`perf record -e cpu-clock -g`, a software clock, which works where the
#      hardware counters are not supported) over PROFILE_SECONDS, and its top PROFILE_TOP symbols by self time;
#   3. system calls per request: `strace -c -f` on the server during a short wrk run of each small answer, divided
#      by the requests wrk completed (strace slows the server; the counts, not the rate, are the figure);
#   4. memory per connection, before the loads: the server's VmRSS before and while PROFILE_IDLE (2,000) idle
#      keep-alive connections are open (each has sent one request and read its answer), divided by their count
#      (scripts/bench/connection-memory.sh splits a busy connection's heap by what allocated it);
#   5. prints everything, with the machine's CPU model, cores and load, and writes it to PROFILE_OUT.
#
# Environment knobs: PROFILE_SECONDS (10), PROFILE_CONNECTIONS (2000), PROFILE_IDLE (2000), PROFILE_TOP (25),
# PROFILE_OUT (bench-out/profile.md), KIOSK_BIN, PROFILE_KEEP (a folder the perf recordings are copied to).
set -euo pipefail

SECONDS_PER_PROFILE="${PROFILE_SECONDS:-10}"
CONNECTIONS="${PROFILE_CONNECTIONS:-2000}"
IDLE="${PROFILE_IDLE:-2000}"
TOP="${PROFILE_TOP:-25}"
OUT_FILE="${PROFILE_OUT:-bench-out/profile.md}"
LOG_TAG="profile"
PRODUCT="com.example.profile.small"

# shellcheck source=reliability/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/reliability/common.sh"

trap_cleanup

require_tools wrk curl jq perf strace python3
build_kiosk
make_work_dir
make_product "$PRODUCT" small.bin 1 "Profile payload"
# Enough descriptors for the connections of both sides (raised as far as the hard limit allows).
ulimit -n "$(ulimit -Hn)"
(( $(ulimit -n) > CONNECTIONS + IDLE + 100 )) || die "ulimit -n $(ulimit -n) is too low for $CONNECTIONS connections"
start_kiosk
grant "$PRODUCT"
FILE_URL="$KIOSK_BASE$GRANT_URL"
ETAG="$(curl -sI "$KIOSK_BASE/v1/products" | tr -d '\r' | awk 'tolower($1) == "etag:" { print $2 }')"
[[ -n "$ETAG" ]] || die "the catalog answered no ETag"

exec > >(tee "$WORK_DIR/report.md") 2>&1
echo "# Kiosk server profile ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
echo
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "kiosk: $KIOSK_BIN ($(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo

# scenario_wrk name connections duration target [header…] — wrk on target; prints wrk's summary lines.
scenario_wrk() {
    local connections=$2 duration=$3 target=$4
    shift 4
    local headers=()
    for header in "$@"; do headers+=(-H "$header"); done
    wrk -t2 -c"$connections" -d"${duration}s" --timeout 30s "${headers[@]}" "$target" 2>&1 |
        grep -E "Requests/sec|Transfer/sec|requests in|Socket errors|Non-2xx"
}

# profile name connections target [header…] — wrk for PROFILE_SECONDS + 4 s while perf samples the server.
profile() {
    local name=$1 connections=$2 target=$3
    shift 3
    echo "## $name: wrk -c$connections, perf record -e cpu-clock -g over ${SECONDS_PER_PROFILE}s"
    echo
    scenario_wrk "$name" "$connections" $((SECONDS_PER_PROFILE + 4)) "$target" "$@" >"$WORK_DIR/$name.wrk" &
    local wrk_pid=$!
    sleep 2
    perf record -q -e cpu-clock -F 999 -g -p "$KIOSK_PID" -o "$WORK_DIR/$name.perf" -- sleep "$SECONDS_PER_PROFILE" \
        >/dev/null 2>&1
    wait "$wrk_pid"
    echo '```'
    cat "$WORK_DIR/$name.wrk"
    echo '```'
    echo
    echo "Top $TOP symbols by self time (% of the server's samples):"
    echo
    echo '```'
    perf report -i "$WORK_DIR/$name.perf" --no-children --sort symbol --stdio 2>/dev/null |
        grep -E '^ +[0-9]+\.[0-9]+%' | cut -c1-150 | head -n "$TOP" || true
    echo '```'
    echo
    echo "By shared object:"
    echo
    echo '```'
    perf report -i "$WORK_DIR/$name.perf" --no-children --sort dso --stdio 2>/dev/null |
        grep -E '^ +[0-9]+\.[0-9]+%' | head -n 12 || true
    echo '```'
    echo
    echo "Top $TOP symbols in user space (the server's code, the Swift runtime and libc; % of the server's samples),"
    echo "and who calls into the runtime most (callers' share of the samples, children included):"
    echo
    echo '```'
    perf report -i "$WORK_DIR/$name.perf" --no-children --sort symbol --stdio \
        --dsos "$(basename "$KIOSK_BIN"),libswiftCore.so,libc.so.6,libswift_Concurrency.so" 2>/dev/null |
        grep -E '^ +[0-9]+\.[0-9]+%' | cut -c1-150 | head -n "$TOP" || true
    echo
    perf report -i "$WORK_DIR/$name.perf" --children --sort symbol --stdio -g none \
        --dsos "$(basename "$KIOSK_BIN")" 2>/dev/null |
        grep -E '^ +[0-9]+\.[0-9]+%' | cut -c1-150 | head -n "$TOP" || true
    echo '```'
    echo
    if [[ -n "${PROFILE_KEEP:-}" ]]; then cp "$WORK_DIR/$name.perf" "$PROFILE_KEEP/"; fi
}

# syscalls name target [header…] — strace -c on the server during a 5 s wrk -c16 run; calls per request.
syscalls() {
    local name=$1 target=$2
    shift 2
    strace -c -f -q -p "$KIOSK_PID" -o "$WORK_DIR/$name.strace" &
    local strace_pid=$!
    sleep 1
    local requests
    requests="$(scenario_wrk "$name" 16 5 "$target" "$@" | awk '/requests in/ { print $1 }')"
    kill -INT "$strace_pid"
    wait "$strace_pid" 2>/dev/null || true
    echo "### $name: system calls per request ($requests requests under strace)"
    echo
    echo '```'
    python3 - "$WORK_DIR/$name.strace" "$requests" <<'PY'
import sys
path, requests = sys.argv[1], max(1, int(sys.argv[2] or 1))
rows = []
for line in open(path):
    parts = line.split()
    if len(parts) >= 5 and parts[0].replace('.', '', 1).isdigit() and parts[-1] not in ("total",):
        calls = int(parts[3])
        rows.append((calls, parts[-1]))
rows.sort(reverse=True)
total = sum(calls for calls, _ in rows)
print(f"{total / requests:8.2f}  all calls")
for calls, name in rows[:10]:
    print(f"{calls / requests:8.2f}  {name}")
PY
    echo '```'
    echo
}

# First, on the server that has served only the grant: after the loads below its heap has room to spare, and the
# idle connections would fit in it.
echo "## Memory per open connection"
echo
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$KIOSK_PID/status"; }
before="$(rss_kib)"
python3 - "$KIOSK_BASE" "$IDLE" "$WORK_DIR/idle.ready" <<'PY' &
import socket, sys, time, urllib.parse
base, count, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
url = urllib.parse.urlparse(base)
sockets = []
for _ in range(count):
    s = socket.create_connection((url.hostname, url.port))
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
        data += s.recv(4096)
    sockets.append(s)
open(ready, "w").close()
time.sleep(20)
PY
idle_pid=$!
for _ in $(seq 1 600); do [[ -e "$WORK_DIR/idle.ready" ]] && break; sleep 0.1; done
[[ -e "$WORK_DIR/idle.ready" ]] || die "the idle connections did not open"
sleep 2
during="$(rss_kib)"
kill "$idle_pid" 2>/dev/null || true
wait "$idle_pid" 2>/dev/null || true
echo '```'
echo "VmRSS before: $before KiB; with $IDLE idle keep-alive connections: $during KiB"
echo "per connection: $(( (during - before) * 1024 / IDLE )) bytes"
echo '```'
echo

profile "file-$CONNECTIONS" "$CONNECTIONS" "$FILE_URL" "Authorization: Bearer $GRANT_TOKEN"
profile "catalog-304" 16 "$KIOSK_BASE/v1/products" "If-None-Match: $ETAG"
profile "healthz" 16 "$KIOSK_BASE/healthz"

echo "## System calls per request"
echo
syscalls "catalog-304" "$KIOSK_BASE/v1/products" "If-None-Match: $ETAG"
syscalls "healthz" "$KIOSK_BASE/healthz"
syscalls "file-1MiB" "$FILE_URL" "Authorization: Bearer $GRANT_TOKEN"


# A relative PROFILE_OUT is under the repository; an absolute one where it says.
[[ "$OUT_FILE" == /* ]] || OUT_FILE="$REPO_ROOT/$OUT_FILE"
mkdir -p "$(dirname "$OUT_FILE")"
cp "$WORK_DIR/report.md" "$OUT_FILE"
log "written to $OUT_FILE"
