"""A YAML config file's text, read like any hostile input: bounded in size, UTF-8 only.

Apart from `yamlfile` (the round-trip parser) so that a command that finds the file's document
already parsed (`config.documents`) never imports the parser.
"""

from __future__ import annotations

from pathlib import Path

from hermes.errors import ConfigError
from hermes.files import TooLarge, UnreadableFile, read_text_bounded

MAX_CONFIG_BYTES = 4 * 1024 * 1024


def read_yaml_text(path: Path) -> str:
    """The file's text, size-capped; a missing file reads as empty."""
    try:
        return read_text_bounded(path, MAX_CONFIG_BYTES)
    except FileNotFoundError:
        return ""
    except TooLarge:
        raise ConfigError(f"is larger than {MAX_CONFIG_BYTES} bytes.", path=path) from None
    except UnreadableFile as exc:
        raise ConfigError(f"cannot be read: {exc.reason}.", path=path) from None
