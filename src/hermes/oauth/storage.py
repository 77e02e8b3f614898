"""Token and client-registration files: HERMES_HOME/mcp-tokens/<server>.json (+ .client.json).

Files are 0600 in a 0700 folder and replaced atomically, so a rotated refresh token is saved
whole the moment it arrives.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hermes.config.yamlfile import atomic_write
from hermes.home import Home


def token_path(home: Home, server: str) -> Path:
    return home.tokens / f"{server}.json"


def client_path(home: Home, server: str) -> Path:
    return home.tokens / f"{server}.client.json"


def ensure_folder(home: Home) -> None:
    home.tokens.mkdir(parents=True, exist_ok=True)
    os.chmod(home.tokens, 0o700)


def write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(data, indent=2) + "\n", mode=0o600)


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def has_tokens(home: Home, server: str) -> bool:
    return token_path(home, server).exists()


def delete_tokens(home: Home, server: str) -> list[Path]:
    removed = []
    for path in (token_path(home, server), client_path(home, server)):
        if path.exists():
            path.unlink()
            removed.append(path)
    return removed
