"""A stand-in for the user's browser, started by Python's webbrowser module through $BROWSER.

FAKE_BROWSER_MODE: follow (approve and come back to the callback), detach (the same, from a process
of its own, returning at once the way a real browser's launcher does), tamper (come back with a
wrong state), print (write the final redirect URL to FAKE_BROWSER_OUT instead of visiting it),
never (do nothing). Every start is appended to FAKE_BROWSER_LOG.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return None


def final_location(url: str) -> str:
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(url, timeout=20)
    except urllib.error.HTTPError as exc:
        if exc.code in (301, 302, 303, 307, 308):
            return str(exc.headers["Location"])
        raise
    raise SystemExit("the authorization endpoint did not redirect")


def main() -> None:
    url = sys.argv[1]
    with open(os.environ["FAKE_BROWSER_LOG"], "a") as log:
        log.write(url + "\n")
    mode = os.environ.get("FAKE_BROWSER_MODE", "follow")
    if mode == "never":
        return
    if mode == "detach":
        import subprocess

        subprocess.Popen([sys.executable, __file__, url], env={**os.environ, "FAKE_BROWSER_MODE": "follow",
                                                                 "FAKE_BROWSER_LOG": os.devnull},
                         start_new_session=True, stdin=subprocess.DEVNULL)
        return
    location = final_location(url)
    if mode == "tamper":
        parts = urlsplit(location)
        query = [(k, "forged-state" if k == "state" else v) for k, v in parse_qsl(parts.query)]
        location = urlunsplit(parts._replace(query=urlencode(query)))
    if mode == "print":
        # Whole or not at all: a test waits for the file to appear, then pastes what it holds.
        target = os.environ["FAKE_BROWSER_OUT"]
        with open(target + ".part", "w") as out:
            out.write(location)
        os.replace(target + ".part", target)
        return
    urllib.request.urlopen(location, timeout=20).read()


if __name__ == "__main__":
    main()
