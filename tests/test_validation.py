"""The validation kit every reader is written in: locations, rules, suggestions, no surprises."""

from __future__ import annotations

import math
import re

import pytest

from hermes.validation import (
    Invalid,
    choice,
    dotted,
    integer,
    items,
    mapping,
    matching,
    optional,
    required,
    seconds,
    text,
    texts,
)


def test_locations_read_like_keys() -> None:
    assert dotted(("app", "linux", "location", 0, "kind")) == "app.linux.location[0].kind"
    assert dotted(()) == ""


def test_unknown_keys_name_the_key_and_suggest_the_close_one() -> None:
    with pytest.raises(Invalid) as info:
        mapping({"clinet": False}, ("mcp",), {"client", "stdio_servers"})
    assert info.value.loc == ("mcp", "clinet")
    assert "is not a known key (did you mean 'client'?)" in info.value.rule
    with pytest.raises(Invalid, match="keys must be text"):
        mapping({1: "x"}, ())


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 0, -1, True, "5"])
def test_seconds_refuse_non_finite_and_non_positive(value: object) -> None:
    with pytest.raises(Invalid, match="positive number of seconds"):
        seconds(value, ("timeout",))


def test_readers_compose_with_locations() -> None:
    data = {"names": ["a", 2], "port": 70000, "mode": "fast"}
    with pytest.raises(Invalid) as info:
        optional(data, "names", (), texts, ())
    assert info.value.loc == ("names", 1)
    with pytest.raises(Invalid, match="between 1 and 65535"):
        required(data, "port", (), lambda v, loc: integer(v, loc, 1, 65535))
    with pytest.raises(Invalid, match="must be one of slow, steady"):
        required(data, "mode", (), choice("slow", "steady"))
    with pytest.raises(Invalid, match="is required"):
        required(data, "missing", (), text)
    assert items(["x", "y"], (), matching(re.compile("[a-z]"), "one letter")) == ("x", "y")
