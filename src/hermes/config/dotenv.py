"""The `.env` file of HERMES_HOME: KEY=VALUE lines holding secrets, always mode 0600."""

from __future__ import annotations

import re
import stat
from pathlib import Path

from hermes.errors import ConfigError
from hermes.files import TooLarge, UnreadableFile, atomic_write, file_lock, read_text_bounded

MAX_VALUE_CHARS = 32 * 1024  # Linux refuses one environment string over 128 KiB
MAX_DOTENV_BYTES = 1024 * 1024
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Every character some reader takes as the end of a line (Python's str.splitlines, editors, shells).
# A value holding one would end its line early, and what follows could set another key.
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _lines(text: str) -> list[str]:
    """The file's lines: split at LF only (a CR before it dropped), never at the other characters
    `str.splitlines` splits at, which a value may hold (U+2028 in a pasted token, say)."""
    return [line.removesuffix("\r") for line in text.split("\n")] if text else []


def _environment_problem(key: str, value: str) -> str | None:
    """Why `value` cannot be a server's environment variable (reading and writing keep one rule)."""
    if "\x00" in value:
        return f"{key}: the value contains a NUL character, which no environment can hold"
    if len(value) > MAX_VALUE_CHARS:
        return (f"{key}: the value is longer than {MAX_VALUE_CHARS} characters, more than a server's environment "
                f"can take")
    return None


def _written(key: str, value: str, path: Path) -> str:
    """`value` as it goes into `.env`, so that reading gives it back exactly; refused when no line can hold it."""
    breaks = sorted({f"U+{ord(c):04X}" for c in value if c in LINE_BREAKS})
    if breaks:
        raise ConfigError(f"{key}: the value holds a line break ({', '.join(breaks)}), which would end its line in "
                          f"this file and could set another key; nothing was written.", path=path)
    problem = _environment_problem(key, value)
    if problem:
        raise ConfigError(f"{problem}; nothing was written.", path=path)
    # Reading strips spaces and one pair of outer quotes: such a value is kept whole in single quotes.
    if value != value.strip() or _unquote(value) != value:
        return f"'{value}'"
    return value


def exposure_warning(path: Path) -> str | None:
    """A sentence when `.env` can be read by other users (it holds secrets), else None."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) and mode & 0o077:
        return (f"{path} is readable by other users (mode {mode & 0o777:o}); it holds secrets: "
                f"run `chmod 600 {path}`.")
    return None


def read_dotenv(path: Path) -> dict[str, str]:
    try:
        text = read_text_bounded(path, MAX_DOTENV_BYTES)
    except FileNotFoundError:
        return {}
    except TooLarge:
        raise ConfigError(f"is larger than {MAX_DOTENV_BYTES} bytes.", path=path) from None
    except UnreadableFile as exc:
        raise ConfigError(f"cannot be read: {exc.reason}.", path=path) from None
    values: dict[str, str] = {}
    for number, raw in enumerate(_lines(text.removeprefix("\ufeff")), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not _KEY.match(key):
            raise ConfigError("each line must be KEY=VALUE.", path=path, line=number)
        value = _unquote(value.strip())
        problem = _environment_problem(key, value)
        if problem:
            raise ConfigError(f"{problem}.", path=path, line=number)
        values[key] = value
    return values


def set_dotenv(path: Path, updates: dict[str, str]) -> None:
    """Set keys in `.env`, keeping every other line as it was; the file stays 0600."""
    for key in updates:
        if not _KEY.match(key):
            raise ConfigError(f"'{key}' is not a valid variable name.", path=path)
    written = {key: _written(key, value, path) for key, value in updates.items()}
    with file_lock(path):
        try:
            lines = _lines(read_text_bounded(path, MAX_DOTENV_BYTES))
        except FileNotFoundError:
            lines = []
        except UnreadableFile as exc:
            raise ConfigError(f"cannot be read: {exc.reason}.", path=path) from None
        pending = dict(written)
        out: list[str] = []
        while lines and not lines[-1]:
            lines.pop()  # the final newline, added back below
        for raw in lines:
            key = raw.strip().removeprefix("export ").partition("=")[0].strip()
            if key in pending:
                out.append(f"{key}={pending.pop(key)}")
            elif key not in written:
                out.append(raw)
            # else: a second line for a key just set; reading takes the last, so it must go
        out.extend(f"{key}={value}" for key, value in pending.items())
        atomic_write(path, "\n".join(out) + "\n", mode=0o600)


def secrets_to_dotenv(path: Path, secrets: dict[str, str]) -> dict[str, str]:
    """Write `secrets` to the .env at `path` under their names; a name already holding a different
    value gets a numbered suffix. Returns the renames (old name -> name used)."""
    if not secrets:
        return {}
    existing = read_dotenv(path)
    chosen: dict[str, str] = {}
    renames: dict[str, str] = {}
    for name, value in secrets.items():
        final, n = name, 2
        while (final in existing and existing[final] != value) or (final in chosen and chosen[final] != value):
            final, n = f"{name}_{n}", n + 1
        chosen[final] = value
        if final != name:
            renames[name] = final
    set_dotenv(path, chosen)
    return renames
