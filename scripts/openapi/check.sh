#!/usr/bin/env bash
# openapi.yaml against a live server (issue #34): validates the document as OpenAPI 3.1, starts a sandbox
# `kiosk serve` on a free loopback port (faults off), and runs Schemathesis on every operation of the document with
# the checks for server errors, status codes, content types, response headers and response schemas. The hooks
# (scripts/openapi/hooks.py) buy a product in the sandbox store and ask for its grant, so that content, pack,
# subchunk and delivery requests carry a real token and name real files, and the bodies real receipts and
# transactions. Any 5xx, any answer that breaks the document (an undocumented status, content type or header, a body
# that does not match its schema) or a request the server does not answer fails the script. CI runs it (.ci/run).
#
#   scripts/openapi/check.sh
#
# KIOSK_BIN: the kiosk to run (default: the debug build, built now); OPENAPI_MAX_EXAMPLES: cases per operation
# and phase (default 50); OPENAPI_SEED: Schemathesis's seed (default 34); OPENAPI_EXTRA: more options for
# `schemathesis run` (e.g. `--include-path /v1/downloads`).
#
# Installs openapi-spec-validator and Schemathesis 4 with pip when they are missing. Stateful testing (chains of
# operations through inferred links) is left out: the hooks give every operation the data it needs, and its run time
# does not depend on --max-examples.
set -euo pipefail
LOG_TAG=openapi
source "$(dirname "$0")/../reliability/common.sh"
trap cleanup EXIT

started="$(now)"
cd "$REPO_ROOT"

python3 -c "import openapi_spec_validator" 2>/dev/null || pip install --quiet openapi-spec-validator
if ! command -v schemathesis >/dev/null || ! schemathesis --version | grep -q 'version 4\.'; then
    pip install --quiet 'schemathesis>=4,<5'
fi
log "$(schemathesis --version)"

log "validating openapi.yaml"
python3 - <<'PY'
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

document, _ = read_from_filename("openapi.yaml")
validate(document)
print(f"openapi.yaml: valid OpenAPI {document['openapi']}, {len(document['paths'])} paths")
PY

debug_kiosk

# The sample catalog and a product with what the grant schema has beyond files: chunks (a file of several), a pack
# (two files or more) and subchunks.
make_work_dir
product=com.example.kiosk.openapi-check
mkdir -p "$CONTENT_DIR/$product/Contents"
cat >"$CONTENT_DIR/$product/Info.json" <<JSON
{"product_id": "$product", "type": "non_consumable", "title": "OpenAPI check", "content_version": "1.0"}
JSON
head -c $((6 * 1024 * 1024)) /dev/urandom >"$CONTENT_DIR/$product/Contents/data.bin"
echo "The OpenAPI check's second file." >"$CONTENT_DIR/$product/Contents/read me.txt"
start_kiosk

checks=not_a_server_error,status_code_conformance,content_type_conformance
checks+=,response_headers_conformance,response_schema_conformance
log "schemathesis against $KIOSK_BASE"
status=0
# From the work folder, where Schemathesis keeps its cache (.schemathesis/), removed with it.
(cd "$WORK_DIR" && KIOSK_BASE="$KIOSK_BASE" KIOSK_CHECK_PRODUCT="$product" \
    SCHEMATHESIS_HOOKS="$REPO_ROOT/scripts/openapi/hooks.py" \
    schemathesis run "$REPO_ROOT/openapi.yaml" --url "$KIOSK_BASE" \
    --checks "$checks" --phases examples,coverage,fuzzing \
    --max-examples "${OPENAPI_MAX_EXAMPLES:-50}" --seed "${OPENAPI_SEED:-34}" --generation-database none \
    --workers 2 --request-timeout 20 --no-color --suppress-health-check all ${OPENAPI_EXTRA:-} \
    >"$WORK_DIR/schemathesis.out" 2>&1) || status=$?
cat "$WORK_DIR/schemathesis.out"
kill -0 "$KIOSK_PID" 2>/dev/null || { cat "$WORK_DIR/kiosk.err" >&2; die "kiosk serve exited during the run"; }

# What the server answered, by route, method and status (its request metrics), and proof that the grant-gated routes
# were exercised past their refusals.
curl -fsS "$KIOSK_BASE/metrics" >"$WORK_DIR/metrics.txt"
python3 - "$WORK_DIR/metrics.txt" <<'PY'
import re
import sys

answers = {}
for line in open(sys.argv[1]):
    match = re.match(r"kiosk_http_requests_total\{(.*)\} ([0-9.e+]+)$", line.strip())
    if match:
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
        key = (labels.get("route", "?"), labels.get("method", "?"))
        answers.setdefault(key, {})[labels.get("status", "?")] = int(float(match.group(2)))
for (route, method), statuses in sorted(answers.items()):
    print(f"  {method:5} {route:40} " + " ".join(f"{s}:{n}" for s, n in sorted(statuses.items())))
def never(pairs):
    return [f"{method} {route} {status}" for method, route, status in pairs
            if answers.get((route, method), {}).get(status, 0) == 0]


# Past the refusals: content, packs and subchunks answered with their bytes in every run (this fails the check).
missing = never([
    ("GET", "/v1/content/**", "200"), ("GET", "/v1/content/**", "206"), ("GET", "/v1/packs/**", "200"),
    ("GET", "/v1/subchunks/**", "200"), ("POST", "/v1/deliveries", "200"), ("POST", "/v1/downloads", "200"),
])
# The answers to preconditions and bad ranges come from the draws of the cases: most runs reach them all, and a run
# that misses one says so without failing (the route tests check them one by one).
for answer in never([
    ("HEAD", "/v1/content/**", "200"), ("GET", "/v1/content/**", "304"), ("GET", "/v1/content/**", "412"),
    ("GET", "/v1/content/**", "416"), ("GET", "/v1/packs/**", "206"),
]):
    print(f"  not reached in this run: {answer}")
if missing:
    sys.exit(f"never answered (the hooks did not reach them): {', '.join(missing)}")
PY

cases="$(grep -Eo '[0-9]+ generated' "$WORK_DIR/schemathesis.out" | tail -1 | cut -d' ' -f1)"
[[ -n "$cases" ]] || die "Schemathesis reported no test cases"
log "$(schemathesis --version): $cases generated cases in $(seconds_since "$started") s in all"
((status == 0)) || die "Schemathesis found answers that break openapi.yaml (exit $status)"
log "openapi.yaml holds against the live server"
