#!/usr/bin/env bash
# Load test: 500 concurrent ranged downloads against a release build of Kiosk, watching errors, memory and file
# descriptors.
#
#   scripts/reliability/load.sh        # from anywhere in the repository
#
# What it does (all traffic on 127.0.0.1):
#   1. installs wrk, curl and jq with apt-get when missing;
#   2. builds `kiosk` in release into .build-release (skipped when KIOSK_BIN points at a built binary);
#   3. serves a copy of the sample catalog plus load.big, a LOAD_BIG_MIB MiB file of random bytes;
#   4. buys load.big in the sandbox store and gets a grant;
#   5. runs wrk with LOAD_CONNECTIONS (500) connections for LOAD_DURATION seconds, each request a 1 MiB range at a
#      random offset (scripts/bench/wrk-stats.lua, "fixed" mode), while sampling Kiosk's descriptors and RSS;
#   6. prints a report: requests, MiB/s, errors (must be 0), peak RSS, open descriptors before / at peak / after
#      (after must return to the baseline), and PASS or FAIL; exits 1 on FAIL.
#
# Environment knobs: LOAD_CONNECTIONS (500), LOAD_THREADS (2), LOAD_DURATION (20), LOAD_BIG_MIB (256),
# LOAD_RANGE_KIB (1024), KIOSK_BIN (use this binary, skip the build).
set -euo pipefail
LOG_TAG=load
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
trap_cleanup

CONNECTIONS="${LOAD_CONNECTIONS:-500}"
THREADS="${LOAD_THREADS:-2}"
DURATION="${LOAD_DURATION:-20}"
BIG_MIB="${LOAD_BIG_MIB:-256}"
RANGE_BYTES=$((${LOAD_RANGE_KIB:-1024} * 1024))
WRK_LUA="$REPO_ROOT/scripts/bench/wrk-stats.lua"
[[ -f "$WRK_LUA" ]] || die "missing $WRK_LUA"

require_tools wrk curl jq
# wrk needs a descriptor per connection, Kiosk one per connection plus its files.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
(($(ulimit -n) > CONNECTIONS + 100)) || die "ulimit -n is $(ulimit -n): too low for $CONNECTIONS connections"

build_kiosk
make_work_dir
log "generating load.big ($BIG_MIB MiB)"
make_product load.big big.bin "$BIG_MIB"
start_kiosk
grant load.big
log "grant: $GRANT_LENGTH bytes"

# Warm up (page cache, first connections), then let everything settle for the baseline.
curl -sS -o /dev/null --fail "$KIOSK_BASE$GRANT_PATH" || die "warm-up download failed"
sleep 1
FD_BEFORE="$(fd_count "$KIOSK_PID")"
RSS_BEFORE_KIB="$(status_kib "$KIOSK_PID" VmRSS)"
echo 5 >"/proc/$KIOSK_PID/clear_refs" 2>/dev/null && HWM_RESET=yes || HWM_RESET=no

SAMPLES="$WORK_DIR/samples"
(
    while kill -0 "$KIOSK_PID" 2>/dev/null; do
        echo "$(fd_count "$KIOSK_PID") $(status_kib "$KIOSK_PID" VmRSS)" >>"$SAMPLES"
        sleep 0.25
    done
) &
SAMPLER_PID=$!
EXTRA_PIDS+=("$SAMPLER_PID")

log "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s, ${RANGE_BYTES}-byte ranges at random offsets of $BIG_MIB MiB"
WRK_OUT="$WORK_DIR/wrk.out"
HEALTH_OUT="$WORK_DIR/health"
(
    sleep 3
    for _ in $(seq 1 5); do healthz_ms >>"$HEALTH_OUT"; echo >>"$HEALTH_OUT"; sleep 1; done
) &
HEALTH_PID=$!
EXTRA_PIDS+=("$HEALTH_PID")
BENCH_RANGE_MODE=fixed BENCH_FILE_SIZE="$GRANT_LENGTH" BENCH_RANGE_LENGTH="$RANGE_BYTES" \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --timeout 30s -s "$WRK_LUA" "$KIOSK_BASE$GRANT_PATH" \
    >"$WRK_OUT" 2>&1 || { cat "$WRK_OUT" >&2; die "wrk failed"; }
wait "$HEALTH_PID" || true

FD_AFTER="$(wait_for_fds "$KIOSK_PID" "$FD_BEFORE" 15)"
kill "$SAMPLER_PID" 2>/dev/null; wait "$SAMPLER_PID" 2>/dev/null || true
HWM_KIB="$(status_kib "$KIOSK_PID" VmHWM)"
RSS_AFTER_KIB="$(status_kib "$KIOSK_PID" VmRSS)"
FD_PEAK="$(awk 'm < $1 {m = $1} END {print m + 0}' "$SAMPLES")"
RSS_PEAK_SAMPLED_KIB="$(awk 'm < $2 {m = $2} END {print m + 0}' "$SAMPLES")"

RESULT="$(grep '^BENCH_RESULT' "$WRK_OUT")" || { cat "$WRK_OUT" >&2; die "no wrk summary"; }
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$RESULT"; }
REQUESTS="$(field requests)"
BYTES="$(field bytes)"
DURATION_US="$(field duration_us)"
ERRORS=$(($(field err_connect) + $(field err_read) + $(field err_write) + $(field err_status) + $(field err_timeout)))
MIBS="$(awk -v b="$BYTES" -v d="$DURATION_US" 'BEGIN {printf "%.0f", b / 1048576 / (d / 1e6)}')"
HEALTH="$(tr -s '\n' ' ' <"$HEALTH_OUT")"
KIOSK_ERRORS="$(grep -c -iE 'error|critical' "$WORK_DIR/kiosk.err" || true)"

VERDICT=PASS
((ERRORS == 0)) || VERDICT=FAIL
((FD_AFTER <= FD_BEFORE)) || VERDICT=FAIL
((FD_PEAK >= CONNECTIONS)) || log "note: peak descriptors ($FD_PEAK) below the connection count: sampling missed the peak?"

cat <<REPORT

### Kiosk load test: $CONNECTIONS concurrent ranged downloads ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores)

| figure | value |
|---|---|
| load | wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s, $((RANGE_BYTES / 1024)) KiB ranges at random offsets of a $BIG_MIB MiB file |
| requests | $REQUESTS ($(awk -v r="$REQUESTS" -v d="$DURATION_US" 'BEGIN {printf "%.0f", r / (d / 1e6)}') req/s), $MIBS MiB/s |
| latency p50 / p99 | $(($(field lat_p50_us) / 1000)) ms / $(($(field lat_p99_us) / 1000)) ms |
| errors (connect, read, write, status, timeout) | $ERRORS ($(field err_connect), $(field err_read), $(field err_write), $(field err_status), $(field err_timeout)) |
| /healthz during the load (ms) | $HEALTH |
| peak RSS | $(kib_to_mib "$HWM_KIB") MiB VmHWM (reset before the run: $HWM_RESET); $(kib_to_mib "$RSS_PEAK_SAMPLED_KIB") MiB max sampled; $(kib_to_mib "$RSS_BEFORE_KIB") MiB before, $(kib_to_mib "$RSS_AFTER_KIB") MiB after |
| open descriptors | $FD_BEFORE before, $FD_PEAK at peak, $FD_AFTER after |
| error lines in Kiosk's log | $KIOSK_ERRORS |
| verdict | **$VERDICT** (errors must be 0; descriptors must return to the baseline) |
REPORT
[[ "$VERDICT" == PASS ]]
