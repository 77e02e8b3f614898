"""One small hierarchy of errors, each carrying the fields a user needs to act on it.

The CLI maps each class to an exit code (`exit_code`) and prints `str(error)`, which is always
one plain sentence. Messages never carry secret values: callers pass text through the redactor
before building an error from anything a server or a user's file produced.

    HermesError                     exit 1
    ├── UsageError                  exit 2  the command line asked for something impossible
    ├── InvalidFile                 exit 2  a file broke a rule: file, line, key, rule
    │   ├── ConfigError                     config.yaml, .env
    │   └── DeclarationError (apps), PluginError (plugins), CatalogEntryError (catalog)
    ├── NoSuchServer                exit 3
    ├── NoSuchTool                  exit 3
    ├── InterpolationError          exit 1  a ${VAR} is not set (at connect time)
    ├── Interrupted                 exit 130 (143 for SIGTERM), in `hermes.interrupts`
    └── in their packages (exit 1 unless noted):
        apps        LiveEndpointUnavailable, RuntimeFileError (and its RuntimeFileMissing)
        mcp         ServerNotConnected, SandboxChanged; LoginRequired, LoginFailed (mcp.oauth)
        plugins     PluginInstallError, GitError, NoSuchPlugin (exit 3)
        catalog     NoSuchEntry (exit 3)
        agent       ModelError, NoModel (exit 2), TranscriptError (exit 2)
        dashboard   ViewRefused (what an MCP Apps view may not have)
        team        TeamStoreError (and its Conflict: a key already taken)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Self

from hermes.validation import Invalid, dotted


def leaf(exc: BaseException) -> BaseException:
    """The first real exception inside nested exception groups (task groups wrap what they raise)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, then what it was raised from or while handling, and so on down the chain (each once:
    a chain can loop)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


class HermesError(Exception):
    """Base of every error hermes raises on purpose."""

    exit_code = 1


class UsageError(HermesError):
    """The command line asked for something contradictory or incomplete."""

    exit_code = 2


class InvalidFile(HermesError):
    """A file hermes reads broke a rule; nothing was written.

    One shape for every reader: `<file>[, line N]: [<key>: ]<rule>`, with each part kept as a
    field for whoever wants to act on it.
    """

    exit_code = 2

    def __init__(self, rule: str, *, path: Path | str | None = None, line: int | None = None,
                 key: str | None = None) -> None:
        self.path = path
        self.line = line
        self.key = key
        self.rule = rule
        super().__init__(self.describe())

    def describe(self) -> str:
        where = "" if self.path is None else f"{self.path}" + (f", line {self.line}" if self.line else "")
        what = f"{self.key}: {self.rule}" if self.key else self.rule
        return f"{where}: {what}" if where else what

    @classmethod
    def from_invalid(cls, exc: Invalid, path: Path | str, *, line: int | None = None) -> Self:
        """The kit's `Invalid(loc, rule)` as this file's error."""
        return cls(exc.rule, path=path, line=line, key=dotted(exc.loc) or None)


class ConfigError(InvalidFile):
    """`config.yaml` or `.env` is malformed or holds a wrong value."""


class NoSuchServer(HermesError):
    """A command named a server that is not configured."""

    exit_code = 3

    def __init__(self, name: str, hint: str = "") -> None:
        """`hint`: e.g. " (did you mean 'files'?)" from `validation.suggestion`."""
        self.name = name
        super().__init__(f"No MCP server named '{name}' is configured{hint}.")


class NoSuchTool(HermesError):
    """A command named a tool that no configured server offers."""

    exit_code = 3


class InterpolationError(HermesError):
    """A `${VAR}` in a server entry names a variable that is not set."""

    def __init__(self, server: str, variable: str, advice: str | None = None) -> None:
        """`advice`: how to set it, where that is not the environment or `.env` (a team user's credential)."""
        self.server = server
        self.variable = variable
        super().__init__(
            f"Server '{server}' uses ${{{variable}}}, but {variable} is not set "
            f"({advice or 'set it in the environment or in the .env file of HERMES_HOME'})."
        )
