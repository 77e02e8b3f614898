"""The rules of a call, from its registered name to one result, against in-memory supervisors:
redaction at the boundary, filters, why a server is unavailable, names that are not there."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import ErrorData, TextContent

from hermes.config.agent_settings import Permissions
from hermes.config.model import ServerConfig, ToolFilter
from hermes.mcp.states import ConnectionState
from hermes.security.redact import Redactor
from hermes.session.calls import Calls
from hermes.session.surfacing import ToolSurface
from hermes.tools.call_result import Declined, NotAvailable, Ok, ToolError
from hermes.tools.results import MIN_BUDGET, ResultFiles
from tests.supervisors import FakeRoster, FakeSupervisor, text_result, tool

pytestmark = pytest.mark.anyio

SECRET = "sk-live_0123456789abcdefCALLRULES"


@pytest.fixture
def roster() -> FakeRoster:
    roster = FakeRoster()
    roster.add(FakeSupervisor("box", [tool("echo"), tool("hidden")], {"echo": lambda a: text_result(str(a["text"]))}),
               ServerConfig(command="fake", tools=ToolFilter(include=("echo",))))
    return roster


def _calls(roster: FakeRoster, tmp_path: Path, redactor: Redactor | None = None) -> tuple[Calls, ToolSurface]:
    surface = ToolSurface(roster, known_tools=tmp_path / "known.json", tool_pins=tmp_path / "pins.json",
                          tool_vectors=tmp_path / "vectors.bin")
    surface.changed(None)
    calls = Calls(roster, redactor or Redactor(), ResultFiles(tmp_path / "cache", tmp_path / "results"),
                  surface=surface.current, held_back=surface.changed_tools,
                  verdict=lambda tool, cautious: surface.verdict(tool, cautious=cautious))
    return calls, surface


async def test_a_result_is_redacted_and_stripped_of_hidden_text_at_the_boundary(roster: FakeRoster,
                                                                               tmp_path: Path) -> None:
    calls, _ = _calls(roster, tmp_path, Redactor([SECRET]))
    result = await calls.call("mcp__box__echo", {"text": f"key {SECRET} and\u200b hidden\U000e0041"})
    assert isinstance(result, Ok) and SECRET not in result.text
    assert "\u200b" not in result.text and "\U000e0041" not in result.text and "key" in result.text
    assert roster.supervisors["box"].calls == [("echo", {"text": f"key {SECRET} and\u200b hidden\U000e0041"})]


async def test_new_permissions_rule_the_next_call_without_a_rebuilt_surface(roster: FakeRoster,
                                                                           tmp_path: Path) -> None:
    """Verdicts are kept per tool between calls; rules read anew (a reload) must not meet an old one."""
    calls, _ = _calls(roster, tmp_path)
    assert isinstance(await calls.call("mcp__box__echo", {"text": "x"}), Ok)
    assert isinstance(await calls.call("mcp__box__echo", {"text": "y"}, cautious=True), Declined)  # no readOnlyHint
    roster.rules = Permissions(allow=("mcp__box__echo",))
    assert isinstance(await calls.call("mcp__box__echo", {"text": "z"}, cautious=True), Ok)
    roster.rules = Permissions(deny=("echo",))
    denied = await calls.call("mcp__box__echo", {"text": "w"})
    assert isinstance(denied, Declined) and "permissions.deny: echo" in denied.text
    assert [arguments["text"] for _, arguments in roster.supervisors["box"].calls] == ["x", "z"]


async def test_filtered_missing_and_off_platform_names_each_get_their_own_sentence(roster: FakeRoster,
                                                                                  tmp_path: Path) -> None:
    calls, _ = _calls(roster, tmp_path)
    filtered = await calls.call("mcp__box__hidden", {})
    assert isinstance(filtered, ToolError) and "filtered out by tools.include/exclude" in filtered.text
    typo = await calls.call("mcp__box__ecko", {})
    assert isinstance(typo, ToolError) and "has no tool named 'mcp__box__ecko'" in typo.text
    assert "mcp__box__echo" in typo.text  # the suggestion
    nowhere = await calls.call("mcp__nobody__x", {})
    assert isinstance(nowhere, ToolError) and "No tool named 'mcp__nobody__x'" in nowhere.text
    roster.platform, roster.on_platform = "discord", set()
    off = await _calls(roster, tmp_path)[0].call("mcp__box__echo", {"text": "x"})
    assert isinstance(off, ToolError) and "not enabled for platform 'discord'" in off.text
    assert roster.supervisors["box"].calls == []


async def test_an_unavailable_server_says_why_from_a_fresh_look(roster: FakeRoster, tmp_path: Path) -> None:
    calls, surface = _calls(roster, tmp_path)
    box = roster.supervisors["box"]
    box.snapshot = box.snapshot.__class__(box.name, ConnectionState.PARKED, reason=f"crashed 4 times ({SECRET})",
                                          tools=box.snapshot.tools)
    surface.changed("box")
    missing = await calls.call("mcp__box__echo", {"text": "x"})
    assert isinstance(missing, NotAvailable) and box.looked_at_app == 1
    assert "crashed 4 times" in missing.text


async def test_server_errors_become_sentences_with_the_secret_removed(roster: FakeRoster, tmp_path: Path) -> None:
    calls, _ = _calls(roster, tmp_path, Redactor([SECRET]))
    box = roster.supervisors["box"]
    box.raises = MCPError(-32602, f"bad token {SECRET}")
    answered = await calls.call("mcp__box__echo", {"text": "x"})
    assert isinstance(answered, ToolError) and "answered with an error: bad token" in answered.text
    assert SECRET not in answered.text
    box.raises = MCPError.from_error_data(ErrorData(code=-32001, message="Request 7 timed out"))
    late = await calls.call("mcp__box__echo", {"text": "x"})
    assert isinstance(late, ToolError) and "timed out after" in late.text


async def test_a_long_result_is_kept_on_disk_only_when_someone_reads_it(tmp_path: Path) -> None:
    """`serve` hands its client the server's own answer (redacted) and never reads the rendered
    text: rendering, which keeps a long text on disk, happens at the first read, once."""
    roster = FakeRoster()
    budget = 2 * MIN_BUDGET  # the tool's own hint, so the text need not pass hermes's whole limit
    echo = tool("echo").model_copy(update={"meta": {"io.example/maxResultSizeChars": budget}})
    roster.add(FakeSupervisor("box", [echo], {"echo": lambda a: text_result(str(a["text"]))}),
               ServerConfig(command="fake"))
    calls, _ = _calls(roster, tmp_path, Redactor([SECRET]))
    long_text = f"{SECRET} " + "word " * budget
    passed_on = await calls.call("mcp__box__echo", {"text": long_text})
    assert isinstance(passed_on, Ok) and passed_on.raw is not None
    sent = passed_on.to_mcp().content[0]
    assert isinstance(sent, TextContent) and SECRET not in sent.text and len(sent.text) > budget
    spill = tmp_path / "results"
    assert not spill.exists() or list(spill.iterdir()) == []  # nothing rendered, nothing written
    read = await calls.call("mcp__box__echo", {"text": long_text})
    assert len(read.text) <= budget and SECRET not in read.text and str(spill) in read.text
    assert read.text is read.text  # rendered once
    kept = list(spill.iterdir())
    assert len(kept) == 1 and SECRET not in kept[0].read_text()
