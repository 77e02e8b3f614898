"""`${VAR}` and `${env:VAR}` in server entries, resolved at connect time.

An unset variable is an error naming the variable and the server, never a silent literal.
`$$` is not special; only the braced forms are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from hermes.errors import InterpolationError

_REFERENCE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")


def referenced_variables(text: str) -> list[str]:
    return _REFERENCE.findall(text)


def interpolate(text: str, variables: Mapping[str, str], *, server: str) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            raise InterpolationError(server, name)
        return variables[name]

    return _REFERENCE.sub(replace, text)
