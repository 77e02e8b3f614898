#!/usr/bin/env bash
# The gateway's real-server stage (platforms/): a Synapse homeserver from PyPI, in a venv of its own
# cached by version (it pins its own Twisted and friends), and Debian's Dovecot for IMAP (the SMTP
# side is aiosmtpd from the test extra). Idempotent. Prints the lines the stage needs:
#   eval "$(bash .ci/platforms.sh)" && .venv/bin/python -m pytest -q platforms -n 0
set -euo pipefail
SYNAPSE_VERSION=${SYNAPSE_VERSION:-1.163.2}
venv=${HERMES_CI_CACHE:-$HOME/.cache/hermes-ci}/synapse-$SYNAPSE_VERSION
if ! "$venv/bin/python" -c "import synapse" 2>/dev/null; then
    rm -rf "$venv" && python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q "matrix-synapse==$SYNAPSE_VERSION" >&2
fi
if [ ! -x /usr/sbin/dovecot ] || [ ! -x /usr/lib/dovecot/dovecot-lda ]; then
    as_root=""
    [ "$(id -u)" -eq 0 ] || as_root="sudo"
    # Debian's package would start a system-wide Dovecot; the tests start their own on loopback.
    $as_root apt-get install -y -q dovecot-imapd >&2 || \
        { $as_root apt-get update -q >&2 && $as_root apt-get install -y -q dovecot-imapd >&2; }
    $as_root systemctl disable --now dovecot >/dev/null 2>&1 || true
fi
echo "export HERMES_SYNAPSE=$venv/bin/python"
echo "export HERMES_DOVECOT=/usr/sbin/dovecot"
