"""Reading and editing `config.yaml` of one HERMES_HOME."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping

from ruamel.yaml.comments import CommentedMap

from hermes.config.dotenv import read_dotenv
from hermes.config.model import HermesConfig, parse_config
from hermes.config.yamlfile import edit_yaml, load_yaml
from hermes.home import Home


class ConfigStore:
    def __init__(self, home: Home) -> None:
        self.home = home

    def document(self) -> CommentedMap:
        return load_yaml(self.home.config)

    def load(self) -> HermesConfig:
        return parse_config(self.document(), self.home.config)

    @contextlib.contextmanager
    def edit(self) -> Iterator[CommentedMap]:
        """Locked read-modify-write; the result must still validate or nothing is written."""
        self.home.ensure()
        with edit_yaml(self.home.config, lambda doc: parse_config(doc, self.home.config)) as doc:
            yield doc

    def variables(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """What `${VAR}` can see: `.env` first, the environment (the process's by default) winning over it."""
        return read_dotenv(self.home.dotenv) | dict(os.environ if environ is None else environ)
