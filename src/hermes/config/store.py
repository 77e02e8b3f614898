"""Reading and editing `config.yaml` of one HERMES_HOME."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from ruamel.yaml.comments import CommentedMap

from hermes.config.dotenv import read_dotenv
from hermes.config.model import HermesConfig, parse_config
from hermes.config.yamlfile import edit_yaml, parse_yaml_text, read_yaml_text
from hermes.home import Home

# Round-trip parsing is the slow part of every command (tens of ms for a large file), and one command
# may read the same file twice (the top-level checks, then the command): the typed result is kept by
# the exact text it came from, so any change to the file is parsed afresh.
_PARSED: dict[Path, tuple[str, HermesConfig]] = {}


class ConfigStore:
    """One config file: the user's `config.yaml` of HERMES_HOME, or (with `path`) a project's."""

    def __init__(self, home: Home, path: Path | None = None) -> None:
        self.home = home
        self.path = path or home.config

    def load(self) -> HermesConfig:
        return self.parse(read_yaml_text(self.path))

    def parse(self, text: str) -> HermesConfig:
        """The config in `text`, read from this store's file by the caller."""
        kept = _PARSED.get(self.path)
        if kept is not None and kept[0] == text:
            return kept[1]
        config = parse_config(parse_yaml_text(text, self.path), self.path)
        _PARSED[self.path] = (text, config)
        return config

    @contextlib.contextmanager
    def edit(self) -> Iterator[CommentedMap]:
        """Locked read-modify-write; the result must still validate or nothing is written."""
        if self.path == self.home.config:
            self.home.ensure()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        with edit_yaml(self.path, lambda doc: parse_config(doc, self.path)) as doc:
            yield doc

    def variables(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """What `${VAR}` can see: `.env` first, the environment (the process's by default) winning over it."""
        return read_dotenv(self.home.dotenv) | dict(os.environ if environ is None else environ)
