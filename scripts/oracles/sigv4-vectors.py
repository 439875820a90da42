#!/usr/bin/env python3
"""SigV4 test vectors for Kiosk's S3 signer (Sources/KioskServer/Offload), computed by botocore as the oracle.

botocore 1.43.11 wrote the committed fixture. To regenerate it:

    python3 scripts/oracles/sigv4-vectors.py > Tests/KioskServerTests/Fixtures/sigv4-vectors.json

Fresh vectors for random keys, credentials, endpoints and dates (SigV4SignerTests' live oracle test runs this):

    python3 scripts/oracles/sigv4-vectors.py --random SEED --count N

Presigned URLs come from botocore's own S3 client (generate_presigned_url), so its URL building (key encoding,
path-style and virtual-hosted addressing, endpoints with a port or a path prefix) is checked too. Header-signed
requests are signed by botocore.auth.S3SigV4Auth on the client's URL with the fields each vector lists. The clock is
fixed by replacing botocore.auth.get_current_datetime. Each vector also carries botocore's canonical request and
string to sign, caught on their way into SigV4Auth.signature.

Where Kiosk's signer differs from botocore on purpose (no vector here, unit tests in S3LocationTests instead):
- a bucket name with dots, virtual-hosted over https: botocore falls back to path-style, Kiosk refuses the location
  (the store's wildcard certificate cannot cover it; say path-style);
- an endpoint path with a %XX escape (https://host/p%20x): botocore encodes its '%' again (/p%2520x), Kiosk reads the
  path as the URL means it (/p%20x);
- a trailing slash on an endpoint path: botocore keeps it in a virtual-hosted bucket's URL (/pre/), Kiosk drops it;
- a presigned lifetime outside 1 s to 7 days: botocore signs it anyway (S3 then refuses the URL), Kiosk refuses it.
"""

import argparse
import datetime
import hashlib
import json
import random
import string
import sys
import types
from urllib.parse import unquote

import botocore
import botocore.auth
import botocore.session
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

clock = {"now": datetime.datetime(2013, 5, 24)}
botocore.auth.get_current_datetime = lambda *args, **kwargs: clock["now"]

caught = {}
_signature = botocore.auth.SigV4Auth.signature


def _catching_signature(self, string_to_sign, request):
    caught["stringToSign"] = string_to_sign
    return _signature(self, string_to_sign, request)


_string_to_sign = botocore.auth.SigV4Auth.string_to_sign


def _catching_string_to_sign(self, request, canonical_request):
    caught["canonicalRequest"] = canonical_request
    return _string_to_sign(self, request, canonical_request)


botocore.auth.SigV4Auth.signature = _catching_signature
botocore.auth.SigV4Auth.string_to_sign = _catching_string_to_sign

session = botocore.session.get_session()


def client(case):
    return session.create_client(
        "s3",
        region_name=case["region"],
        endpoint_url=case["endpoint"],
        aws_access_key_id=case["accessKeyID"],
        aws_secret_access_key=case["secretAccessKey"],
        aws_session_token=case["sessionToken"],
        config=Config(signature_version="s3v4", s3={"addressing_style": case["addressing"]}),
    )


def at(case, when):
    clock["now"] = when
    case["date"] = when.strftime("%Y%m%dT%H%M%SZ")
    case["seconds"] = int(when.replace(tzinfo=datetime.timezone.utc).timestamp())


def operation(method, key, params):
    if key is None:
        return "list_objects_v2", params
    return {"GET": "get_object", "HEAD": "head_object", "PUT": "put_object"}[method], {"Key": key, **params}


def botocore_url(case, params, expires):
    """The client's presigned URL, and the URL before its X-Amz- items with the operation's query items."""
    name, arguments = operation(case["method"], case["key"], params)
    url = client(case).generate_presigned_url(
        name, Params={"Bucket": case["bucket"], **arguments}, ExpiresIn=expires)
    base, _, query = url.partition("?")
    items = [item.split("=", 1) for item in query.split("&")]
    operation_items = [item for item in items if not item[0].startswith("X-Amz-")]
    plain = base + ("?" + "&".join(f"{n}={v}" for n, v in operation_items) if operation_items else "")
    return url, plain, [{"name": unquote(n), "value": unquote(v)} for n, v in operation_items]


def presigned(case, expires, params=None):
    case = dict(case, expires=expires)
    case["url"], _, case["query"] = botocore_url(case, params or {}, expires)
    case.update(caught)
    return case


