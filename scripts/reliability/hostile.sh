#!/usr/bin/env bash
# Hostile clients against a release build of Kiosk, heavier than the Swift end-to-end suite
# (Tests/EndToEndTests/HostileClientTests.swift): hundreds of connections at once, each scenario checked from the
# server's side (its open descriptors) and from a normal client's (GET /healthz latency).
#
#   scripts/reliability/hostile.sh
#
# Scenarios (all on 127.0.0.1, Kiosk started with --idle-timeout 2 --request-timeout 3 --send-timeout 3):
#   a. HOSTILE_CONNECTIONS (300) slowloris connections that send half a request head and then nothing;
#   b. the same number dripping a request body one byte a second;
#   c. 50 clients that ask for a 256 MiB file and never read;
#   d. a 100 KiB header, 500 header fields, a Range header of 500 ranges, 300 overlapping ranges.
# For each: /healthz latency meanwhile, Kiosk's descriptors before / at peak / after, and PASS or FAIL; exits 1 on
# any FAIL. The rule: within the timeouts, the descriptors outside the content folder (connections, the database,
# logs) return to their baseline, and those on content files (the open-file cache's, kept open on purpose) are at
# most one per file served (CONTENT_FILES_SERVED): a descriptor leaked per connection fails either way.
#
# Environment knobs: HOSTILE_CONNECTIONS (300), HOSTILE_BIG_MIB (256), KIOSK_BIN (use this binary, skip the build).
set -euo pipefail
LOG_TAG=hostile
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
trap_cleanup
trap '' PIPE   # writing to a connection the server closed must not kill the script

COUNT="${HOSTILE_CONNECTIONS:-300}"
BIG_MIB="${HOSTILE_BIG_MIB:-256}"
require_tools curl jq
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
(($(ulimit -n) > COUNT + 100)) || die "ulimit -n is $(ulimit -n): too low for $COUNT connections"

build_kiosk
make_work_dir
make_product hostile.big big.bin "$BIG_MIB"
start_kiosk --idle-timeout 2 --request-timeout 3 --send-timeout 3
grant hostile.big
BIG_PATH="$GRANT_PATH"
sleep 1
BASELINE="$(fd_count_elsewhere "$KIOSK_PID" "$CONTENT_DIR")"
# The files the scenarios ask for: the big file (the grant only reads the catalog).
CONTENT_FILES_SERVED=1
ROWS=()
VERDICT=PASS

# health_during seconds — /healthz latencies (ms), one a second; raises PEAK to the most descriptors seen meanwhile.
health_during() {
    local out="" count
    for _ in $(seq 1 "$1"); do
        out+="$(healthz_ms) "
        for _ in 1 2 3 4; do
            count="$(fd_count "$KIOSK_PID")"
            ((count > PEAK)) && PEAK="$count"
            sleep 0.25
        done
    done
    HEALTH="$out"
}

# settle name peak health — waits for the descriptors outside the content folder to return to the baseline, checks
# the cached content descriptors, and records a row.
settle() {
    local after cached verdict=PASS
    after="$(wait_for_fds "$KIOSK_PID" "$BASELINE" 12 "$CONTENT_DIR")"
    cached="$(fd_count_under "$KIOSK_PID" "$CONTENT_DIR")"
    ((after <= BASELINE)) || verdict=FAIL
    ((cached <= CONTENT_FILES_SERVED)) || verdict=FAIL
    grep -q fail <<<"$3" && verdict=FAIL
    [[ "$verdict" == PASS ]] || VERDICT=FAIL
    ROWS+=("| $1 | $3| $BASELINE / $2 / $after (+ $cached cached) | $verdict |")
    log "$1: health $3, descriptors $BASELINE / $2 / $after, $cached content file(s) cached: $verdict"
}

open_connections() { # count → fills CONNS with descriptors
    CONNS=()
    local fd
    for _ in $(seq 1 "$1"); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$KIOSK_PORT" || die "connect failed"
        CONNS+=("$fd")
    done
}
close_connections() { local fd; for fd in "${CONNS[@]}"; do exec {fd}>&-; done; CONNS=(); }

# a. slowloris: half a head, then silence.
log "a. $COUNT connections sending half a request head"
open_connections "$COUNT"
for fd in "${CONNS[@]}"; do printf 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ' >&"$fd" 2>/dev/null || true; done
PEAK="$(fd_count "$KIOSK_PID")"
health_during 3
settle "a. $COUNT half request heads (idle timeout 2 s)" "$PEAK" "$HEALTH"
close_connections

