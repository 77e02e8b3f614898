"""hermes as a client of a server that runs calls as tasks: the 2026-07-28 Tasks extension
(`io.modelcontextprotocol/tasks`, SEP-2663), against fastmcp's own implementation (`fastmcp-tasks`,
in a venv of its own). A task tool is called like any other: hermes follows the task to its result,
answers its `input_required` state with the session's handlers through `tasks/update`, and cancels
the task on the server when the call outlives its timeout."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest

from hermes.home import Home
from hermes.mcp.handlers import ClientHandlers
from hermes.session.core import Session
from tests.bridge_tools import install_pinned
from tests.support import SERVERS, wait_until, write_config

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def fastmcp_tasks_python() -> Path:
    return install_pinned("fastmcp-tasks") / "python"


async def test_task_tools_run_to_their_result_with_questions_answered_and_timeouts_cancelled(
        home: Home, tmp_path: Path, fastmcp_tasks_python: Path) -> None:
    marker = tmp_path / "cancelled"
    asked: list[str] = []

    async def elicit(server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})

    write_config(home, {"mcp_servers": {"t": {
        "command": str(fastmcp_tasks_python), "args": [str(SERVERS / "fastmcp_tasks_server.py")],
        "env": {"CANCEL_MARKER": str(marker), "FASTMCP_CHECK_FOR_UPDATES": "off"}, "timeout": 4,
        "sandbox": {"write": [str(tmp_path)]}}}})
    async with Session(home, handlers=ClientHandlers(elicitation=elicit)) as session:
        snapshot = session.snapshots()["t"]
        assert snapshot.connected and snapshot.protocol == "2026-07-28", snapshot.reason
        assert (await session.call("mcp__t__greet", {"name": "Ada"})).text == "Hello, Ada!"
        assert (await session.call("mcp__t__slow_compute", {"seconds": 0.2})).text == "computed after 0.2 s"
        confirmed = await session.call("mcp__t__confirm_delete", {"path": "/tmp/x"})
        assert confirmed.text == "accept: {'ok': True}", confirmed.text
        assert asked == ["Delete /tmp/x?"]
        late = await session.call("mcp__t__slow_compute", {"seconds": 60})
        assert "cancelled" in late.text and "4 s" in late.text, late.text
        # Asked while the server still runs: the task's cancellation may write its marker a moment
        # after the server answered tasks/cancel, and leaving the session stops the server.
        await wait_until(marker.exists)  # the server heard the task was cancelled


async def test_a_round_of_too_many_questions_is_refused_before_anyone_is_asked() -> None:
    """A hostile task cannot bury the user in forms: more than 32 questions at once are refused."""
    from mcp.shared.exceptions import MCPError

    from hermes.mcp.task_extension import _answers

    asked: list[str] = []

    class Session:
        async def dispatch_input_request(self, context: object, request: object) -> types.ElicitResult:
            asked.append("asked")
            return types.ElicitResult(action="decline")

    form = {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": {
        "type": "object", "properties": {}}}}
    with pytest.raises(MCPError, match="33 questions"):
        await _answers(Session(), {f"q{n}": form for n in range(33)})  # type: ignore[arg-type]
    assert asked == []
    assert await _answers(Session(), {"only": form}) == {"only": {"action": "decline"}}  # type: ignore[arg-type]
    with pytest.raises(MCPError, match="cannot read"):
        await _answers(Session(), {"odd": {"method": "nonsense/ask"}})  # type: ignore[arg-type]