def header_signed(case, headers, body, unsigned=False, params=None):
    """S3SigV4Auth over the client's URL; `body` is hashed unless `unsigned` (UNSIGNED-PAYLOAD)."""
    _, url, query = botocore_url(case, params or {}, 60)
    request = AWSRequest(method=case["method"], url=url, headers=dict(headers), data=body)
    if unsigned:
        request.context["client_config"] = types.SimpleNamespace(s3={"payload_signing_enabled": False})
    credentials = Credentials(case["accessKeyID"], case["secretAccessKey"], case["sessionToken"])
    botocore.auth.S3SigV4Auth(credentials, "s3", case["region"]).add_auth(request)
    added = ["Authorization", "X-Amz-Date", "X-Amz-Content-SHA256", "X-Amz-Security-Token"]
    case = dict(case, url=url, query=query, headers=[{"name": name, "value": value} for name, value in headers])
    case["payload"] = "UNSIGNED-PAYLOAD" if unsigned else hashlib.sha256(body).hexdigest()
    case["signedHeaders"] = {name.lower(): request.headers[name] for name in added if name in request.headers}
    case.update(caught)
    return case


def base(name, endpoint, region, bucket, addressing="path", key="test.txt", method="GET", token=None,
         key_id=AWS_KEY_ID, secret=AWS_SECRET, when=datetime.datetime(2013, 5, 24)):
    case = {"name": name, "endpoint": endpoint, "region": region, "bucket": bucket, "addressing": addressing,
            "accessKeyID": key_id, "secretAccessKey": secret, "sessionToken": token, "method": method, "key": key}
    at(case, when)
    return case


HOSTILE_KEYS = [
    "a key with spaces", "plus+sign", "per%cent", "tilde~", "eq=uals&amp?query#fragment", "caf\u00e9",
    "cafe\u0301 (decomposed)", "\u65e5\u672c/\u8a9e.txt", "emoji \U0001F600\U0001F680", "/leading", "trailing/",
    "double//slash", "//", "products/com.example.mag/1.0/level 1.bin", "!*'();:@$,[]{}|\\^`\"<>",
    "tab\there", "x" * 1024,
]


def fixture():
    aws_s3 = "https://s3.amazonaws.com"
    vectors = {"botocore": botocore.__version__, "presigned": [], "headerSigned": []}
    out = vectors["presigned"]
    out.append(presigned(base("AWS's published example", aws_s3, "us-east-1", "examplebucket", "virtual"), 86400))
    for index, key in enumerate(HOSTILE_KEYS):
        addressing = "path" if index % 2 == 0 else "virtual"
        out.append(presigned(base(f"hostile key {index}, {addressing}", aws_s3, "us-east-1", "kiosk-content",
                                  addressing, key), 900))
    out.append(presigned(base("eu-central-1, virtual", "https://s3.eu-central-1.amazonaws.com", "eu-central-1",
                              "kiosk-content", "virtual", "products/level.bin"), 300))
    out.append(presigned(base("a custom region, a port", "http://127.0.0.1:9000", "garage", "kiosk",
                              key="products/com.example/1.0/a b.bin", when=datetime.datetime(2026, 11, 27, 18, 59, 7)),
                         60))
    out.append(presigned(base("session token", "https://s3.eu-central-1.amazonaws.com", "eu-central-1", "kiosk",
                              key="level+1.bin", token="FwoGZXIvYXdzE/Ab+c==\u00e9 x"), 3600))
    out.append(presigned(base("session token, virtual", aws_s3, "us-east-1", "kiosk-content", "virtual",
                              token="IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJ"), 604800))
    out.append(presigned(base("path prefix, path-style", "https://store.example.com/s3/v1", "garage", "kiosk",
                              key="x y"), 1))
    out.append(presigned(base("path prefix, virtual", "https://store.example.com/s3", "garage", "kiosk-content",
                              "virtual", "x y"), 120))
    out.append(presigned(base("IPv6 literal and port", "http://[::1]:9000", "us-east-1", "kiosk"), 60))
    out.append(presigned(base("upper-case host, explicit default port", "https://S3.Example.COM:443", "us-east-1",
                              "kiosk"), 60))
    out.append(presigned(base("non-default https port", "https://minio.example.com:9443", "us-west-2", "kiosk"), 60))
    out.append(presigned(base("secret with spaces and symbols", aws_s3, "us-east-1", "kiosk", key_id="AKID+/x",
                              secret="s e c r e t+/=%\u00e9"), 60))
    out.append(presigned(base("HEAD", aws_s3, "ap-southeast-2", "kiosk", method="HEAD"), 60))
    out.append(presigned(base("response overrides", aws_s3, "us-east-1", "kiosk", "virtual", "level.bin"), 600,
                         {"ResponseContentType": "application/octet-stream",
                          "ResponseContentDisposition": "attachment; filename=\"level 1.bin\""}))

    out = vectors["headerSigned"]
    body = b"the bytes of one product version\n"
    octets = [["Content-Type", "application/octet-stream"]]
    out.append(header_signed(base("PUT, path-style, body hash", "http://127.0.0.1:9000", "garage", "kiosk",
                                  key="products/com.example/1.0/level 1.bin", method="PUT"),
                             octets + [["x-amz-meta-sha256", hashlib.sha256(body).hexdigest()]], body))
    out.append(header_signed(base("PUT, virtual, session token", aws_s3, "us-east-1", "kiosk-content", "virtual",
                                  "caf\u00e9/\U0001F600+~%.bin", "PUT", token="tok/+=="), octets, body))
    out.append(header_signed(base("PUT, unsigned payload", "https://s3.eu-central-1.amazonaws.com", "eu-central-1",
                                  "kiosk", key="big.bin", method="PUT"), octets, body, unsigned=True))
    out.append(header_signed(base("HEAD, unsigned payload", "http://127.0.0.1:9000", "garage", "kiosk",
                                  key="a b/c", method="HEAD"), [], b"", unsigned=True))
    out.append(header_signed(base("HEAD, empty body hash, token", aws_s3, "us-east-1", "kiosk", method="HEAD",
                                  token="t"), [], b""))
    out.append(header_signed(base("GET with a range (AWS's header example)", aws_s3, "us-east-1", "examplebucket",
                                  "virtual"), [["Range", "bytes=0-9"]], b""))
    out.append(header_signed(base("field values trimmed and folded", "https://store.example.com/s3", "garage",
                                  "kiosk", key="k", method="PUT"),
                             [["Content-Type", "  text/plain;   charset=utf-8 "], ["X-Amz-Meta-Note", "a  b\tc"]],
                             body))
    out.append(header_signed(base("ListObjectsV2, path-style", "http://127.0.0.1:9000", "garage", "kiosk", key=None),
                             [], b"", unsigned=True, params={"Prefix": "products/com.example mag/",
                                                              "ContinuationToken": "1/x+y=="}))
    out.append(header_signed(base("ListObjectsV2, virtual", aws_s3, "eu-west-1", "kiosk-content", "virtual", None),
                             [], b"", params={"Prefix": "\u65e5\u672c/", "MaxKeys": 1000}))
    return vectors


