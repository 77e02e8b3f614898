"""Users' upstream credentials, sealed at rest with the team's key (Fernet: AES-128-CBC + HMAC-SHA256).

A sealed value also carries whose credential it is and its name, checked when opened: a row copied
to another user, or renamed in the database, does not open.
"""

from __future__ import annotations

import json

from cryptography.fernet import Fernet, InvalidToken

from hermes.errors import ConfigError


def new_key() -> str:
    return Fernet.generate_key().decode()


class Sealer:
    def __init__(self, key: str | None) -> None:
        self._fernet: Fernet | None = None
        if key is not None:
            try:
                self._fernet = Fernet(key.encode())
            except (ValueError, TypeError):
                raise ConfigError("must be a key made by `hermes team key` (32 bytes, URL-safe base64)",
                                  key="team.secret_key") from None

    def _need(self) -> Fernet:
        if self._fernet is None:
            raise ConfigError("is needed to keep users' credentials (make one with `hermes team key`)",
                              key="team.secret_key")
        return self._fernet

    def seal(self, user: str, name: str, value: str) -> str:
        return self._need().encrypt(json.dumps({"u": user, "n": name, "v": value}).encode()).decode()

    def open(self, user: str, name: str, sealed: str) -> str | None:
        """The value, or None when it does not open with this key or belongs to someone else."""
        try:
            data = json.loads(self._need().decrypt(sealed.encode()))
        except (InvalidToken, ValueError):
            return None
        if not isinstance(data, dict) or data.get("u") != user or data.get("n") != name:
            return None
        value = data.get("v")
        return value if isinstance(value, str) else None

    def __repr__(self) -> str:
        return f"Sealer(key={'<hidden>' if self._fernet else None})"
