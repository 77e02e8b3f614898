"""The built-in toolsets' tools are offered before their servers start, from definitions kept
beside them: those must be exactly what the running server lists, or a model would see one tool
and call another. `HERMES_WRITE_DEFINITIONS=1 pytest tests/builtin/test_definitions.py` rewrites them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hermes.home import Home
from hermes.mcp.states import ConnectionState
from hermes.session.core import Session, SessionSettings
from hermes.session.servers import builtin_definitions
from hermes.tools.toolsets import BUILTIN_TOOLSETS, builtin_server
from tests.support import write_config

pytestmark = pytest.mark.anyio

_FOLDER = Path(__file__).resolve().parents[2] / "src" / "hermes" / "builtin"
# One harmless call per toolset: it starts the server.
_WAKE = {"file": ("file_list", {}), "terminal": ("terminal_output", {"job": "none"})}


@pytest.mark.parametrize("toolset", BUILTIN_TOOLSETS)
async def test_kept_definitions_are_what_the_running_server_lists(home: Home, toolset: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_config(home, {"platform_toolsets": {"cli": [toolset]}})
    server = builtin_server(toolset)
    writing = os.environ.get("HERMES_WRITE_DEFINITIONS") == "1"
    async with Session(home, SessionSettings(platform="cli")) as session:
        idle = session.snapshots()[server]
        if not writing:
            assert idle.state is ConnectionState.IDLE and idle.pid is None
            assert session.surface().for_server(server), "an idle toolset offers its tools"
        name, arguments = _WAKE[toolset]
        await session.call(name, arguments)
        running = session.snapshots()[server]
        assert running.state is ConnectionState.CONNECTED, running.reason
        listed = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in running.tools]
    if writing:
        (_FOLDER / f"{toolset}_tools.json").write_text(json.dumps(listed, indent=1, ensure_ascii=False) + "\n")
    kept = builtin_definitions(toolset)
    assert kept is not None and [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in kept] == listed, \
        f"{toolset}_tools.json differs from what the server lists: rerun with HERMES_WRITE_DEFINITIONS=1"
