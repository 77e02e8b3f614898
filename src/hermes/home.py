"""Every path under HERMES_HOME, in one place."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hermes.files import private_dir


@dataclass(frozen=True)
class Home:
    """HERMES_HOME: the folder of one user's configuration, secrets, logs and caches."""

    root: Path

    @classmethod
    def from_env(cls) -> Home:
        raw = os.environ.get("HERMES_HOME")
        return cls(Path(raw).expanduser() if raw else Path.home() / ".hermes")

    @property
    def config(self) -> Path:
        return self.root / "config.yaml"

    @property
    def dotenv(self) -> Path:
        return self.root / ".env"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def run(self) -> Path:
        return self.root / "run"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    @property
    def plugins(self) -> Path:
        return self.root / "plugins"

    @property
    def plugin_data(self) -> Path:
        return self.root / "plugin-data"

    @property
    def mcp_catalog(self) -> Path:
        return self.root / "mcp-catalog"

    @property
    def tokens(self) -> Path:
        return self.root / "mcp-tokens"

    @property
    def known_tools(self) -> Path:
        return self.cache / "known-tools.json"

    @property
    def config_documents(self) -> Path:
        """Config files' parsed documents, by digest of their text (a bounded cache)."""
        return self.cache / "config-documents.json"

    @property
    def tool_vectors(self) -> Path:
        """Tools' meaning vectors for search, by digest of their text (a bounded cache)."""
        return self.cache / "tool-vectors.npz"

    @property
    def results(self) -> Path:
        """Whole texts of results that were cut for a model (bounded; oldest removed first)."""
        return self.root / "results"

    @property
    def tool_pins(self) -> Path:
        """The pinned tool definitions (not a cache: removing it forgets what the user accepted)."""
        return self.root / "tool-pins.json"

    @property
    def chat_history(self) -> Path:
        """What was typed at the chat prompt (private: people paste secrets there)."""
        return self.root / "chat_history"

    @property
    def gateway(self) -> Path:
        """`hermes gateway`'s own state: who may talk to it, its rooms' folders, its process."""
        return self.root / "gateway"

    def server_log(self, server: str) -> Path:
        return self.logs / f"mcp-{server}.log"

    def token_file(self, server: str) -> Path:
        return self.tokens / f"{server}.json"

    def client_file(self, server: str) -> Path:
        return self.tokens / f"{server}.client.json"

    def has_tokens(self, server: str) -> bool:
        return self.token_file(server).exists()

    def ensure(self) -> None:
        """Create HERMES_HOME if needed; a home hermes creates is private to the user (0700)."""
        private_dir(self.root)