# b. body drips: a byte a second.
log "b. $COUNT connections dripping a request body"
open_connections "$COUNT"
for fd in "${CONNS[@]}"; do
    printf 'POST /v1/downloads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{' \
        >&"$fd" 2>/dev/null || true
done
PEAK="$(fd_count "$KIOSK_PID")"
(
    for _ in $(seq 1 8); do
        for fd in "${CONNS[@]}"; do printf ' ' >&"$fd" 2>/dev/null || true; done
        sleep 1
    done
) &
DRIP_PID=$!
EXTRA_PIDS+=("$DRIP_PID")
health_during 3
settle "b. $COUNT body drips, 1 byte/s (request timeout 3 s)" "$PEAK" "$HEALTH"
wait "$DRIP_PID" 2>/dev/null || true
close_connections

# c. readers that never read.
log "c. 50 connections asking for $BIG_MIB MiB and never reading"
open_connections 50
for fd in "${CONNS[@]}"; do printf 'GET %s HTTP/1.1\r\nHost: x\r\n\r\n' "$BIG_PATH" >&"$fd"; done
sleep 1
PEAK="$(fd_count "$KIOSK_PID")"
health_during 3
settle "c. 50 readers that never read a $BIG_MIB MiB file (send timeout 3 s)" "$PEAK" "$HEALTH"
close_connections

# d. huge and many headers, hundreds of ranges.
log "d. huge headers and hundreds of ranges"
status_of() { curl -sS -o /dev/null --max-time 5 -w '%{http_code}' "$@" 2>/dev/null || echo reset; }
BIG_HEADER="X-Huge: $(head -c 102400 /dev/zero | tr '\0' a)"
MANY_HEADERS=()
for i in $(seq 1 500); do MANY_HEADERS+=(-H "X-Many-$i: v"); done
RANGES="bytes=$(seq 0 3 1497 | awk '{printf "%s%d-%d", (NR > 1 ? "," : ""), $1, $1 + 1}')"
OVERLAP="bytes=$(for _ in $(seq 1 300); do printf '0-,'; done | sed 's/,$//')"
D_HUGE="$(status_of -H "$BIG_HEADER" "$KIOSK_BASE/healthz")"
D_MANY="$(status_of "${MANY_HEADERS[@]}" "$KIOSK_BASE/healthz")"
D_RANGES="$(curl -sS -o /dev/null --max-time 30 -w '%{http_code} %{time_total}s' -H "Range: $RANGES" "$KIOSK_BASE$BIG_PATH")"
D_OVERLAP="$(curl -sS -o /dev/null --max-time 30 -w '%{http_code} %{time_total}s' -H "Range: $OVERLAP" "$KIOSK_BASE$BIG_PATH")"
PEAK=0
health_during 2
D_VERDICT=PASS
[[ "$D_HUGE" == 400 || "$D_HUGE" == reset ]] || D_VERDICT=FAIL
[[ "$D_MANY" == 400 || "$D_MANY" == reset ]] || D_VERDICT=FAIL
[[ "$D_RANGES" == 200* && "$D_OVERLAP" == 200* ]] || D_VERDICT=FAIL
grep -q fail <<<"$HEALTH" && D_VERDICT=FAIL
[[ "$D_VERDICT" == PASS ]] || VERDICT=FAIL
ROWS+=("| d. 100 KiB header → $D_HUGE; 500 fields → $D_MANY; 500 ranges → $D_RANGES; 300 overlapping → $D_OVERLAP | $HEALTH| $BASELINE / - / $(fd_count_elsewhere "$KIOSK_PID" "$CONTENT_DIR") (+ $(fd_count_under "$KIOSK_PID" "$CONTENT_DIR") cached) | $D_VERDICT |")

TIMEOUTS="$(curl -sS "$KIOSK_BASE/metrics" | grep '^kiosk_connection_timeouts_total' | tr '\n' ' ')"
cat <<REPORT

### Kiosk hostile clients ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $COUNT connections per drip scenario)

| scenario | /healthz meanwhile (ms) | descriptors before / peak / after (+ content files kept open) | verdict |
|---|---|---|---|
$(printf '%s\n' "${ROWS[@]}")

Timeouts counted by Kiosk: ${TIMEOUTS:-none}

Verdict: **$VERDICT**
REPORT
[[ "$VERDICT" == PASS ]]
