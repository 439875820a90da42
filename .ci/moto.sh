#!/usr/bin/env bash
# An S3 emulator for the tests: moto_server (moto from PyPI), installed when missing, on a free port of 127.0.0.1.
# Exports KIOSK_TEST_S3_ENDPOINT (http://127.0.0.1:PORT); each test makes a bucket of its own. moto serves ranged GETs
# and checks no signature: the signer's own tests (against botocore) carry that.
#
#   source .ci/moto.sh && kiosk_moto_start   # .ci/run: stopped when the shell exits (with kiosk_moto_stop)
#   bash .ci/moto.sh COMMAND…                 # alone: runs COMMAND with the emulator up

kiosk_moto_start() {
    local port
    command -v moto_server >/dev/null || python3 -c "import moto.server" 2>/dev/null ||
        pip install --quiet "moto[server]"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    KIOSK_MOTO_LOG=$(mktemp /tmp/kiosk-moto.XXXXXX)
    python3 -m moto.server -H 127.0.0.1 -p "$port" >"$KIOSK_MOTO_LOG" 2>&1 &
    KIOSK_MOTO_PID=$!
    for _ in $(seq 1 300); do
        if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/moto-api/', timeout=1)" \
            2>/dev/null; then
            export KIOSK_TEST_S3_ENDPOINT="http://127.0.0.1:$port"
            echo "== moto $(python3 -c 'import moto; print(moto.__version__)') on 127.0.0.1:$port" \
                "(KIOSK_TEST_S3_ENDPOINT)"
            return 0
        fi
        sleep 0.1
    done
    cat "$KIOSK_MOTO_LOG"
    return 1
}

kiosk_moto_stop() {
    if [ -n "${KIOSK_MOTO_PID:-}" ]; then
        kill "$KIOSK_MOTO_PID" 2>/dev/null || true
        wait "$KIOSK_MOTO_PID" 2>/dev/null || true
        rm -f "$KIOSK_MOTO_LOG"
    fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    trap kiosk_moto_stop EXIT
    kiosk_moto_start
    "$@"
fi
