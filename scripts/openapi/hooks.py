"""Schemathesis hooks for scripts/openapi/check.sh: real data for a live sandbox `kiosk serve`.

Loaded with SCHEMATHESIS_HOOKS=scripts/openapi/hooks.py. At load, against the server at KIOSK_BASE, it buys
KIOSK_CHECK_PRODUCT in the sandbox store (a product of two files or more, one of them of several chunks), asks for
its grant, and prepares what else the operations need: a purchase to refund and notify about, a subscription, a
signed notification, the catalog's ETag and a page cursor, the file's and the pack's validators.

Then `map_case` rewrites most generated cases (chosen from the case's own content, so the same case always maps the
same way) to use those real values: the grant's token in `Authorization` or in `?token=`, the granted product,
version and file in content, pack and subchunk paths, real `Range` and precondition headers, real receipts and
transactions in the JSON bodies. The rest go out as generated, so refusals are exercised too. Nothing here prints a
receipt or a token.
"""

import itertools
import json
import os
import random
import threading
import urllib.error
import urllib.parse
import urllib.request
import zlib

import schemathesis

try:  # A path value sent as it is, its `/` between segments kept (Schemathesis 4.x).
    from schemathesis.core.parameters import EncodedPath
except ImportError:  # Older: the value is percent-encoded whole, and the server refuses the path (400).
    EncodedPath = str

BASE = os.environ["KIOSK_BASE"].rstrip("/")
PRODUCT = os.environ["KIOSK_CHECK_PRODUCT"]
INSTALLATION = "openapi-check"


def call(method, path, body=None, headers=None):
    """(status, headers, body) of a request to the server; the body parsed when it is JSON."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method, headers=headers or {})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, answer, raw = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, answer, raw = error.code, error.headers, error.read()
    parsed = json.loads(raw) if raw and answer.get("Content-Type", "").startswith("application/json") else raw
    return status, answer, parsed


def require(method, path, body=None, headers=None, status=200):
    """The answer to a request that must succeed with `status`."""
    got, answer, parsed = call(method, path, body, headers)
    if got != status:
        code = parsed.get("error", {}).get("code") if isinstance(parsed, dict) else None
        raise SystemExit(f"hooks.py: {method} {path} answered {got} ({code}), not {status}")
    return answer, parsed


def buy(product, user):
    """A sandbox purchase: its receipt and transaction ID."""
    _, purchase = require("POST", "/sandbox/purchases", {"product_id": product, "user": user}, status=201)
    return purchase["receipt-data"], purchase["transaction_id"]


_, CATALOG = require("GET", "/v1/products")
PRODUCTS = [product["id"] for product in CATALOG["products"]]
OTHER_PRODUCT = next(p["id"] for p in CATALOG["products"] if p["id"] != PRODUCT and p["type"] != "auto_renewable")
SUBSCRIPTION = next((p["id"] for p in CATALOG["products"] if p["type"] == "auto_renewable"), None)
CATALOG_ETAG = require("HEAD", "/v1/products")[0]["ETag"]
_, FIRST_PAGE = require("GET", "/v1/products?limit=1")
CURSOR = FIRST_PAGE["next_cursor"]

RECEIPT, TRANSACTION = buy(PRODUCT, "openapi-check")
_, GRANT = require(
    "POST", "/v1/downloads", {"receipt-data": RECEIPT, "product_id": PRODUCT, "installation_id": INSTALLATION})
TOKEN = GRANT["token"]
VERSION = GRANT["content_version"]
CHUNKED = next(f for f in GRANT["files"] if len(f.get("chunks", [])) >= 2)
CHUNK_COUNT = len(CHUNKED["chunks"])
FILES = [f["path"] for f in GRANT["files"] if not f["path"].endswith(".json")]
if "pack" not in GRANT or "subchunks" not in GRANT:
    raise SystemExit(f"hooks.py: the grant of {PRODUCT} has no pack or no subchunks")
AUTHORIZATION = {"Authorization": f"Bearer {TOKEN}"}
FILE_HEAD = require("HEAD", CHUNKED["url"], headers=AUTHORIZATION)[0]
PACK_HEAD = require("HEAD", GRANT["pack"]["url"], headers=AUTHORIZATION)[0]

# Another user's purchase to refund, revoke and notify about, and a subscription to renew, expire and put in grace.
_, REFUNDABLE = buy(OTHER_PRODUCT, "openapi-refunds")
SUBSCRIBED = buy(SUBSCRIPTION, "openapi-subscriber")[1] if SUBSCRIPTION else REFUNDABLE
_, NOTIFICATION = require(
    "POST", "/sandbox/notifications",
    {"transaction_id": REFUNDABLE, "kind": "consumption_request", "deliver": False})
SIGNED_PAYLOAD = NOTIFICATION["signed_payload"]

RANGES = ["bytes=0-99", "bytes=0-9,20-29,40-", "bytes=-100", "bytes=100-", "bytes=999999999-", "bytes=5-1"]
# The ranges are given in turn, not drawn: every kind (206, multipart, 416…) comes up in every run, whatever the
# number of cases and the workers' order.
RANGE_TURNS = itertools.cycle(RANGES)
RANGE_LOCK = threading.Lock()
PAST = "Sat, 01 Jan 2000 00:00:00 GMT"
NOTIFICATION_KINDS = [
    "refund", "revoke", "refund_reversed", "renew", "expire", "grace_period", "consumption_request"]


def chooser(case):
    """A random source seeded by the case's own content: the same case always maps the same way."""
    seed = repr((case.operation.method, case.operation.path, case.path_parameters, case.query, case.headers,
                 case.body))
    return random.Random(zlib.crc32(seed.encode()))


