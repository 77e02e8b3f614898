"""The agent's own toolsets, `file` and `terminal`, through a real session: the tools do what they say,
refuse what they cannot do in one sentence, and stay inside the same sandbox as any stdio server."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes.home import Home
from hermes.session.core import Session, SessionSettings
from tests.support import hermes, needs_sandbox, write_config

pytestmark = pytest.mark.anyio

CANARY = "sk-canary-0123456789abcdefBUILTIN"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The agent's working folder (the session's current folder), with a few files."""
    folder = tmp_path / "work"
    (folder / "src" / "pkg").mkdir(parents=True)
    (folder / "src" / "pkg" / "app.py").write_text("def main():\n    return 'hello'\n\nmain()\n")
    (folder / "notes.md").write_text("# Notes\nhello again\n")
    (folder / "image.bin").write_bytes(b"\x89PNG\x00\x01\x02" * 100)
    (folder / "node_modules" / "dep").mkdir(parents=True)
    (folder / "node_modules" / "dep" / "index.js").write_text("hello from a dependency\n")
    monkeypatch.chdir(folder)
    return folder


async def _call(session: Session, name: str, **arguments: Any) -> str:
    result = await session.call(name, arguments)
    return str(result.text)


async def test_the_file_tools_read_write_edit_list_glob_and_grep(home: Home, work: Path) -> None:
    async with Session(home, SessionSettings(platform="cli")) as session:
        read = await _call(session, "file_read", path="src/pkg/app.py")
        assert read.splitlines()[0].endswith("app.py, lines 1-4 (the whole file):")
        assert read.splitlines()[1].split("\t") == ["     1", "def main():"]
        page = await _call(session, "file_read", path="src/pkg/app.py", offset=2, limit=1)
        assert "return 'hello'" in page and "def main" not in page and "continue with offset=3" in page
        assert "binary file (700 bytes)" in await _call(session, "file_read", path="image.bin")
        assert "does not exist" in await _call(session, "file_read", path="missing.txt")

        assert "Wrote" in await _call(session, "file_write", path="out/new.txt", content="one\ntwo\ntwo\n")
        assert (work / "out" / "new.txt").read_text() == "one\ntwo\ntwo\n"
        twice = await _call(session, "file_edit", path="out/new.txt", old_text="two", new_text="2")
        assert "occurs 2 times" in twice and (work / "out" / "new.txt").read_text() == "one\ntwo\ntwo\n"
        assert "not found" in await _call(session, "file_edit", path="out/new.txt", old_text="three", new_text="3")
        await _call(session, "file_edit", path="out/new.txt", old_text="one\n", new_text="1\n")
        await _call(session, "file_edit", path="out/new.txt", old_text="two", new_text="2", replace_all=True)
        assert (work / "out" / "new.txt").read_text() == "1\n2\n2\n"

        listing = await _call(session, "file_list")
        assert "folder  src/" in listing and "file    notes.md  (20 bytes)" in listing
        assert await _call(session, "file_glob", pattern="*.py") == "src/pkg/app.py"
        found = await _call(session, "file_grep", pattern="hello")
        assert "app.py:2:    return 'hello'" in found and "notes.md:2:hello again" in found
        assert "dependency" not in found  # node_modules is never searched
        assert "not a valid regular expression" in await _call(session, "file_grep", pattern="(")


async def test_a_long_file_is_read_in_pages(home: Home, work: Path) -> None:
    (work / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)))
    async with Session(home, SessionSettings(platform="cli")) as session:
        first = await _call(session, "file_read", path="long.txt")
        assert first.splitlines()[-2].endswith("line 2000") and "continue with offset=2001" in first
        assert first.splitlines()[0].endswith("long.txt, lines 1-2000:")  # not said to be the whole file
        last = await _call(session, "file_read", path="long.txt", offset=4999)
        assert last.splitlines()[0].endswith("long.txt, lines 4999-5000:")
        assert last.splitlines()[1:] == ["  4999\tline 4999", "  5000\tline 5000"]


async def test_hostile_files_neither_hang_nor_exhaust_the_file_tools(home: Home, work: Path) -> None:
    os.mkfifo(work / "pipe")  # opening it would block until a writer came
    (work / "endless.txt").write_bytes(b"x" * 30_000_000)  # one line, no newline
    (work / "second.txt").write_bytes(b"a\n" + b"y" * 300_000 + b"\nc\n")  # a line over a page
    folders = [work / "d"]
    for _ in range(1100):  # deeper than Python's recursion limit (made one folder at a time for that reason)
        folders.append(folders[-1] / "d")
    for folder in folders:
        folder.mkdir()
    (folders[-1] / "f.txt").write_text("hello from the depths\n")
    try:
        await _look_at_hostile_files(home)
    finally:  # deepest first: pytest's own clean-up (shutil.rmtree) recurses and cannot remove it
        (folders[-1] / "f.txt").unlink()
        for folder in reversed(folders):
            folder.rmdir()


