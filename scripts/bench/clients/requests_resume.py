#!/usr/bin/env python3
"""A plain resume loop with Python `requests`, as a tool author would write it: one attempt per call.

    requests_resume.py URL OUTPUT

Resumes from the size of OUTPUT when it exists (`Range: bytes=N-`), appends a 206 and starts over on a 200; exits 0
when the body came whole, 1 on an HTTP error status or a broken connection (the caller loops).
"""

import os
import sys

import requests


def main() -> int:
    url, output = sys.argv[1], sys.argv[2]
    have = os.path.getsize(output) if os.path.exists(output) else 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    try:
        with requests.get(url, headers=headers, stream=True, timeout=30) as response:
            if response.status_code == 416 and have:
                return 0  # what the loop takes as "already complete"
            response.raise_for_status()
            mode = "ab" if response.status_code == 206 else "wb"
            with open(output, mode) as file:
                for chunk in response.iter_content(chunk_size=65536):
                    file.write(chunk)
    except (requests.RequestException, OSError) as error:
        print(f"requests: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
