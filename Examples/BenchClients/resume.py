# resume.py URL FILE — a careful resume loop in Python 3 (standard library only): each answer's head is checked
# before a byte of it is written (status, Content-Range against the range asked, the file's ETag and Repr-Digest,
# no content coding, no HTML error page), a file that changed is started over, no redirect to another origin is
# followed, and Repr-Digest is checked at the end. Exit status: 0 saved, 75 stopped with the bytes kept (run
# again, with a renewed URL after a 401, 403 or 410, to resume), 1 failed.
import base64, hashlib, http.client, json, os, re, sys, time, urllib.error, urllib.parse, urllib.request

url, path = sys.argv[1], sys.argv[2]
part, state_path = path + ".part", path + ".part.json"
origin = urllib.parse.urlsplit(url)[:2]


class SameOriginOnly(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, request, fp, code, message, headers, new_url):
        if urllib.parse.urlsplit(new_url)[:2] != origin:
            raise SystemExit(f"refused: a redirect to another origin ({new_url})")
        return super().redirect_request(request, fp, code, message, headers, new_url)


opener = urllib.request.build_opener(SameOriginOnly)


def start_over():
    for name in (part, state_path):
        if os.path.exists(name):
            os.remove(name)


for attempt in range(8):
    if attempt:
        time.sleep(1)
    state = json.load(open(state_path)) if os.path.exists(state_path) and os.path.exists(part) else {}
    have = os.path.getsize(part) if state else 0
    request = urllib.request.Request(url, headers={"Accept-Encoding": "identity"})
    if have and state.get("etag", "").startswith('"'):  # If-Range needs a strong tag
        request.add_header("Range", f"bytes={have}-")
        request.add_header("If-Range", state["etag"])
    try:
        with opener.open(request, timeout=30) as response:
            headers = response.headers
            if headers.get("Content-Encoding", "identity") != "identity":
                raise ValueError("a content coding that was not asked for")
            if headers.get_content_type() == "text/html" and "Repr-Digest" not in headers:
                raise ValueError("an HTML error page instead of the file")
            if response.status == 206:
                match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", headers.get("Content-Range", ""))
                if not match or int(match[1]) != have or int(match[2]) != int(match[3]) - 1:
                    raise ValueError("not the range asked for")
                if headers.get("ETag") != state.get("etag") or headers.get("Repr-Digest") != state.get("digest"):
                    start_over()
                    raise ValueError("the file changed on the server")
                mode = "ab"
            else:
                start_over()
                length = int(headers.get("Content-Length", "-1"))
                state = {"etag": headers.get("ETag", ""), "digest": headers.get("Repr-Digest", ""), "length": length}
                json.dump(state, open(state_path, "w"))
                mode = "wb"
            with open(part, mode) as out:
                while chunk := response.read(1 << 16):
                    out.write(chunk)
        if os.path.getsize(part) < state["length"]:
            raise ValueError(f"cut after {os.path.getsize(part)} of {state['length']} bytes")
        sha256 = hashlib.sha256()
        with open(part, "rb") as saved:
            while chunk := saved.read(1 << 20):
                sha256.update(chunk)
        announced = re.search(r"sha-256=:([^:]+):", state.get("digest", ""))
        if announced and base64.b64decode(announced[1]) != sha256.digest():
            start_over()
            raise ValueError("the bytes do not match Repr-Digest")
        os.replace(part, path)
        os.remove(state_path)
        sys.exit(0)
    except urllib.error.HTTPError as error:
        print(f"attempt {attempt + 1}: {error.code}", file=sys.stderr)
        if error.code == 416:
            start_over()
        elif error.code in (401, 403, 410):  # a signed URL that expired: run again with a new one to resume
            print(f"refused: {error.code} {error.reason}; the bytes are kept", file=sys.stderr)
            sys.exit(75)
        elif error.code not in (408, 429) and error.code < 500:
            sys.exit(f"refused: {error.code} {error.reason}")
    except (OSError, ValueError, http.client.HTTPException) as error:
        print(f"attempt {attempt + 1}: {error}", file=sys.stderr)
sys.exit("gave up after 8 attempts; run again to resume")
