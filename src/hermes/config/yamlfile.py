"""Round-trip YAML files: read with positions, write atomically under a lock.

Edits go through `edit_yaml`, which holds an exclusive file lock across read-modify-write so that
concurrent `hermes` processes never lose each other's changes, and replaces the file with a rename
so a reader never sees half a file. Comments, key order and formatting survive (ruamel round-trip).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from hermes.errors import ConfigError

if TYPE_CHECKING:
    from filelock import FileLock


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def load_yaml(path: Path) -> CommentedMap:
    """Parse `path` into a round-trip mapping; a missing or empty file is an empty mapping."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return CommentedMap()
    except OSError as exc:
        raise ConfigError(f"cannot be read ({exc.strerror}).", path=path) from None
    try:
        data = _yaml().load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(f"is not valid YAML: {problem}.", path=path, line=line) from None
    except YAMLError as exc:
        raise ConfigError(f"is not valid YAML: {exc}.", path=path) from None
    if data is None:
        return CommentedMap()
    if not isinstance(data, CommentedMap):
        raise ConfigError("must hold a mapping at the top level.", path=path, line=1)
    return data


def line_of(doc: Any, loc: tuple[int | str, ...]) -> int | None:
    """1-based line of the deepest node of `loc` that exists in the round-trip document."""
    node = doc
    line: int | None = None
    for part in loc:
        if isinstance(node, CommentedMap) and part in node:
            pos = node.lc.key(part)
            line = pos[0] + 1 if pos else line
            node = node[part]
        elif isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
            pos = node.lc.item(part)
            line = pos[0] + 1 if pos else line
            node = node[part]
        else:
            break
    return line


def dump_yaml(doc: CommentedMap) -> str:
    buf = io.StringIO()
    _yaml().dump(doc, buf)
    return buf.getvalue()


def atomic_write(path: Path, text: str, *, mode: int = 0o600) -> None:
    """Replace `path` with `text` through a temp file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def file_lock(path: Path) -> FileLock:
    # Imported here: only editing commands lock, and filelock's import is not free.
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path.with_name(path.name + ".lock")), timeout=30)


@contextlib.contextmanager
def edit_yaml(path: Path, validate: Callable[[CommentedMap], object]) -> Iterator[CommentedMap]:
    """Yield the locked document for editing; on a clean exit validate it and write it back.

    If the body raises, or the edited document fails `validate`, nothing is written.
    """
    with file_lock(path):
        doc = load_yaml(path)
        yield doc
        validate(doc)
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
        atomic_write(path, dump_yaml(doc), mode=mode)
