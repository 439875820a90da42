#!/usr/bin/env bash
# What an open connection costs Kiosk's server in memory, and where it goes (issue #32): the heap at its peak with
# MEMORY_CONNECTIONS keep-alive connections downloading a 1 MiB file, against the same server doing nothing, both
# measured with heaptrack, the difference split by what allocated it. It measures; it judges nothing.
#
#   scripts/bench/connection-memory.sh          # from the repository root
#
# What it does (all traffic on 127.0.0.1), with a release `kiosk` (.build-release, or KIOSK_BIN):
#   1. a content folder with one 1 MiB file product; `kiosk serve` (SQLite, the sandbox store, no offload) under
#      `heaptrack`; a grant; then either nothing (the baseline) or wrk with MEMORY_CONNECTIONS (2,000) connections on
#      the granted file for MEMORY_SECONDS (8);
#   2. each run's allocations alive at the heap's peak, as heaptrack's folded stacks, put in groups by the frames
#      that made them (the Swift task allocator, NIO's channel, the HTTP/1.1 codec, the handlers, receive buffers…);
#   3. prints, per group, the bytes at the peak of each run and the difference divided by the connections, with the
#      machine's CPU model, and writes it to MEMORY_OUT (bench-out/connection-memory.md).
#
# heaptrack slows the server: the figures are bytes, not rates. Kernel socket buffers are not on the heap.
# shellcheck source=../reliability/common.sh

set -euo pipefail
CONNECTIONS="${MEMORY_CONNECTIONS:-2000}"
SECONDS_BUSY="${MEMORY_SECONDS:-8}"
OUT_FILE="${MEMORY_OUT:-bench-out/connection-memory.md}"
LOG_TAG="memory"
PRODUCT="com.example.memory.file"

source "$(dirname "${BASH_SOURCE[0]}")/../reliability/common.sh"

trap_cleanup

require_tools wrk curl jq heaptrack python3
build_kiosk
make_work_dir
make_product "$PRODUCT" file.bin 1 "Memory payload"
ulimit -n "$(ulimit -Hn)"
(($(ulimit -n) > CONNECTIONS + 100)) || die "ulimit -n $(ulimit -n) is too low for $CONNECTIONS connections"

# run name busy — one server under heaptrack: a grant, then wrk when busy is 1; writes $WORK_DIR/name.folded.
run() {
    local name=$1 busy=$2
    rm -rf "$DATA_DIR" && mkdir -p "$DATA_DIR"
    : >"$WORK_DIR/kiosk.out"
    heaptrack -o "$WORK_DIR/$name" "$KIOSK_BIN" serve --host 127.0.0.1 --port 0 --content "$CONTENT_DIR" \
        --data "$DATA_DIR" --reload-interval 0 --log-level warning >"$WORK_DIR/kiosk.out" 2>"$WORK_DIR/kiosk.err" &
    KIOSK_PID=$!
    wait_listening kiosk
    grant "$PRODUCT"
    # Hummingbird, NIO and the catalog's first allocations happen at the first requests: both runs make them.
    wrk -t1 -c16 -d1s -H "Authorization: Bearer $GRANT_TOKEN" "$KIOSK_BASE$GRANT_URL" >/dev/null
    if ((busy)); then
        wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_BUSY}s" --timeout 30s -H "Authorization: Bearer $GRANT_TOKEN" \
            "$KIOSK_BASE$GRANT_URL" >"$WORK_DIR/$name.wrk"
    fi
    # The server is heaptrack's child: stop it, and heaptrack writes its file.
    pkill -INT -P "$KIOSK_PID" || kill -INT "$KIOSK_PID"
    wait "$KIOSK_PID" || true
    KIOSK_PID=""
    heaptrack_print -f "$WORK_DIR/$name".*zst --flamegraph-cost-type peak -F "$WORK_DIR/$name.folded" \
        >"$WORK_DIR/$name.print" 2>/dev/null
    log "$name: $(grep -m1 'peak heap memory consumption' "$WORK_DIR/$name.print" || echo 'no peak line')"
}