HOSTILE_ALPHABET = (
    [chr(c) for c in range(0x20, 0x7F)] + ["\t", "\u00e9", "e\u0301", "\u00df", "\u65e5", "\u672c", "\u0416",
                                           "\U0001F600", "\U0001F680", "\u200b", "\ufeff", "//", "%2F", "%%"])
ENDPOINTS = [("https://s3.amazonaws.com", True), ("https://s3.eu-central-1.amazonaws.com", True),
             ("http://127.0.0.1:9000", False), ("http://localhost:3900", True), ("https://store.example.com/s3", True),
             ("https://minio.example.com:9443", True), ("http://[::1]:9000", False)]
# Session tokens travel in a header field too, where leading, trailing and repeated spaces are not kept as given.
TOKEN_ALPHABET = string.ascii_letters + string.digits + "/+=%&?#~-_.!*'()"
REGIONS = ["us-east-1", "eu-central-1", "ap-northeast-1", "garage", "auto", "us-gov-west-1"]


def random_vectors(seed, count):
    rng = random.Random(seed)
    vectors = {"botocore": botocore.__version__, "presigned": [], "headerSigned": []}
    for index in range(count):
        endpoint, virtual_ok = rng.choice(ENDPOINTS)
        bucket = rng.choice(["kiosk", "kiosk-content", "my.bucket.example", "b12"])
        # A dotted bucket is never virtual-hosted over https (botocore falls back to path-style, Kiosk refuses).
        addressing = "virtual" if virtual_ok and "." not in bucket and rng.random() < 0.5 else "path"
        key = "".join(rng.choice(HOSTILE_ALPHABET) for _ in range(rng.randint(1, 60)))
        token = "".join(rng.choice(TOKEN_ALPHABET) for _ in range(rng.randint(1, 80))) if rng.random() < 0.4 else None
        secret = "".join(rng.choice(HOSTILE_ALPHABET[:95]) for _ in range(40))
        when = datetime.datetime(2000, 1, 1) + datetime.timedelta(seconds=rng.randrange(40 * 365 * 86400))
        if index % 3 == 2:
            method = rng.choice(["PUT", "HEAD", "GET"])
            case = base(f"random {seed}/{index}", endpoint, rng.choice(REGIONS), bucket, addressing, key, method,
                        token, "AKIA" + str(rng.randrange(10 ** 12)), secret, when)
            body = rng.randbytes(rng.randint(0, 100)) if method == "PUT" else b""
            vectors["headerSigned"].append(
                header_signed(case, [["Content-Type", "application/octet-stream"]] if method == "PUT" else [],
                              body, unsigned=rng.random() < 0.5))
        else:
            case = base(f"random {seed}/{index}", endpoint, rng.choice(REGIONS), bucket, addressing, key,
                        rng.choice(["GET", "HEAD"]), token, "AKIA" + str(rng.randrange(10 ** 12)), secret, when)
            vectors["presigned"].append(presigned(case, rng.randint(1, 604800)))
    return vectors


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--random", type=int, metavar="SEED", help="random vectors from this seed")
    parser.add_argument("--count", type=int, default=200, help="how many random vectors (default 200)")
    arguments = parser.parse_args()
    vectors = fixture() if arguments.random is None else random_vectors(arguments.random, arguments.count)
    sys.stdout.buffer.write(json.dumps(vectors, indent=1, ensure_ascii=False).encode() + b"\n")


if __name__ == "__main__":
    main()