def encoded_path(path):
    """A file path as its grant URL writes it: each segment percent-encoded, `/` between them."""
    return EncodedPath("/".join(urllib.parse.quote(segment, safe="") for segment in path.split("/")))


def with_token(case, pick):
    """The grant's token in `Authorization` (half the time), in `?token=` (a quarter), or as generated."""
    mode = pick.random()
    headers = dict(case.headers or {})
    query = dict(case.query or {})
    if mode < 0.5:
        headers["Authorization"] = f"Bearer {TOKEN}"
    elif mode < 0.75:
        headers.pop("Authorization", None)
        query["token"] = TOKEN
    case.headers, case.query = headers, query


def with_validators(case, pick, head):
    """A real `Range` often, real `If-Range` and precondition headers sometimes, against the validators of `head`."""
    headers = dict(case.headers or {})
    etag, modified = head["ETag"], head["Last-Modified"]
    options = {
        "Range": RANGES,
        "If-Range": [etag, modified, '"other"'],
        "If-Match": [etag, "*", '"other"'],
        "If-None-Match": [etag, "*", '"other"'],
        "If-Modified-Since": [modified, PAST],
        "If-Unmodified-Since": [modified, PAST],
    }
    for name, values in options.items():
        roll = pick.random()
        if name == "Range" and roll < 0.6:
            with RANGE_LOCK:
                headers[name] = next(RANGE_TURNS)
        elif roll < 0.12:
            headers[name] = pick.choice(values)
        elif roll < 0.8:
            headers.pop(name, None)
    case.headers = headers


@schemathesis.hook
def map_case(context, case):
    pick = chooser(case)
    path = case.operation.path
    if pick.random() < 0.15:
        return case  # As generated.
    if path.startswith(("/v1/content/", "/v1/packs/", "/v1/subchunks/")) or path == "/v1/deliveries":
        with_token(case, pick)
    if path.startswith(("/v1/content/", "/v1/subchunks/")):
        file = CHUNKED["path"] if path.startswith("/v1/subchunks/") else pick.choice(FILES)
        # Now and then another product or version, which the token does not open (403 `token_scope`).
        product, version = pick.choice([(PRODUCT, VERSION)] * 8 + [(OTHER_PRODUCT, VERSION), (PRODUCT, "0.9")])
        case.path_parameters = {"product_id": product, "content_version": version, "path": encoded_path(file)}
        if path.startswith("/v1/content/"):
            with_validators(case, pick, FILE_HEAD)
        else:
            indexes = list(range(CHUNK_COUNT))
            pick.shuffle(indexes)
            chunks = [",".join(map(str, indexes[: pick.randint(1, CHUNK_COUNT)])), "0,0", str(CHUNK_COUNT), ""]
            case.query = {**(case.query or {}), "chunks": pick.choice(chunks[:1] * 3 + chunks[1:])}
    elif path.startswith("/v1/packs/"):
        product, version = pick.choice([(PRODUCT, VERSION)] * 8 + [(OTHER_PRODUCT, VERSION), (PRODUCT, "0.9")])
        case.path_parameters = {"product_id": product, "content_version": version}
        with_validators(case, pick, PACK_HEAD)
    elif path == "/v1/products":
        query = pick.choice(
            [{}, {"ids": ",".join(PRODUCTS[:2] + ["com.example.unknown"])}, {"limit": "1"},
             {"cursor": CURSOR, "limit": "2"}, {"since": CATALOG_ETAG}, {"since": '"unknown"', "limit": "1"}])
        case.query = query
        case.headers = {**(case.headers or {}), "If-None-Match": pick.choice([CATALOG_ETAG, '"other"'])}
    elif path == "/v1/products/{product_id}":
        case.path_parameters = {"product_id": pick.choice(PRODUCTS)}
    elif path in ("/v1/downloads", "/v1/installations", "/v1/installations/remove", "/v1/receipts/verify"):
        body = {"receipt-data": RECEIPT}
        if path != "/v1/receipts/verify":
            body["product_id"] = pick.choice([PRODUCT, PRODUCT, OTHER_PRODUCT])
        if path in ("/v1/downloads", "/v1/installations/remove"):
            body["installation_id"] = pick.choice([INSTALLATION, f"openapi-{pick.randint(1, 15)}"])
        case.body = body
    elif path == "/v1/deliveries":
        case.body = {"product_id": PRODUCT, "content_version": VERSION, "installation_id": INSTALLATION}
    elif path == "/v1/notifications/appstore":
        case.body = {"signedPayload": SIGNED_PAYLOAD}
    elif path == "/sandbox/purchases":
        case.body = {"product_id": pick.choice(PRODUCTS), "user": "openapi-buyer"}
    elif path == "/sandbox/refunds":
        case.body = {"transaction_id": REFUNDABLE}
    elif path == "/sandbox/notifications":
        kind = pick.choice(NOTIFICATION_KINDS)
        body = {"transaction_id": pick.choice([REFUNDABLE, SUBSCRIBED]), "kind": kind, "deliver": pick.random() < 0.8}
        if kind == "grace_period":
            body["grace_days"] = pick.randint(1, 60)
        case.body = body
    elif path == "/sandbox/consumption/{transaction_id}":
        case.path_parameters = {"transaction_id": pick.choice([REFUNDABLE, TRANSACTION])}
    return case
