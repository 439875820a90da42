#!/usr/bin/env bash
# The scorecard of real download clients against `kiosk bench`'s built-in scenarios (issue #33): how curl, wget,
# aria2c, a plain Python `requests` resume loop and `kiosk get URL` cope with the faults of the field.
#
#   scripts/bench/scorecard.sh                 # prints the table and writes it to bench-out/scorecard.md
#
# What it does:
#   1. installs what is missing (wget and aria2 from Debian's packages, Python requests), builds `kiosk` (debug,
#      unless KIOSK_BIN is set) and makes a folder with one file of SCORECARD_SIZE bytes (1 MiB, random);
#   2. starts `kiosk bench` on it on a free loopback port, with a fixed seed;
#   3. for each client and each built-in scenario, runs the client's resume loop: at most SCORECARD_ATTEMPTS (6)
#      attempts, each under a 60 s limit, one second apart, as `until client …; do sleep 1; done` would, under
#      the run `<client>`, each attempt with a renewed URL (`&attempt=N`, as an app asks its backend for a fresh
#      signed URL). `kiosk get` retries by itself: its loop goes on only when it exits with 75 (stopped with the
#      bytes kept: run again to resume), not on 1 (a failure that running again does not fix);
#   4. tells the bench what the client ended with (`PUT /s/<scenario>/<file>`: the SHA-256 of the file it saved when
#      its last attempt succeeded, otherwise its error), reads the verdict (`GET /s/report`) and prints, per
#      scenario and client, pass or FAIL with the bytes sent over the file's size and the restarts from zero.
#
# Environment: KIOSK_BIN, SCORECARD_SIZE (1048576), SCORECARD_ATTEMPTS (6), SCORECARD_OUT (bench-out/scorecard.md),
# SCORECARD_CLIENTS ("curl wget aria2c requests kiosk-get").
set -euo pipefail
LOG_TAG=scorecard
source "$(dirname "$0")/../reliability/common.sh"
trap cleanup EXIT

SIZE="${SCORECARD_SIZE:-1048576}"
ATTEMPTS="${SCORECARD_ATTEMPTS:-6}"
OUT_FILE="${SCORECARD_OUT:-bench-out/scorecard.md}"
CLIENTS="${SCORECARD_CLIENTS:-curl wget aria2c requests kiosk-get}"
FILE_NAME="level-7.pak"
VERSIONS=""

require_tools curl wget aria2c python3 jq
python3 -c "import requests" 2>/dev/null || {
    log "installing Python requests"
    DEBIAN_FRONTEND=noninteractive apt-get install -y python3-requests >&2 || pip install --quiet requests
}
cd "$REPO_ROOT"
debug_kiosk

WORK_DIR="$(mktemp -d /tmp/kiosk-scorecard.XXXXXX)"
mkdir -p "$WORK_DIR/served" "$WORK_DIR/clients"
head -c "$SIZE" /dev/urandom >"$WORK_DIR/served/$FILE_NAME"
FILE_SHA="$(sha256sum "$WORK_DIR/served/$FILE_NAME" | cut -d' ' -f1)"

start_bench "$WORK_DIR/served"
log "kiosk bench at $BASE ($KIOSK_BIN)"
SCENARIOS="$(curl -fsS "$BASE/s/" | jq -r '.scenarios[].name')"

# attempt client url output — one attempt of the client (exit 0: it says the body came whole).
attempt() {
    local client=$1 url=$2 output=$3
    case "$client" in
    curl) timeout 60 curl -sS -f -C - -o "$output" "$url" ;;
    wget) timeout 60 wget -q -c --tries=1 -O "$output" "$url" ;;
    aria2c) timeout 60 aria2c -q -c --max-tries=1 --allow-overwrite=false --auto-file-renaming=false \
        -d "$(dirname "$output")" -o "$(basename "$output")" "$url" ;;
    requests) timeout 60 python3 "$REPO_ROOT/scripts/bench/clients/requests_resume.py" "$url" "$output" ;;
    kiosk-get) timeout 60 "$KIOSK_BIN" get "$url" -o "$output" >/dev/null ;;
    *) die "unknown client $client" ;;
    esac
}

