"""`${VAR}` and `${env:VAR}` in server entries, resolved at connect time.

An unset variable is an error naming the variable and the server, never a silent literal.
`$$` is not special; only the braced forms are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from hermes.errors import InterpolationError

_REFERENCE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")
# The plain facts of a user's session; `${HOME}` in a path is not a secret to hide everywhere.
PLAIN_VARIABLES = frozenset({"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR", "PWD"})


def plain_variable(name: str) -> bool:
    """A session's plain fact (`${HOME}`, `${XDG_CONFIG_HOME}`), not a secret a server is given."""
    return name in PLAIN_VARIABLES or name.startswith("XDG_")


def referenced_variables(text: str) -> list[str]:
    return _REFERENCE.findall(text)


def interpolate(text: str, variables: Mapping[str, str], *, server: str) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            raise InterpolationError(server, name)
        return variables[name]

    return _REFERENCE.sub(replace, text)
