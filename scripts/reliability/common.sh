# Shared by the reliability scripts (source it; do not run it): build, content, start/stop Kiosk, grants, and
# /proc readings. Follows scripts/bench-server.sh's conventions (release build in .build-release, KIOSK_BIN to skip
# it, logs on stderr, everything on 127.0.0.1, a cleanup trap that removes the temporary folder).

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
LOG_TAG="${LOG_TAG:-reliability}"
BUILD_RETRIES="${RELIABILITY_BUILD_RETRIES:-3}"

log() { printf '[%s %s] %s\n' "$LOG_TAG" "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

WORK_DIR=""
KIOSK_PID=""
EXTRA_PIDS=()
cleanup() {
    local status=$?
    set +e
    for pid in "${EXTRA_PIDS[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
    if [[ -n "$KIOSK_PID" ]] && kill -0 "$KIOSK_PID" 2>/dev/null; then
        kill -TERM "$KIOSK_PID" 2>/dev/null
        for _ in $(seq 1 50); do kill -0 "$KIOSK_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$KIOSK_PID" 2>/dev/null
        wait "$KIOSK_PID" 2>/dev/null
    fi
    [[ -n "$WORK_DIR" && -d "$WORK_DIR" ]] && rm -rf "$WORK_DIR"
    exit "$status"
}

# require_tools tool… — installs missing ones with apt-get (package name = tool name, except ss → iproute2).
require_tools() {
    local missing=() tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null && continue
        case "$tool" in ss) missing+=(iproute2) ;; *) missing+=("$tool") ;; esac
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

# make_work_dir — a temporary folder with content/ (a copy of the sample catalog) and data/.
make_work_dir() {
    WORK_DIR="$(mktemp -d /tmp/kiosk-reliability.XXXXXX)"
    CONTENT_DIR="$WORK_DIR/content"
    DATA_DIR="$WORK_DIR/data"
    mkdir -p "$DATA_DIR"
    cp -R "$REPO_ROOT/content" "$CONTENT_DIR"
}

# make_product id file mib — a non-consumable product with one file of random bytes, version "1".
make_product() {
    mkdir -p "$CONTENT_DIR/$1/Contents"
    cat >"$CONTENT_DIR/$1/Info.json" <<JSON
{"product_id": "$1", "type": "non_consumable", "title": "Reliability $1", "content_version": "1"}
JSON
    head -c "$(($3 * 1024 * 1024))" /dev/urandom >"$CONTENT_DIR/$1/Contents/$2"
}

# start_kiosk [serve options…] — starts Kiosk on an ephemeral port; sets KIOSK_PID and KIOSK_BASE.
start_kiosk() {
    "$KIOSK_BIN" serve --host 127.0.0.1 --port 0 --content "$CONTENT_DIR" --data "$DATA_DIR" --reload-interval 0 \
        --log-level warning "$@" >"$WORK_DIR/kiosk.out" 2>"$WORK_DIR/kiosk.err" &
    KIOSK_PID=$!
    KIOSK_BASE=""
    local line
    for _ in $(seq 1 1200); do
        if line="$(grep -m1 -o 'Kiosk listening on http://[^[:space:]]*' "$WORK_DIR/kiosk.out" 2>/dev/null)"; then
            KIOSK_BASE="${line#Kiosk listening on }"
            break
        fi
        kill -0 "$KIOSK_PID" 2>/dev/null || { cat "$WORK_DIR/kiosk.err" >&2; die "kiosk exited during startup"; }
        sleep 0.1
    done
    [[ -n "$KIOSK_BASE" ]] || { cat "$WORK_DIR/kiosk.err" >&2; die "kiosk did not print its address"; }
    KIOSK_PORT="${KIOSK_BASE##*:}"
    log "kiosk pid $KIOSK_PID at $KIOSK_BASE"
}

# grant product_id — buys the product in the sandbox store; sets GRANT_PATH (first file's URL with ?token=) and
# GRANT_LENGTH (its length).
grant() {
    local receipt body
    receipt="$(curl -sS --fail-with-body -H 'Content-Type: application/json' \
        --data "$(jq -nc --arg p "$1" '{product_id: $p, quantity: 1}')" "$KIOSK_BASE/sandbox/purchases" |
        jq -er '."receipt-data"')" || die "purchase of $1 failed"
    body="$(curl -sS --fail-with-body -H 'Content-Type: application/json' \
        --data "$(jq -nc --arg r "$receipt" --arg p "$1" '{"receipt-data": $r, product_id: $p, installation_id: "reliability"}')" \
        "$KIOSK_BASE/v1/downloads")" || die "grant of $1 failed: $body"
    GRANT_PATH="$(jq -er '.files[0].url' <<<"$body")?token=$(jq -er '.token | @uri' <<<"$body")"
    GRANT_LENGTH="$(jq -er '.files[0].length' <<<"$body")"
}

fd_count() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
status_kib() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }
kib_to_mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

# wait_for_fds pid target seconds — polls until the process has at most target descriptors; prints the count.
wait_for_fds() {
    local count
    for _ in $(seq 1 $(($3 * 10))); do
        count="$(fd_count "$1")"
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
