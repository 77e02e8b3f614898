#!/usr/bin/env bash
# The team gateway's cluster stage (teamscale/): Debian's PostgreSQL server and HAProxy, started by
# the tests themselves on loopback. Idempotent. Prints the lines the stage needs:
#   eval "$(bash .ci/teamscale.sh)" && .venv/bin/python -m pytest -q teamscale -n 0
set -euo pipefail
as_root=""
[ "$(id -u)" -eq 0 ] || as_root="sudo"
need=()
command -v haproxy >/dev/null 2>&1 || need+=(haproxy)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
    $as_root apt-get install -y -q "${need[@]}" >&2 || \
        { $as_root apt-get update -q >&2 && $as_root apt-get install -y -q "${need[@]}" >&2; }
    # Debian's packages start system-wide services; the tests start their own.
    $as_root systemctl disable --now haproxy postgresql >/dev/null 2>&1 || true
fi
bin=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")
echo "export HERMES_POSTGRES_BIN=$bin"
echo "export HERMES_HAPROXY=$(command -v haproxy)"
