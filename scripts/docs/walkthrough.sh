#!/usr/bin/env bash
# Runs the README's walk-through as written (issue #34): the server started with its first block, then the other
# blocks in order in one shell, from the catalog to a bought, granted, downloaded and resumed issue, its SHA-256
# checked against the grant, and the refund that makes the next grant refused.
#
#   scripts/docs/walkthrough.sh
#
# What differs from a terminal: a free loopback port instead of 8080 (the URLs and `kiosk` commands are given it),
# a data folder and a cache of their own, and the commands run in a scratch folder (`swift run` with
# `--package-path`), so that nothing lands in the clone.
set -euo pipefail
LOG_TAG=walkthrough
source "$(dirname "$0")/../reliability/common.sh"
trap cleanup EXIT
require_tools curl python3 ss
cd "$REPO_ROOT"

WORK_DIR="$(mktemp -d /tmp/kiosk-walkthrough.XXXXXX)"
PORT="$(free_port)"
BASE="http://127.0.0.1:$PORT"

# The sh blocks of "## Walk-through…", up to the next "## ".
python3 - "$WORK_DIR" <<'PY'
import pathlib, re, sys
readme = pathlib.Path("README.md").read_text()
section = re.search(r"^## Walk-through.*?(?=^## )", readme, re.S | re.M)
if not section:
    sys.exit("README.md has no walk-through")
blocks = re.findall(r"```sh\n(.*?)```", section.group(0), re.S)
work = pathlib.Path(sys.argv[1])
(work / "serve.sh").write_text(blocks[0])
(work / "steps.sh").write_text("\n".join(blocks[1:]))
print(f"{len(blocks)} blocks", file=sys.stderr)
PY
adapt() {
    sed -e "s#http://127.0.0.1:8080#$BASE#g" \
        -e "s#swift run kiosk \\(products\\|buy\\|get\\)#swift run --package-path '$REPO_ROOT' kiosk \\1 --server $BASE#g" \
        -e "s#swift run kiosk serve#swift run --package-path '$REPO_ROOT' kiosk serve --port $PORT --data '$WORK_DIR/data' --content '$REPO_ROOT/content'#g" \
        "$1"
}
grep -q "swift run kiosk serve" "$WORK_DIR/serve.sh" || die "the first block does not start the server"
adapt "$WORK_DIR/serve.sh" >"$WORK_DIR/serve-adapted.sh"
adapt "$WORK_DIR/steps.sh" >"$WORK_DIR/steps-adapted.sh"

log "starting the server as the first block does"
# In a session of its own: `swift run` starts kiosk as its child, and the whole group is stopped at the end.
setsid bash -c 'cd "$1" && exec bash "$1/serve-adapted.sh"' walkthrough "$WORK_DIR" \
    >"$WORK_DIR/serve.out" 2>"$WORK_DIR/serve.err" &
KIOSK_PID=$!
stop_server() {
    kill -TERM -- "-$KIOSK_PID" 2>/dev/null || return 0
    for _ in $(seq 1 100); do kill -0 -- "-$KIOSK_PID" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL -- "-$KIOSK_PID" 2>/dev/null
}
trap 'stop_server; cleanup' EXIT
for _ in $(seq 1 600); do
    grep -q "Kiosk listening on" "$WORK_DIR/serve.out" "$WORK_DIR/serve.err" 2>/dev/null && break
    kill -0 "$KIOSK_PID" 2>/dev/null || { tail -20 "$WORK_DIR/serve.err" >&2; die "the server exited"; }
    sleep 0.5
done
grep -q "Kiosk listening on" "$WORK_DIR/serve.out" "$WORK_DIR/serve.err" || die "the server did not start"

log "running the other blocks"
(cd "$WORK_DIR" && XDG_CACHE_HOME="$WORK_DIR/cache" bash -euo pipefail "$WORK_DIR/steps-adapted.sh") \
    >"$WORK_DIR/steps.out" 2>"$WORK_DIR/steps.err" || {
    tail -30 "$WORK_DIR/steps.err" >&2
    die "a walk-through command failed"
}

log "checking what it left"
python3 - "$WORK_DIR" <<'PY'
import hashlib, json, pathlib, sys
work = pathlib.Path(sys.argv[1])
grant = json.loads((work / "grant.json").read_text())
issue = next(f for f in grant["files"] if f["path"].endswith("issue.pdf"))
data = (work / "issue.pdf").read_bytes()
if len(data) != issue["length"] or hashlib.sha256(data).hexdigest() != issue["sha256"]:
    sys.exit(f"issue.pdf is not the granted file ({len(data)} bytes)")
if '"not_entitled"' not in (work / "steps.out").read_text():
    sys.exit("the grant after the refund was not refused with not_entitled")
print(f"issue.pdf: {len(data)} bytes, SHA-256 as granted; the grant after the refund: not_entitled")
PY
log "the walk-through works as written"
