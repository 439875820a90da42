#!/usr/bin/env bash
# Kill -9 scenarios for resumable downloads:
#   1. the client: `kiosk get` of a large product is killed with SIGKILL KILLS times at random points and
#      restarted each time, then allowed to finish;
#   2. the server: `kiosk serve` is killed with SIGKILL in the middle of a download and restarted on the same
#      port and data folder while the client keeps going.
# Each scenario checks the installed file's SHA-256 against the source and reports the bytes the server sent
# beyond the file's length (bytes fetched more than once). Verified bytes are never fetched again: what a kill
# loses is at most what was in flight in the client's buffers.
#
#   scripts/reliability/kills.sh
#
# The server sends each content response at most KILLS_THROTTLE fast (`--faults throttle=…`, default 8MiB/s: with
# four connections, a gigabyte takes about 32 s), so that the kills land in the middle of the download: unthrottled
# over loopback, `kiosk get` is done before the first kill.
#
# Environment: KILLS_MIB (default 1024), KILLS (default 10), KILLS_SEED (default: random), KILLS_THROTTLE
# (default 8MiB/s), KIOSK_BIN (skip the build, use this binary).
set -euo pipefail
LOG_TAG=kills
source "$(dirname "$0")/common.sh"
trap cleanup EXIT

SIZE_MIB="${KILLS_MIB:-1024}"
KILLS="${KILLS:-10}"
SEED="${KILLS_SEED:-$RANDOM}"
THROTTLE="${KILLS_THROTTLE:-8MiB/s}"
PRODUCT="com.example.kiosk.reliability.kills"
CLIENT_PID=""

require_tools curl python3 sha256sum
build_kiosk
make_work_dir
log "generating a ${SIZE_MIB} MiB product"
make_product "$PRODUCT" payload.bin "$SIZE_MIB"
EXPECTED_SHA="$(sha256sum "$CONTENT_DIR/$PRODUCT/Contents/payload.bin" | cut -d' ' -f1)"
SIZE_BYTES=$((SIZE_MIB << 20))

start_kiosk --faults "throttle=$THROTTLE"
PORT="$KIOSK_PORT"
"$KIOSK_BIN" buy "$PRODUCT" --server "$KIOSK_BASE" >"$WORK_DIR/receipt.txt" 2>/dev/null

# The restarted server must come back on the same port, with the same data folder (ledger and keys).
restart_kiosk() {
    "$KIOSK_BIN" serve --host 127.0.0.1 --port "$PORT" --content "$CONTENT_DIR" --data "$DATA_DIR" \
        --reload-interval 0 --log-level warning --faults "throttle=$THROTTLE" >>"$WORK_DIR/kiosk.out" \
        2>>"$WORK_DIR/kiosk.err" &
    KIOSK_PID=$!
    for _ in $(seq 1 600); do
        curl -fsS -o /dev/null "$KIOSK_BASE/healthz" 2>/dev/null && return
        kill -0 "$KIOSK_PID" 2>/dev/null || { cat "$WORK_DIR/kiosk.err" >&2; die "the restarted server exited"; }
        sleep 0.1
    done
    die "the restarted server did not answer"
}
bytes_sent() { curl -fsS "$KIOSK_BASE/metrics" | awk '$1 == "kiosk_content_bytes_sent_total" { printf "%d\n", $2 }'; }
# The part file's allocated bytes: chunks are written at their offsets by parallel ranges, so the file is sparse
# while some are missing and its size overstates what it holds.
part_bytes() {
    stat -c '%b %B' "$1/Staging/$PRODUCT/Contents/payload.bin.part" 2>/dev/null | awk '{printf "%d\n", $1 * $2}' ||
        echo 0
}
start_client() {
    "$KIOSK_BIN" get "$PRODUCT" --receipt "$WORK_DIR/receipt.txt" --server "$KIOSK_BASE" --cache "$1" \
        >"$WORK_DIR/get.out" 2>>"$WORK_DIR/get.err" &
    CLIENT_PID=$!
    EXTRA_PIDS=("$CLIENT_PID")
}
check_installed() {
    local installed
    installed="$(tail -n 1 "$WORK_DIR/get.out")/Contents/payload.bin"
    [[ -f "$installed" ]] || { cat "$WORK_DIR/get.err" >&2; die "nothing installed at $installed"; }
    [[ "$(sha256sum "$installed" | cut -d' ' -f1)" == "$EXPECTED_SHA" ]] || die "the installed file's SHA-256 is wrong"
}

