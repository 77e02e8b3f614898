"""Users' credentials sealed at rest: only the team's key opens them, and only for whose they are."""

from __future__ import annotations

import pytest

from hermes.errors import ConfigError
from hermes.team.sealing import Sealer, new_key

SECRET = "ghp_CANARYteamSealing0123456789abcdef"


def test_a_sealed_value_opens_with_the_key_for_its_owner_and_name_only() -> None:
    sealer = Sealer(new_key())
    sealed = sealer.seal("alice", "GITHUB_TOKEN", SECRET)
    assert SECRET not in sealed and "alice" not in sealed
    assert sealer.open("alice", "GITHUB_TOKEN", sealed) == SECRET
    assert sealer.open("bob", "GITHUB_TOKEN", sealed) is None  # a row copied to another user
    assert sealer.open("alice", "OTHER", sealed) is None  # or renamed
    assert Sealer(new_key()).open("alice", "GITHUB_TOKEN", sealed) is None  # another team's key
    assert sealer.open("alice", "GITHUB_TOKEN", sealed[:-4] + "AAAA") is None  # tampered


def test_a_bad_or_missing_key_is_a_config_error_naming_the_key_and_never_shown() -> None:
    with pytest.raises(ConfigError) as bad:
        Sealer("not-a-fernet-key")
    assert "team.secret_key" in str(bad.value) and "not-a-fernet-key" not in str(bad.value)
    with pytest.raises(ConfigError) as missing:
        Sealer(None).seal("alice", "X", "y")
    assert "hermes team key" in str(missing.value)
    key = new_key()
    assert key not in repr(Sealer(key))
