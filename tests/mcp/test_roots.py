"""Roots that never expose what the user did not choose, against the real server-filesystem.

server-filesystem replaces the folders it was started with by whatever roots its client gives.
hermes declares roots only when the server has `roots:` in config.yaml (or the client of `serve`
gives some); otherwise the README's first example keeps the folder the user named, from any
launch folder, and the launch folder is never readable through it.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from hermes.home import Home
from hermes.session.core import Session
from tests.npm_tools import NpmTools
from tests.support import hermes, wait_until, write_config


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.md").write_text("buy tea\n")
    launch = tmp_path / "somewhere-else"
    launch.mkdir()
    (launch / "private.txt").write_text("not for the model\n")
    return notes, launch


def _files_server(home: Home, npm: NpmTools, notes: Path, **extra: object) -> None:
    write_config(home, {"mcp_servers": {"files": {"command": npm.filesystem[0],
                                                  "args": [*npm.filesystem[1:], str(notes)], **extra}}})


def _call(home: Home, tool: str, **arguments: str) -> str:
    ran = hermes("tools", "call", f"mcp__files__{tool}", "--args", json.dumps(arguments), home=home)
    return ran.stdout + ran.stderr


def test_the_readme_example_keeps_the_folder_the_user_named_from_any_launch_folder(
        home: Home, npm: NpmTools, folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    notes, launch = folders
    monkeypatch.chdir(launch)
    added = hermes("mcp", "add", "files", "--", *npm.filesystem, str(notes), home=home)
    assert added.returncode == 0, added.stderr
    allowed = _call(home, "list_allowed_directories")
    assert str(notes) in allowed and str(launch) not in allowed, allowed
    assert "buy tea" in _call(home, "read_text_file", path=str(notes / "todo.md"))
    refused = _call(home, "read_text_file", path=str(launch / "private.txt"))
    assert "not for the model" not in refused and "denied" in refused.lower(), refused


def test_configured_roots_are_the_ones_the_server_gets(home: Home, npm: NpmTools, folders: tuple[Path, Path],
                                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notes, launch = folders
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    monkeypatch.chdir(launch)
    _files_server(home, npm, notes, roots=[str(chosen)])

    async def allowed_once_the_roots_are_taken() -> str:
        async with Session(home) as session:
            # server-filesystem asks for roots after the handshake and says on stderr when it has
            # replaced its folders; a call before that would see the folders it was started with.
            log = home.server_log("files")
            await wait_until(lambda: log.exists() and "Updated allowed directories from MCP roots"
                             in log.read_text(errors="replace"))
            return (await session.call("mcp__files__list_allowed_directories", {})).text

    allowed = anyio.run(allowed_once_the_roots_are_taken)
    assert str(chosen) in allowed and str(notes) not in allowed and str(launch) not in allowed, allowed


def test_roots_are_declared_only_when_there_are_roots_to_give(home: Home, npm: NpmTools, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """server-everything offers `get_roots_list` only to a client that declares roots."""
    monkeypatch.chdir(tmp_path)
    entry = {"command": npm.everything[0], "args": npm.everything[1:]}
    write_config(home, {"mcp_servers": {"everything": entry}})
    listed = hermes("tools", "call", "mcp__everything__get_roots_list", home=home)
    assert listed.returncode == 3 and "no tool named 'mcp__everything__get_roots_list'" in listed.stderr
    chosen = tmp_path / "project"
    chosen.mkdir()
    write_config(home, {"mcp_servers": {"everything": {**entry, "roots": [str(chosen)]}}})
    configured = hermes("tools", "call", "mcp__everything__get_roots_list", home=home)
    assert chosen.as_uri() in configured.stdout and "1 total" in configured.stdout, configured.stdout
    assert tmp_path.as_uri() + "\n" not in configured.stdout
