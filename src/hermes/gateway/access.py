"""Who may talk to the gateway: the users config.yaml lists, and those paired by a one-time code.

A stranger who writes to the bot in a one-to-one chat gets a code and nothing else (no tool runs,
no model sees the message); the owner lets them in with `hermes gateway pair CODE` at this machine.
A code lives an hour, a stranger holds at most one, and at most `MAX_PENDING` wait at once, so a
flood of strangers cannot grow the record. The record (`HERMES_HOME/gateway/access.json`) is written
under a lock by the gateway and by the command alike (see `records`); a damaged one lets in only
config's users, and is never written over.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.errors import HermesError, UsageError
from hermes.files import private_dir
from hermes.gateway.records import locked_record, read_record
from hermes.home import Home

LOG = logging.getLogger("hermes.gateway")
CODE_SECONDS = 3600.0
MAX_PENDING = 50
MAX_RECORD_BYTES = 1_000_000
_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # nothing that reads as another character


def record_path(home: Home) -> Path:
    return home.gateway / "access.json"


@dataclass(frozen=True)
class Pending:
    code: str
    platform: str
    user: str
    expires: float


class Access:
    def __init__(self, home: Home, configured: Mapping[str, tuple[str, ...]]) -> None:
        """`configured`: each platform's `allowed_users` from config.yaml."""
        self._home = home
        self._configured = {platform: frozenset(users) for platform, users in configured.items()}

    def allowed(self, platform: str, user: str) -> bool:
        """Blocking (reads the record): call it off the event loop."""
        if user in self._configured.get(platform, frozenset()):
            return True
        return user in _record(self._home, strict=False)["approved"].get(platform, [])

    def code_for(self, platform: str, user: str) -> str:
        """The stranger's pairing code: the one they hold, or a new one. Blocking."""
        now = time.time()
        with _locked(self._home) as record:
            pending = {code: p for code, p in record["pending"].items() if p["expires"] > now}
            for code, entry in pending.items():
                if entry["platform"] == platform and entry["user"] == user:
                    record["pending"] = pending
                    return str(code)
            if len(pending) >= MAX_PENDING:
                raise HermesError("Too many pairing codes are waiting; try again later.")
            code = "-".join("".join(secrets.choice(_ALPHABET) for _ in range(4)) for _ in range(2))
            pending[code] = {"platform": platform, "user": user, "expires": now + CODE_SECONDS}
            record["pending"] = pending
            return code


def pair(home: Home, code: str) -> Pending:
    """`hermes gateway pair CODE`: the code's user may talk to the gateway from now on."""
    letters = "".join(c for c in code.upper() if c.isalnum())  # `abcd efgh`, `ABCDEFGH`: the same code
    wanted = f"{letters[:4]}-{letters[4:]}" if len(letters) == 8 else code.strip().upper()
    with _locked(home) as record:
        entry = record["pending"].pop(wanted, None)
        if entry is None or entry["expires"] <= time.time():
            raise UsageError(f"No pairing code {wanted} is waiting (codes last an hour; the user gets a new one "
                             f"by writing to the bot again).")
        approved = record["approved"].setdefault(entry["platform"], [])
        if entry["user"] not in approved:
            approved.append(entry["user"])
        return Pending(wanted, entry["platform"], entry["user"], entry["expires"])


def unpair(home: Home, platform: str, user: str) -> bool:
    """Take a paired user's access away; False when they were not paired."""
    with _locked(home) as record:
        approved = record["approved"].get(platform, [])
        if user not in approved:
            return False
        approved.remove(user)
        return True


def waiting(home: Home) -> list[Pending]:
    """The strangers holding a code now, soonest to expire first."""
    now = time.time()
    found = [Pending(code, entry["platform"], entry["user"], entry["expires"])
             for code, entry in _record(home)["pending"].items() if entry["expires"] > now]
    return sorted(found, key=lambda p: p.expires)


def paired(home: Home) -> dict[str, list[str]]:
    approved: dict[str, list[str]] = _record(home)["approved"]
    return approved


def _record(home: Home, *, strict: bool = True) -> dict[str, Any]:
    """The record, its entries checked; not `strict`: an unreadable one counts as empty (and is logged)."""
    try:
        data = read_record(record_path(home), MAX_RECORD_BYTES)
    except HermesError as exc:
        if strict:
            raise
        LOG.warning("gateway: %s; only config.yaml's allowed_users may talk to it", exc)
        data = {}
    return _checked(data)


def _checked(data: dict[str, Any]) -> dict[str, Any]:
    """The record's entries that have the shape hermes writes (anything else is dropped)."""
    approved = data.get("approved") if isinstance(data.get("approved"), dict) else {}
    pending = data.get("pending") if isinstance(data.get("pending"), dict) else {}
    return {
        "approved": {str(p): [u for u in users if isinstance(u, str)] for p, users in (approved or {}).items()
                     if isinstance(users, list)},
        "pending": {str(code): entry for code, entry in (pending or {}).items()
                    if isinstance(entry, dict) and isinstance(entry.get("platform"), str)
                    and isinstance(entry.get("user"), str) and isinstance(entry.get("expires"), (int, float))},
    }


@contextmanager
def _locked(home: Home) -> Iterator[dict[str, Any]]:
    """The record, read under the lock and written back when the block ends without an error."""
    private_dir(home.gateway)
    with locked_record(record_path(home), MAX_RECORD_BYTES) as raw:
        data = _checked(raw)
        yield data
        raw.clear()
        raw.update(data)
