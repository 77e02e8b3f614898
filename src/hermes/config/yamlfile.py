"""Round-trip YAML files: read with positions, write atomically under a lock.

Edits go through `edit_yaml`, which holds an exclusive file lock across read-modify-write so that
concurrent `hermes` processes never lose each other's changes, and replaces the file with a rename
so a reader never sees half a file. Comments, key order and formatting survive (ruamel round-trip).

The file is read like any hostile input: bounded in size, UTF-8 only, and nested no deeper than
any real configuration needs; every problem is one `ConfigError` naming the file (and the line
where the parser knows it), never a traceback.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from hermes.config.yamltext import read_yaml_text
from hermes.errors import ConfigError
from hermes.files import atomic_write, file_lock, write_target

MAX_DEPTH = 64


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def _nesting(text: str) -> int:
    """An upper bound on how deeply flow collections nest (`[[[[`), cheap to compute before parsing.

    Brackets inside quotes and after a `#` do not count: a value such as "[[x]]" is text.
    """
    depth = deepest = 0
    quote: str | None = None
    comment = False
    for char in text:
        if comment:
            comment = char != "\n"
        elif quote is not None:
            if char == quote or (char == "\n" and quote == "'"):
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#":
            comment = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(0, depth - 1)
    return deepest


MAX_VALUES = 200_000  # every value counted as often as aliases repeat it: a "billion laughs" stops here
_PLAIN_TAGS = ("tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
               "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


def _tag(node: Any) -> str | None:
    tag = getattr(node, "tag", None)
    value = getattr(tag, "value", tag)
    return value if isinstance(value, str) and value else None


def _check_shape(node: Any, path: Path) -> None:
    try:
        shape_problem(node)
    except _ShapeProblem as problem:
        raise ConfigError(str(problem), path=path, line=problem.line) from None


class _ShapeProblem(ValueError):
    def __init__(self, rule: str, line: int | None = None) -> None:
        super().__init__(rule)
        self.line = line


def shape_problem(node: Any) -> None:
    """Raise ValueError (the rule) unless: every key is a scalar, nothing nests deeper than MAX_DEPTH,
    no type tags, and aliases do not expand past MAX_VALUES values (readers walk the expanded tree)."""
    budget = [MAX_VALUES]

    def walk(node: Any, depth: int) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            raise _ShapeProblem(f"expands to more than {MAX_VALUES} values (YAML anchors and aliases repeated "
                                f"over and over); write the values out.")
        if depth > MAX_DEPTH:
            raise _ShapeProblem(f"nests deeper than {MAX_DEPTH} levels.")
        tag = _tag(node)
        if tag is not None and tag not in _PLAIN_TAGS:
            raise _ShapeProblem(f"uses the YAML tag '{tag}', which a config file has no use for; remove it.")
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, (dict, list, tuple)):
                    line = node.lc.key(key)[0] + 1 if isinstance(node, CommentedMap) and node.lc.key(key) else None
                    raise _ShapeProblem("has a mapping key that is not plain text (a complex key).", line)
                walk(value, depth + 1)
        elif isinstance(node, list):
            for value in node:
                walk(value, depth + 1)

    walk(node, 0)


def load_small_yaml(text: str) -> Any:
    """YAML that is not a config file (a skill's frontmatter): parsed without expanding aliases,
    then held to the same shape rules; ValueError (the rule) when it breaks one."""
    if _nesting(text) > MAX_DEPTH:
        raise ValueError(f"nests deeper than {MAX_DEPTH} levels")
    try:
        data = YAML(typ="rt").load(text)
    except (YAMLError, RecursionError, TypeError) as exc:
        raise ValueError(f"is not valid YAML ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") \
            from None
    shape_problem(data)
    return data


def load_yaml(path: Path) -> CommentedMap:
    """Parse `path` into a round-trip mapping; a missing or empty file is an empty mapping."""
    return parse_yaml_text(read_yaml_text(path), path)


def parse_yaml_text(text: str, path: Path) -> CommentedMap:
    """`text` (read from `path`, which errors name) as a round-trip mapping."""
    if not text:
        return CommentedMap()
    if _nesting(text) > MAX_DEPTH:
        raise ConfigError(f"nests deeper than {MAX_DEPTH} levels.", path=path)
    try:
        data = _yaml().load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(f"is not valid YAML: {problem}.", path=path, line=line) from None
    except (YAMLError, RecursionError, ValueError, TypeError) as exc:
        # ruamel raises plain Python errors for some inputs (deep nesting, unhashable keys).
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"is not valid YAML: {detail}.", path=path) from None
    if data is None:
        return CommentedMap()
    if not isinstance(data, CommentedMap):
        raise ConfigError("must hold a mapping at the top level.", path=path, line=1)
    _check_shape(data, path)
    return data


def line_of(doc: Any, loc: tuple[int | str, ...]) -> int | None:
    """1-based line of the deepest node of `loc` that exists in the round-trip document."""
    node = doc
    line: int | None = None
    for part in loc:
        try:
            if isinstance(node, CommentedMap) and part in node:
                pos = node.lc.key(part)
            elif isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
                pos = node.lc.item(part)
            else:
                break
        except (KeyError, IndexError):  # a node added by an edit has no position until it is written
            break
        line = pos[0] + 1 if pos else line
        node = node[part]
    return line


def dump_yaml(doc: CommentedMap) -> str:
    buf = io.StringIO()
    _yaml().dump(doc, buf)
    return buf.getvalue()


@contextmanager
def edit_yaml(path: Path, validate: Callable[[CommentedMap], object]) -> Iterator[CommentedMap]:
    """Yield the locked document for editing; on a clean exit validate it and write it back.

    If the body raises, or the edited document fails `validate`, nothing is written. A symlinked
    file is written through to its target; a read-only file is refused, not replaced.
    """
    target = write_target(path)
    # The write bits, not os.access: root may write anything, and a file its owner made read-only
    # says "do not change me" to every user.
    if target.exists() and (not target.stat().st_mode & 0o222 or not os.access(target, os.W_OK)):
        raise ConfigError("is read-only; hermes will not replace it. Make it writable or edit it by hand.",
                          path=path)
    with file_lock(path):
        doc = load_yaml(path)
        yield doc
        validate(doc)
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
        atomic_write(target, dump_yaml(doc), mode=mode)
