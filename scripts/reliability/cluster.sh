#!/usr/bin/env bash
# Three `kiosk serve` instances sharing one PostgreSQL database, behind nginx as load balancer
# (deploy/nginx/kiosk-cluster.conf), checked as one service (#30; RELIABILITY.md, "A cluster"):
#
#   scripts/reliability/cluster.sh
#
# It builds Kiosk (release; KIOSK_BIN skips the build), installs nginx and PostgreSQL from Debian's packages when
# missing, starts a throw-away PostgreSQL cluster on a free loopback port (.ci/postgres.sh), and runs
# scripts/reliability/cluster.py, which prints each check as PASS or FAIL and exits 1 on any FAIL.
#
# Environment knobs: CLUSTER_BIG_MIB (512), CLUSTER_THROTTLE (8MiB/s), CLUSTER_ROUNDS (20), KIOSK_BIN.
set -euo pipefail
LOG_TAG=cluster
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_tools nginx python3
build_kiosk
source "$REPO_ROOT/.ci/postgres.sh"
kiosk_postgres_start
export KIOSK_BIN KIOSK_POSTGRES_BIN REPO_ROOT
python3 "$REPO_ROOT/scripts/reliability/cluster.py"
