#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the tests: installed from Debian's package when missing, initialised in a
# temporary folder, listening on a free port of 127.0.0.1 only, with a password-authenticated role `kiosk` that may
# create databases (each PostgreSQL test makes and drops its own). Exports KIOSK_TEST_POSTGRES_URL.
#
#   source .ci/postgres.sh && kiosk_postgres_start   # .ci/run: stopped and deleted when the shell exits
#   bash .ci/postgres.sh COMMAND…                     # alone: runs COMMAND with the cluster up, e.g.
#   bash .ci/postgres.sh .build/debug/KioskPackageTests.xctest --testing-library swift-testing --filter Schema

# Runs a command as the cluster's owner: PostgreSQL refuses to run as root.
kiosk_postgres_as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

kiosk_postgres_start() {
    local bin port password
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
        echo "== installing PostgreSQL (Debian's package)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
        bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
    fi
    KIOSK_POSTGRES_DIR=$(mktemp -d /tmp/kiosk-postgres.XXXXXX)
    KIOSK_POSTGRES_BIN=$bin
    trap kiosk_postgres_stop EXIT
    if [ "$(id -u)" = 0 ]; then chown postgres: "$KIOSK_POSTGRES_DIR"; fi
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    password=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
    kiosk_postgres_as_owner "$bin/initdb" -D "$KIOSK_POSTGRES_DIR/data" -U postgres -E UTF8 \
        --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    # fsync off: a throw-away cluster; many connections: the tests run in parallel, each with its own pool.
    kiosk_postgres_as_owner "$bin/pg_ctl" -D "$KIOSK_POSTGRES_DIR/data" -l "$KIOSK_POSTGRES_DIR/log" -w start \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $KIOSK_POSTGRES_DIR -c max_connections=300 -c fsync=off" \
        >/dev/null || { cat "$KIOSK_POSTGRES_DIR/log"; return 1; }
    kiosk_postgres_as_owner "$bin/psql" -q -h "$KIOSK_POSTGRES_DIR" -p "$port" -U postgres -d postgres \
        -v ON_ERROR_STOP=1 -c "CREATE ROLE kiosk LOGIN CREATEDB PASSWORD '$password'"
    export KIOSK_TEST_POSTGRES_URL="postgres://kiosk:$password@127.0.0.1:$port/postgres"
    echo "== PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (KIOSK_TEST_POSTGRES_URL)"
}

kiosk_postgres_stop() {
    if [ -n "${KIOSK_POSTGRES_DIR:-}" ] && [ -d "$KIOSK_POSTGRES_DIR" ]; then
        kiosk_postgres_as_owner "$KIOSK_POSTGRES_BIN/pg_ctl" -D "$KIOSK_POSTGRES_DIR/data" -m immediate -w stop \
            >/dev/null 2>&1 || true
        rm -rf "$KIOSK_POSTGRES_DIR"
    fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    kiosk_postgres_start
    "$@"
fi