run baseline 0
run busy 1

mkdir -p "$(dirname "$OUT_FILE")"
python3 - "$WORK_DIR/baseline.folded" "$WORK_DIR/busy.folded" "$CONNECTIONS" "$WORK_DIR/busy.wrk" <<'PY' |
import re, subprocess, sys

baseline_path, busy_path, connections, wrk_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# The groups. A stack's bytes go to the group of the frame nearest the allocation (its frames demangled, walked from
# the allocation up) that matches one of the patterns: a header string allocated while a read is handled is the
# decoder's, the read's own buffer the receive buffers'.
GROUPS = [
    ("async task frames (the Swift task allocator)", r"swift_task_alloc|swift_job_allocate|StackAllocator"),
    ("tasks", r"swift_task_create"),
    ("receive buffers", r"RecvByteBufferAllocator|readFromSocket"),
    ("NIO's pending writes", r"PendingStreamWrites|PendingWritesManager"),
    ("HTTP/1.1 decoder and its header list", r"HTTPDecoder|BetterHTTPParser|HTTPHeaders|llhttp"),
    ("Hummingbird's handlers and async channel", r"NIOAsyncChannel|NIOAsyncWriter|NIOAsyncSequenceProducer|"
     r"HTTP1ToHTTPServerCodec|HTTPConnectionStateHandler|RequestReadTimeoutHandler|ApplicationSide"),
    ("DirectAnswerHandler and its answers", r"DirectAnswerHandler|DirectAnswers|DirectContent|DirectRequestID"),
    ("the socket channel, its pipeline, the handlers made at accept", r"SocketChannel|ChannelPipeline|ChannelHandlerContext|"
     r"ServerBootstrap|acceptNewChannel|KioskHTTP1Channel"),
    ("the idle timer, promises and futures", r"scheduleTask|EventLoopPromise|EventLoopFuture|Scheduled"),
]

def demangle(names):
    out = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names), capture_output=True,
                         text=True).stdout.split("\n")
    return out if len(out) >= len(names) else names

def groups(path):
    lines = [line.rstrip("\n") for line in open(path) if line.strip()]
    stacks, costs = [], []
    for line in lines:
        stack, _, cost = line.rpartition(" ")
        stacks.append(stack)
        costs.append(int(cost))
    readable = demangle(stacks)
    totals = {name: 0 for name, _ in GROUPS}
    totals["other"] = 0
    compiled = [(name, re.compile(pattern)) for name, pattern in GROUPS]
    for stack, cost in zip(readable, costs):
        group = next((name for frame in reversed(stack.split(";")) for name, pattern in compiled
                      if pattern.search(frame)), "other")
        totals[group] += cost
    return totals

base, busy = groups(baseline_path), groups(busy_path)
total_base, total_busy = sum(base.values()), sum(busy.values())
requests = re.search(r"(\d+) requests in", open(wrk_path).read())
print(f"{connections} keep-alive connections downloading the 1 MiB file"
      + (f" ({requests.group(1)} answers under heaptrack)" if requests else "") + ".")
print()
print("| what (the frames that allocated it) | idle server, at its peak | busy server, at its peak | per connection |")
print("|---|---:|---:|---:|")
def row(name, a, b):
    print(f"| {name} | {a / 1e6:.2f} MB | {b / 1e6:.2f} MB | {(b - a) / connections / 1024:.2f} KiB |")
row("**the heap at its peak**", total_base, total_busy)
for name in [name for name, _ in GROUPS] + ["other"]:
    row(name, base[name], busy[name])
PY
    {
        echo "# Memory per connection ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
        echo
        echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
            "kiosk: $KIOSK_BIN ($(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'));" \
            "$(heaptrack --version 2>/dev/null | head -1)"
        echo
        cat
    } | tee "$OUT_FILE"
log "written to $OUT_FILE"
