#!/usr/bin/env bash
# The documented download clients against `kiosk bench` (issue #33): runs each command of the block of
# docs/testing-downloads.md that follows "<!-- bench-clients -->" (kiosk get, curl, Python, Swift; the Kotlin line is marked untested and skipped)
# through scenarios of the bench, tells the bench what each saved, and fails unless the bench's verdict is "pass"
# for every run. A command that exits with 75 (stopped with the bytes kept: a URL that expired) runs once more with
# a renewed URL, as an app asks its backend for a fresh signed URL. CI runs it (.ci/run), so the commands users copy
# work as written.
#
#   scripts/bench/documented-clients.sh            # KIOSK_BIN: the kiosk to run (default: the debug build, built now)
#
# Which scenarios each client must pass: kiosk get, Python and Swift every built-in one, but Swift on Linux neither `corrupt`
# nor `length-long` (it checks Repr-Digest with CryptoKit, which only Apple platforms have); the curl loop the
# scenarios a plain `curl -C -` copes with (BENCHMARKS.md has the whole table).
set -euo pipefail
LOG_TAG=documented-clients
source "$(dirname "$0")/../reliability/common.sh"
trap cleanup EXIT

require_tools curl python3 jq
cd "$REPO_ROOT"
debug_kiosk

WORK_DIR="$(mktemp -d /tmp/kiosk-readme-clients.XXXXXX)"
mkdir -p "$WORK_DIR/served"
head -c 1048576 /dev/urandom >"$WORK_DIR/served/level-7.pak"

# The documented block: one command a line after the marker, `$URL` the file's URL, `level-7.pak` the file saved.
COMMANDS="$(awk '/<!-- bench-clients -->/ {found=1; next} found && /^```sh/ {inside=1; next} inside && /^```/ {exit}
    inside && !/^#/ && NF {print}' docs/testing-downloads.md)"
[[ -n "$COMMANDS" ]] || die "no bench-clients block in docs/testing-downloads.md"

start_bench "$WORK_DIR/served"
ALL="$(curl -fsS "$BASE/s/" | jq -r '.scenarios[].name')"

# scenarios client — the scenarios the client must pass.
scenarios() {
    case "$1" in
    curl) echo "none cut busy" ;;
    kiosk-get | python) echo "$ALL" ;;
    swift) if [[ "$(uname)" == Darwin ]]; then echo "$ALL"; else echo "$ALL" | grep -vx -e corrupt -e length-long; fi ;;
    esac
}

while IFS= read -r command; do
    case "$command" in
    *kotlinc*) log "skipped (untested, no JVM): $command"; continue ;;
    kiosk\ get*) client=kiosk-get ;;
    *curl*) client=curl ;;
    python3*) client=python ;;
    swift*) client=swift ;;
    *) die "a documented command of no known client: $command" ;;
    esac
    # Run in a folder of its own for each scenario: the documented paths are from the repository's root.
    command="${command//Examples\//$REPO_ROOT/Examples/}"
    for scenario in $(scenarios "$client"); do
        folder="$WORK_DIR/$client/$scenario"
        mkdir -p "$folder"
        url="$BASE/s/$scenario/level-7.pak?run=$client"
        status=0
        (cd "$folder" && URL="$url" PATH="$(dirname "$KIOSK_BIN"):$PATH" timeout 120 bash -c "$command" \
            >"$folder/out" 2>&1) || status=$?
        if [[ $status -eq 75 ]]; then
            status=0
            (cd "$folder" && URL="$url&renewed=1" PATH="$(dirname "$KIOSK_BIN"):$PATH" timeout 120 bash -c "$command" \
                >>"$folder/out" 2>&1) || status=$?
        fi
        if [[ $status -eq 0 && -f "$folder/level-7.pak" ]]; then
            body="{\"sha256\": \"$(sha256sum "$folder/level-7.pak" | cut -d' ' -f1)\"}"
        else
            body="{\"error\": \"exit $status\"}"
        fi
        curl -fsS -X PUT --data "$body" "$url" >/dev/null
    done
done <<<"$COMMANDS"

curl -fsS "$BASE/s/report" >"$WORK_DIR/report.json"
jq -r '.runs[] | "\(.verdict)\t\(.run)\t\(.scenario)\t\(.reasons | join(" "))"' "$WORK_DIR/report.json" | sort -k2,3
if jq -e '.runs | length > 0 and all(.verdict == "pass")' "$WORK_DIR/report.json" >/dev/null; then
    log "every run of the documented clients passed ($(jq '.runs | length' "$WORK_DIR/report.json") runs)"
else
    for run in $(jq -r '.runs[] | select(.verdict != "pass") | "\(.run)/\(.scenario)"' "$WORK_DIR/report.json"); do
        log "FAIL $run:"; sed 's/^/    /' "$WORK_DIR/${run}/out" >&2 || true
    done
    die "a documented client did not pass"
fi
