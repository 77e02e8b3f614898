#!/usr/bin/env bash
# The gateway's Matrix stage (platforms/): a real Synapse homeserver from PyPI, in a venv of its own
# cached by version (it pins its own Twisted and friends). Prints the one line the stage needs:
#   eval "$(bash .ci/synapse.sh)" && .venv/bin/python -m pytest -q platforms -n 0
set -euo pipefail
SYNAPSE_VERSION=${SYNAPSE_VERSION:-1.163.2}
venv=${HERMES_CI_CACHE:-$HOME/.cache/hermes-ci}/synapse-$SYNAPSE_VERSION
if ! "$venv/bin/python" -c "import synapse" 2>/dev/null; then
    rm -rf "$venv" && python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q "matrix-synapse==$SYNAPSE_VERSION" >&2
fi
echo "export HERMES_SYNAPSE=$venv/bin/python"
