#!/usr/bin/env bash
# The dashboard's browser stage (browser/): Debian's Chromium, driven by Playwright from PyPI
# (its own browser download is never used: the tests launch /usr/bin/chromium). Idempotent: a
# machine that has both installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
PLAYWRIGHT_VERSION=${PLAYWRIGHT_VERSION:-1.65.3}

if ! command -v chromium >/dev/null 2>&1; then
    as_root=""
    [ "$(id -u)" -eq 0 ] || as_root="sudo"
    $as_root apt-get install -y -q chromium >/dev/null 2>&1 || \
        { $as_root apt-get update -q >/dev/null && $as_root apt-get install -y -q chromium >/dev/null; }
fi
if ! .venv/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('playwright') != '$PLAYWRIGHT_VERSION')" \
        2>/dev/null; then
    .venv/bin/python -m pip install -q "playwright==$PLAYWRIGHT_VERSION"
fi
echo "export HERMES_CHROMIUM=$(command -v chromium)"