for client in $CLIENTS; do
    client_version="$(case "$client" in
        curl) curl --version | head -1 | cut -d' ' -f1-2 ;;
        wget) wget --version | head -1 | cut -d' ' -f1-3 ;;
        aria2c) aria2c --version | head -1 ;;
        requests) echo "Python $(python3 -c 'import sys; print(sys.version.split()[0])') requests $(python3 -c 'import requests; print(requests.__version__)')" ;;
        kiosk-get) echo "kiosk get URL ($(git -C "$REPO_ROOT" rev-parse --short HEAD))" ;;
        esac)"
    VERSIONS+="- $client: $client_version"$'\n'
    for scenario in $SCENARIOS; do
        output="$WORK_DIR/clients/$client-$scenario.bin"
        url="$BASE/s/$scenario/$FILE_NAME?run=$client"
        status=1
        for try in $(seq 1 "$ATTEMPTS"); do
            code=0
            attempt "$client" "$url&attempt=$try" "$output" 2>>"$WORK_DIR/clients/$client-$scenario.err" || code=$?
            if [[ $code -eq 0 ]]; then status=0; break; fi
            [[ $client == kiosk-get && $code -ne 75 ]] && break
            sleep 1
        done
        if [[ $status -eq 0 && -f "$output" ]]; then
            body="{\"sha256\": \"$(sha256sum "$output" | cut -d' ' -f1)\"}"
        else
            body="{\"error\": \"no success in $ATTEMPTS attempts\"}"
        fi
        curl -fsS -X PUT --data "$body" "$url" >/dev/null
        log "$client $scenario: $(if [[ $status -eq 0 ]]; then echo "saved after $try attempt(s)"; else echo "gave up"; fi)"
    done
done
curl -fsS "$BASE/s/report" >"$WORK_DIR/report.json"

# cell scenario client — pass/FAIL, bytes sent over the file's size and restarts, from the report.
cell() {
    jq -r --arg s "$1" --arg c "$2" '.runs[] | select(.scenario == $s and .run == $c)
        | "\(if .verdict == "pass" then "pass" else "**FAIL**" end) \(.bytes_sent_over_file_size // 0 | . * 100 | round / 100)×"
          + (if .restarts_from_zero > 0 then ", \(.restarts_from_zero) restart" + (if .restarts_from_zero > 1 then "s" else "" end) else "" end)
          + (if .error_page_accepted then ", kept the error page" else "" end)' "$WORK_DIR/report.json"
}
mkdir -p "$(dirname "$OUT_FILE")"
{
    echo "# Download clients against kiosk bench's scenarios, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "Machine: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) CPUs, $(uname -sr)." \
        "One file of $SIZE bytes, \`kiosk bench --seed 7\` ($KIOSK_BIN), each client's resume loop at most $ATTEMPTS attempts" \
        "(60 s each, 1 s apart, each with a renewed URL; \`kiosk get\` runs again only when it exits with 75). A cell: the verdict (the exact bytes at the end), the bytes sent over the file's size," \
        "the restarts from zero."
    echo
    printf '%s' "$VERSIONS"
    echo
    header="| scenario |"; rule="|---|"
    for client in $CLIENTS; do header+=" $client |"; rule+="---|"; done
    echo "$header"; echo "$rule"
    for scenario in $SCENARIOS; do
        line="| \`$scenario\` |"
        for client in $CLIENTS; do line+=" $(cell "$scenario" "$client") |"; done
        echo "$line"
    done
    echo
    echo "Totals: $(jq -r '"\(.passed) passed, \(.failed) failed, \(.unknown) unknown"' "$WORK_DIR/report.json")."
} | tee "$OUT_FILE"
log "wrote $OUT_FILE"
