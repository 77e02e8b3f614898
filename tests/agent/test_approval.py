"""Approval that fits real servers, which mostly annotate nothing.

By default a tool that does not say it only reads asks in interactive chat and is refused in a
one-shot run without `--yes` or an allow-list; read-only tools run. `approval: ask` covers every
request the model makes (resources, prompts, listings). A plugin or a catalog entry declares the
tools that must always ask (code execution). A question shows every argument: folded when long,
with a way to see the rest, never silently cut.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import mcp_types as types
import pexpect
import pytest

from hermes.config.agent_settings import Approval, Permissions
from hermes.home import Home
from hermes.tools.permissions import Permission, verdict
from hermes.tools.surface import SurfaceTool
from tests.agent.conftest import model_config
from tests.support import PATIENCE, PYTHON, START_WAIT, fast_entry, hermes, stdio_entry, write_config


def needs_approval(tool: SurfaceTool, approval: Approval) -> bool:
    """What chat does: a model chose the call."""
    return verdict(tool, approval, Permissions(), cautious=True).permission is Permission.ASK


def _tool(kind: str = "tool", **annotations: bool) -> SurfaceTool:
    definition = types.Tool(name="t", input_schema={"type": "object"},
                            annotations=types.ToolAnnotations(**annotations) if annotations else None)
    return SurfaceTool("mcp__s__t", "s", kind, "t", "", {"type": "object"},  # type: ignore[arg-type]
                       definition if kind == "tool" else None)


@pytest.mark.parametrize(("tool", "approval", "asks"), [
    (_tool(), Approval(), True),  # no annotations: may change anything
    (_tool(readOnlyHint=True), Approval(), False),
    (_tool(readOnlyHint=True, destructiveHint=True), Approval(), True),
    (_tool(destructiveHint=False), Approval(), True),  # not read-only is enough
    (_tool("read_resource"), Approval(), False),
    (_tool("list_prompts"), Approval.read("ask", ("approval",)), True),
    (_tool("get_prompt"), Approval.read("ask", ("approval",)), True),
    (_tool(readOnlyHint=True), Approval.read("ask", ("approval",)), True),
    (_tool(), Approval.read("never", ("approval",)), False),
    (_tool(), Approval.read({"allow": ["t"]}, ("approval",)), False),
    (_tool(readOnlyHint=True), Approval.read(["t*"], ("approval",)), True),
])
def test_what_asks(tool: SurfaceTool, approval: Approval, asks: bool) -> None:
    assert needs_approval(tool, approval) is asks


def _chat(home: Home, folder: Path) -> pexpect.spawn:
    """`hermes chat` in a real terminal, plain text."""
    return pexpect.spawn(PYTHON, ["-m", "hermes", "chat"], encoding="utf-8", timeout=PATIENCE, cwd=str(folder),
                         env={**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm", "NO_COLOR": "1"},
                         dimensions=(40, 160))


def _one_shot(home: Home, model: Any, servers: dict[str, Any], *args: str) -> dict[str, Any]:
    write_config(home, {"model": model_config(model), "mcp_servers": servers})
    ran = hermes("chat", "-q", "go", "--json", *START_WAIT, *args, home=home)
    return dict(json.loads(ran.stdout))


def test_one_shot_runs_read_only_tools_and_refuses_the_rest_without_yes_or_allow(home: Home,
                                                                                scripted_model: Any) -> None:
    calls = {"tool_calls": [{"name": "mcp__box__echo", "arguments": {"text": "hi"}},
                            {"name": "mcp__box__crash"}]}
    model = scripted_model([calls, {"content": "done"}, calls, {"content": "done"}, calls, {"content": "done"}])
    refused = _one_shot(home, model, {"box": fast_entry()})
    assert [r["status"] for r in refused["tool_calls"]] == ["ok", "denied"]
    assert "approval: {allow: [crash]}" in refused["tool_calls"][1]["result"]
    allowed = _one_shot(home, model, {"box": fast_entry(approval={"allow": ["crash"]})})
    assert allowed["tool_calls"][1]["status"] != "denied"
    assert _one_shot(home, model, {"box": fast_entry()}, "--yes")["tool_calls"][1]["status"] != "denied"


def test_approval_ask_covers_resources_prompts_and_listings(home: Home, scripted_model: Any) -> None:
    calls = {"tool_calls": [{"name": "mcp__box__read_resource", "arguments": {"uri": "test://hello"}},
                            {"name": "mcp__box__get_prompt", "arguments": {"name": "greet"}},
                            {"name": "mcp__box__list_resources"}]}
    model = scripted_model([calls, {"content": "done"}])
    data = _one_shot(home, model, {"box": stdio_entry(approval="ask")})
    assert [r["status"] for r in data["tool_calls"]] == ["denied", "denied", "denied"]


def test_a_plugin_declares_the_tools_that_must_always_ask(tmp_path: Path) -> None:
    from hermes.apps.declaration import EXTENSION_KEY
    from hermes.plugins.manifest import load_plugin

    root = tmp_path / "blender"
    root.mkdir()
    (root / "plugin.json").write_text(json.dumps({"name": "blender", "version": "1", "extensions": {
        EXTENSION_KEY: {"servers": {"blender": {"approval": {"ask": ["execute_blender_code"]}}}}}}))
    (root / "mcp.json").write_text(json.dumps({"mcpServers": {"blender": {"type": "stdio", "command": "blender-mcp"}}}))
    plugin = load_plugin(root, tmp_path / "data")
    approval = plugin.servers["blender"].approval
    code = SurfaceTool("mcp__blender__execute_blender_code", "blender", "tool", "execute_blender_code", "",
                       {"type": "object"}, types.Tool(name="execute_blender_code", input_schema={"type": "object"},
                                                      annotations=types.ToolAnnotations(readOnlyHint=True)))
    assert approval.ask == ("execute_blender_code",) and needs_approval(code, approval)


def test_the_shipped_blender_catalog_entry_asks_before_running_code(home: Home) -> None:
    from hermes.plugins.catalog import load_catalog

    assert load_catalog(home)["blender"].approval == {"blender": ("execute_blender_code",)}


def test_the_question_shows_every_argument_folded_with_a_way_to_see_all(home: Home, scripted_model: Any,
                                                                        tmp_path: Path) -> None:
    lines = {f"line{index:03d}": f"value {index}" for index in range(120)}
    model = scripted_model([{"tool_calls": [{"name": "mcp__box__delete", "arguments": {"what": lines}}]},
                            {"content": "ok"}])
    write_config(home, {"model": model_config(model), "mcp_servers": {"box": fast_entry()}})
    child = _chat(home, tmp_path)
    child.expect("/help lists commands")
    child.expect("›")
    child.send("delete\r")
    child.expect("line000")
    child.expect(r"more lines \(answer v to see every line\)")
    child.expect("line119")
    child.expect(r"\[v\]iew all")
    child.send("v\r")
    child.expect("line060")  # a line the folded view left out
    child.expect(r"\[v\]iew all")
    child.send("d\r")
    child.expect("ok")
    child.expect("›")
    child.sendeof()
    child.expect(pexpect.EOF)


def test_always_keeps_the_tool_allowed_in_config_yaml_unless_a_rule_says_ask(home: Home, scripted_model: Any,
                                                                            tmp_path: Path) -> None:
    from ruamel.yaml import YAML

    call = {"tool_calls": [{"name": "mcp__box__delete", "arguments": {"what": "old"}}]}
    model = scripted_model([call, {"content": "first done"}, call, {"content": "second done"}])
    write_config(home, {"model": model_config(model), "mcp_servers": {"box": fast_entry()}})
    child = _chat(home, tmp_path)
    child.expect("›")
    child.send("delete it\r")
    child.expect(r"no readOnlyHint")
    child.expect(r"\[a\]lways \(kept in config.yaml\)")
    child.send("a\r")
    child.expect("is allowed from now on")
    child.expect("first done")
    child.expect("›")
    child.send("again\r")
    child.expect("second done")  # no question this time
    assert "Allow mcp__box__delete?" not in (child.before or "")
    child.expect("›")  # an end of input sent before the prompt is back would be lost
    child.sendeof()
    child.expect(pexpect.EOF)
    kept = YAML(typ="safe").load(home.config.read_text())
    assert kept["permissions"] == {"allow": ["mcp__box__delete"]}
    assert kept["mcp_servers"]["box"]["args"] == fast_entry()["args"]