async def _look_at_hostile_files(home: Home) -> None:
    async with Session(home, SessionSettings(platform="cli")) as session:
        assert "not a regular file" in await _call(session, "file_read", path="pipe")
        endless = await _call(session, "file_read", path="endless.txt")
        assert endless.splitlines()[1].startswith("     1\txxx") and "more bytes]" in endless and len(endless) < 10_000
        second = (await _call(session, "file_read", path="second.txt")).splitlines()[1:]
        assert second[0] == "     1\ta" and second[1].startswith("     2\tyyy") and second[2] == "     3\tc"
        found = await _call(session, "file_grep", pattern="depths")
        assert "/d/f.txt:1:hello from the depths\n[1 file over 2097152 bytes not searched]" in found
        assert (await _call(session, "file_glob", pattern="f.txt")).endswith("/d/f.txt")
        assert "other   pipe" in await _call(session, "file_list")
        typo = await _call(session, "file_raed", path="x")
        assert typo == "The agent's own toolset 'file' has no tool named 'file_raed' (did you mean 'file_read'?)."


async def test_the_terminal_runs_commands_stops_them_at_their_timeout_and_keeps_background_ones(
        home: Home, work: Path) -> None:
    async with Session(home, SessionSettings(platform="cli")) as session:
        ran = await _call(session, "terminal_run", command="echo out; echo err >&2; exit 3")
        assert ran.splitlines() == ["out", "err", "", "[exit code 3]"]
        assert await _call(session, "terminal_run", command="pwd") == f"{work}\n\n[exit code 0]"
        stopped = await _call(session, "terminal_run", command="echo started; sleep 600", timeout=1)
        assert stopped.startswith("started") and "stopped after 1 s" in stopped

        started = await _call(session, "terminal_start", command="for i in 1 2 3; do echo tick $i; done; sleep 600")
        assert started.startswith("Started background command 1")
        seen = ""
        for _ in range(100):  # each look waits for new output (an event), not for time
            seen += await _call(session, "terminal_output", number=1, wait=30)
            if "tick 3" in seen:
                break
        assert "tick 1" in seen and "tick 3" in seen and "[running]" in seen
        assert "1: running: for i in" in await _call(session, "terminal_output")
        assert "exited" in await _call(session, "terminal_stop", number=1)
        assert "no background command 7" in await _call(session, "terminal_output", number=7)


async def test_a_platform_that_names_no_builtin_toolset_gets_none(home: Home, work: Path) -> None:
    write_config(home, {"platform_toolsets": {"cli": ["file"], "discord": ["no_mcp"]}})
    async with Session(home, SessionSettings(platform="cli")) as session:
        names = set(session.surface().tools)
        assert "file_read" in names and not any(n.startswith("terminal_") for n in names)
        assert (await session.call("terminal_run", {"command": "true"})).text == (
            "The agent's own toolset 'terminal' is not enabled for platform 'cli' (add it under "
            "platform_toolsets.cli in config.yaml).")


@needs_sandbox
def test_the_builtin_tools_cannot_read_secrets_or_write_outside_the_working_folder(
        home: Home, work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "user"
    (user / ".ssh").mkdir(parents=True)
    (user / ".ssh" / "id_ed25519").write_text(f"-----BEGIN OPENSSH PRIVATE KEY----- {CANARY}\n")
    home.dotenv.write_text(f"OPENAI_API_KEY={CANARY}\n")
    home.dotenv.chmod(0o600)
    outside = user / "Documents"  # the user's own files: visible to the sandbox, never writable by it
    outside.mkdir()
    monkeypatch.setenv("HOME", str(user))

    # From the command line, as a user would try it.
    ran = hermes("tools", "call", "file_read", "--args", json.dumps({"path": str(user / ".ssh" / "id_ed25519")}),
                 "--json", "--yes", home=home)
    assert CANARY not in ran.stdout + ran.stderr and "does not exist" in ran.stdout + ran.stderr

    async def attempts() -> None:
        # The rest in one session: the same servers in the same sandbox, started once.
        async with Session(home, SessionSettings(platform="cli")) as session:
            async def call(name: str, **arguments: Any) -> str:
                result = await session.call(name, arguments)
                said = f"{result.text} {json.dumps(result.structured)}"
                assert CANARY not in said
                return said

            assert "does not exist" in await call("file_read", path=str(home.dotenv))
            assert "No such file or directory" in await call(
                "terminal_run", command=f"cat {user}/.ssh/id_ed25519 {home.dotenv}")
            assert ".ssh" not in await call("terminal_run", command=f"ls -a {user}")
            # The home folder is an empty stand-in and /tmp the sandbox's own: what is written there
            # never reaches the host. The rest of the system is read-only.
            await call("file_write", path=str(outside / "planted.txt"), content="x")
            await call("terminal_run", command=f"echo planted > {outside}/by-shell.txt")
            assert sorted(os.listdir(outside)) == []
            system = Path(sys.prefix) / "hermes-planted.txt"
            assert "Read-only file system" in await call("file_write", path=str(system), content="x")
            assert not system.exists()
            assert "Wrote" in await call("file_write", path="inside.txt", content="fine")

    anyio.run(attempts)
    assert (work / "inside.txt").read_text() == "fine"
