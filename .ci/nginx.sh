#!/usr/bin/env bash
# nginx for the offload tests (Tests/EndToEndTests/NginxOffloadTests.swift): installed from Debian's package when
# missing. Each test starts its own nginx, a child of the test process on a free port of 127.0.0.1, from
# deploy/nginx/kiosk-offload.conf; this only finds the binary and exports KIOSK_TEST_NGINX.
#
#   source .ci/nginx.sh && kiosk_nginx_find   # .ci/run
#   bash .ci/nginx.sh COMMAND…                 # alone: runs COMMAND with KIOSK_TEST_NGINX set, e.g.
#   bash .ci/nginx.sh .build/debug/KioskPackageTests.xctest --testing-library swift-testing --filter NginxOffload

kiosk_nginx_find() {
    local bin
    bin=$(command -v nginx || ls /usr/sbin/nginx 2>/dev/null || true)
    if [ -z "$bin" ] || [ ! -x "$bin" ]; then
        echo "== installing nginx (Debian's package)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null 2>&1 \
            || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
        bin=$(command -v nginx || echo /usr/sbin/nginx)
    fi
    export KIOSK_TEST_NGINX=$bin
    echo "== $("$bin" -v 2>&1) at $bin (KIOSK_TEST_NGINX)"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    kiosk_nginx_find
    "$@"
fi