echo "== scenario 1: kill -9 the client ${KILLS} times (seed ${SEED})"
CACHE="$WORK_DIR/cache-client"
sent_before="$(bytes_sent)"
kills_done=0
for kill in $(seq 1 "$KILLS"); do
    start_client "$CACHE"
    # A random point between 0.5 s and 4 s into this run. A restarted client first re-reads and re-hashes the
    # bytes it has (SHA-256 cannot be resumed from a journal), so early kills may land before new bytes arrive.
    delay="$(python3 -c "import random,sys; random.seed(int(sys.argv[1])); print(f'{0.5 + random.random() * 3.5:.2f}')" "$((SEED + kill))")"
    sleep "$delay"
    if ! kill -0 "$CLIENT_PID" 2>/dev/null; then
        wait "$CLIENT_PID" || true
        echo "   kill $kill: the download had already finished"
        break
    fi
    kill -9 "$CLIENT_PID"
    wait "$CLIENT_PID" 2>/dev/null || true
    kills_done=$kill
    printf '   kill %2d after %s s: %5d MiB on disk\n' "$kill" "$delay" "$(($(part_bytes "$CACHE") >> 20))"
done
start_client "$CACHE"
wait "$CLIENT_PID" || { cat "$WORK_DIR/get.err" >&2; die "the final run failed"; }
check_installed
sent_client=$(($(bytes_sent) - sent_before))
refetched_client=$((sent_client - SIZE_BYTES))

echo "== scenario 2: kill -9 the server mid-download"
CACHE="$WORK_DIR/cache-server"
start_client "$CACHE"
sleep 2
kill -9 "$KIOSK_PID"
wait "$KIOSK_PID" 2>/dev/null || true
sleep 0.5
on_disk_at_kill="$(part_bytes "$CACHE")"
echo "   server killed with $((on_disk_at_kill >> 20)) MiB on the client's disk; restarting it in 1 s"
sleep 1
restart_kiosk
wait "$CLIENT_PID" || { cat "$WORK_DIR/get.err" >&2; die "the download did not survive the server kill"; }
check_installed
sent_after_restart="$(bytes_sent)"
refetched_server=$((sent_after_restart - (SIZE_BYTES - on_disk_at_kill)))

python3 - "$SIZE_MIB" "$kills_done" "$sent_client" "$refetched_client" "$on_disk_at_kill" "$sent_after_restart" \
    "$refetched_server" <<'PY'
import sys
size, kills, sent_c, refetch_c, disk_at_kill, sent_s, refetch_s = (int(x) for x in sys.argv[1:])
mib = lambda n: n / (1 << 20)
print(f"payload: {size} MiB")
print(f"client kill -9 x{kills}: installed, SHA-256 ok; server sent {mib(sent_c):.1f} MiB, "
      f"re-fetched {mib(refetch_c):.1f} MiB ({refetch_c / (size << 20) * 100:.2f}% of the file, "
      f"{mib(refetch_c) / max(kills, 1):.2f} MiB per kill)")
print(f"server kill -9 + restart: installed, SHA-256 ok; {mib(disk_at_kill):.1f} MiB on disk at the kill were kept; "
      f"the restarted server sent {mib(sent_s):.1f} MiB, re-fetched {mib(refetch_s):.1f} MiB")
PY
