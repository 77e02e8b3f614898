"""Reading and editing `config.yaml` of one HERMES_HOME."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes.config.documents import DocumentCache
from hermes.config.dotenv import read_dotenv
from hermes.config.model import HermesConfig, parse_config
from hermes.config.yamltext import read_yaml_text
from hermes.errors import ConfigError
from hermes.home import Home

if TYPE_CHECKING:
    from ruamel.yaml.comments import CommentedMap

# One command may read the same file twice (the top-level checks, then the command): the typed result
# is kept by the exact text it came from, so any change to the file is read afresh. Across commands,
# the parsed document is kept on disk (`config.documents`).
_PARSED: dict[Path, tuple[str, HermesConfig]] = {}


class ConfigStore:
    """One config file: the user's `config.yaml` of HERMES_HOME, or (with `path`) a project's."""

    def __init__(self, home: Home, path: Path | None = None) -> None:
        self.home = home
        self.path = path or home.config
        self._documents = DocumentCache(home.config_documents)

    def load(self) -> HermesConfig:
        return self.parse(read_yaml_text(self.path))

    def parse(self, text: str) -> HermesConfig:
        """The config in `text`, read from this store's file by the caller."""
        kept = _PARSED.get(self.path)
        if kept is not None and kept[0] == text:
            return kept[1]
        config = self._from_kept_document(text)
        if config is None:
            config = self._parsed(text)
        _PARSED[self.path] = (text, config)
        return config

    def _from_kept_document(self, text: str) -> HermesConfig | None:
        empty: dict[str, Any] = {}
        document = self._documents.lookup(text) if text else empty
        if document is None:
            return None
        try:
            return parse_config(document, self.path)
        except ConfigError:
            return None  # parsed again from the text, so that the error names its line

    def _parsed(self, text: str) -> HermesConfig:
        from hermes.config.yamlfile import parse_yaml_text  # the round-trip parser: only for a new text

        document = parse_yaml_text(text, self.path)
        config = parse_config(document, self.path)
        self._documents.keep(text, document, lambda plain: _validates_to(plain, self.path, config))
        return config

    @contextlib.contextmanager
    def edit(self) -> Iterator[CommentedMap]:
        """Locked read-modify-write; the result must still validate or nothing is written."""
        if self.path == self.home.config:
            self.home.ensure()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        from hermes.config.yamlfile import edit_yaml

        with edit_yaml(self.path, lambda doc: parse_config(doc, self.path)) as doc:
            yield doc

    def variables(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """What `${VAR}` can see: `.env` first, the environment (the process's by default) winning over it."""
        return read_dotenv(self.home.dotenv) | dict(os.environ if environ is None else environ)


def _validates_to(document: dict[str, Any], path: Path, config: HermesConfig) -> bool:
    try:
        return parse_config(document, path) == config
    except ConfigError:
        return False
