"""One transaction for every edit of config.yaml and .env: all of it lands, or none of it does.

`hermes mcp install`, `add`, `add-json` and `import` change up to three files (`.env` for secrets,
config.yaml, a project's config). Each single write is atomic already; the transaction makes the
whole command atomic too. The files are read first; anything that escapes the block (an error, a
Ctrl-C at any prompt, a failed probe or login) puts every one of them back byte for byte, and a
file that did not exist before is removed again. A caller that decides to undo on its own (the
user declines to keep a server that did not start) calls `rollback()`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from hermes import sigint
from hermes.config.dotenv import MAX_DOTENV_BYTES
from hermes.config.yamltext import MAX_CONFIG_BYTES
from hermes.errors import ConfigError
from hermes.files import UnreadableFile, restore, snapshot
from hermes.home import Home


class Transaction:
    def __init__(self, paths: tuple[Path, ...]) -> None:
        self.paths = paths
        try:
            self._before = snapshot(*paths, limit=max(MAX_CONFIG_BYTES, MAX_DOTENV_BYTES))
        except UnreadableFile as exc:  # a FIFO, a folder, a file too large: nothing is edited
            raise ConfigError(f"cannot be read: {exc.reason}.", path=exc.path) from None

    def rollback(self) -> None:
        # Putting the files back is not cut short: a Ctrl-C pressed again meanwhile (or a SIGTERM)
        # acts once every file is as it was.
        with sigint.held():
            restore(self._before)


@contextlib.contextmanager
def edit_transaction(home: Home, *also: Path) -> Iterator[Transaction]:
    """config.yaml and .env of `home` (and the files in `also`) as one change."""
    paths = tuple(dict.fromkeys((home.config, home.dotenv, *also)))
    transaction = Transaction(paths)
    try:
        yield transaction
    except BaseException:
        transaction.rollback()
        raise
