"""A team user's own corner of the replica's HERMES_HOME.

The configuration, plugins and caches are the team's; what is one user's stays apart: their
servers' logs, their cut results and the tool definitions they have seen (a server's tools may
differ by account: one user's first look must not decide what another is offered), under
`team-users/<digest of the user's name>/` (a digest: user names come from tokens and may hold any
character). Their OAuth tokens and tool pins are in the team's database, the same on every replica.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from hermes.files import private_dir
from hermes.home import Home


def user_folder(home: Home, user: str) -> Path:
    return home.root / "team-users" / hashlib.sha256(user.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class UserHome(Home):
    user_root: Path = Path()

    @classmethod
    def of(cls, home: Home, user: str) -> UserHome:
        return cls(home.root, user_folder(home, user))

    @property
    def tokens(self) -> Path:
        return self.user_root / "mcp-tokens"

    @property
    def logs(self) -> Path:
        return self.user_root / "logs"

    @property
    def results(self) -> Path:
        return self.user_root / "results"

    @property
    def tool_pins(self) -> Path:
        return self.user_root / "tool-pins.json"  # only where no record is given (the database has them)

    @property
    def known_tools(self) -> Path:
        return self.user_root / "known-tools.json"

    def ensure(self) -> None:
        super().ensure()
        private_dir(self.user_root.parent)
        private_dir(self.user_root)
