"""Pure pieces of the tool surface: names, filters, toolsets, results, redaction."""

from __future__ import annotations

import hashlib

import mcp_types as types
import pytest

from hermes.config.model import ToolFilter
from hermes.home import Home
from hermes.tools.filters import filter_warnings, tool_allowed
from hermes.tools.naming import owners, registered_name, sanitize
from hermes.tools.results import MAX_OUTPUT, cap
from hermes.tools.surface import ServerTools, build_surface
from hermes.tools.toolsets import builtin_server, builtin_toolsets, servers_for_platform, toolset_problems


def test_sanitize_and_register() -> None:
    assert sanitize("get-weather.v2 now") == "get_weather_v2_now"
    assert registered_name("my-server", "do-it") == "mcp__my_server__do_it"


def test_long_names_are_clamped_deterministically() -> None:
    tool = "x" * 80
    name = registered_name("srv", tool)
    full = f"mcp__srv__{tool}"
    assert len(name) == 64
    assert name == full[:55] + "_" + hashlib.sha256(full.encode()).hexdigest()[:8]
    assert registered_name("srv", tool) == name
    assert registered_name("srv", "y" * 80) != name


@pytest.mark.parametrize(("rule", "allowed"), [
    (ToolFilter(), {"get-weather", "list_files", "delete_file"}),
    (ToolFilter(include=("get-*",)), {"get-weather"}),
    (ToolFilter(exclude=("delete_*",)), {"get-weather", "list_files"}),
    (ToolFilter(include=("list_files",), exclude=("list_files",)), {"list_files"}),
    (ToolFilter(include=()), set()),
    (ToolFilter(include=("[dl]*",)), {"list_files", "delete_file"}),
    (ToolFilter(include=("list_file?",)), {"list_files"}),
])
def test_filters_match_original_names(rule: ToolFilter, allowed: set[str]) -> None:
    names = {"get-weather", "list_files", "delete_file"}
    assert {n for n in names if tool_allowed(n, rule)} == allowed


def test_both_include_and_exclude_warns() -> None:
    assert "include wins" in filter_warnings("s", ToolFilter(include=("a",), exclude=("b",)))[0]
    assert filter_warnings("s", ToolFilter(include=("a",))) == []


FILE, TERMINAL = builtin_server("file"), builtin_server("terminal")


def test_platform_toolsets() -> None:
    servers = ["a", "b", FILE, TERMINAL]
    config = {"tg": ("mcp-a", "terminal"), "dc": ("no_mcp", "mcp-a", "hermes-gateway"), "sl": ("file",),
              "cli": ("hermes-cli", "mcp-b")}
    assert servers_for_platform(servers, config, "tg") == {"a", TERMINAL}
    assert servers_for_platform(servers, config, "dc") == {FILE, TERMINAL}  # no_mcp: the agent's own only
    assert servers_for_platform(servers, config, "sl") == {FILE}  # listed, naming no mcp-* toolset: no server
    assert servers_for_platform(servers, config, "cli") == {"b", FILE, TERMINAL}
    assert servers_for_platform(servers, config, "other") == {"a", "b", FILE, TERMINAL}  # unlisted: its preset
    assert servers_for_platform(servers, config, None) == {"a", "b"}  # `mcp serve`: MCP servers only
    assert builtin_toolsets(config, "sl") == ("file",)
    assert builtin_toolsets({}, "cli") == ("file", "terminal") == builtin_toolsets({}, "telegram")
    assert builtin_toolsets({"cli": ("mcp-a",)}, "cli") == ()
    assert builtin_toolsets({}, None) == ()


def test_an_unknown_toolset_is_named_with_a_suggestion() -> None:
    config = {"cli": ("hermes-cli", "mcp-githb", "termnal"), "discord": ("hermes-gateway",)}
    problems = toolset_problems(config, ["github", "linear"])
    assert [key for key, _ in problems] == ["platform_toolsets.cli", "platform_toolsets.cli"]
    assert "unknown toolset 'mcp-githb' (did you mean 'mcp-github'?)" in problems[0][1]
    assert "unknown toolset 'termnal' (did you mean 'terminal'?)" in problems[1][1]
    assert toolset_problems({"cli": ("hermes-cli", "file", "terminal", "mcp-github", "no_mcp")}, ["github"]) == []


def test_the_agents_own_tools_are_named_by_their_toolset() -> None:
    assert registered_name(FILE, "read") == "file_read"
    assert registered_name("file", "read") == "mcp__file__read"  # a configured server called `file`
    assert owners("file_read", ["file", FILE, TERMINAL]) == [FILE]
    assert owners("mcp__file__read", ["file", FILE]) == ["file"]


def test_an_include_list_registers_only_what_it_names_utilities_too() -> None:
    tools = [_tool("read"), _tool("write")]
    named = build_surface([ServerTools("s", ToolFilter(include=("read", "list_*")), tools, True, True)])
    assert {t.original for t in named.tools.values()} == {"read", "list_resources", "list_prompts"}
    empty = build_surface([ServerTools("s", ToolFilter(include=()), tools, True, True)])
    assert empty.tools == {}
    everything = build_surface([ServerTools("s", ToolFilter(), tools, True, True)])
    assert len(everything.tools) == 6


def _tool(name: str) -> types.Tool:
    return types.Tool(name=name, input_schema={"type": "object"})


def test_collisions_across_servers_and_with_utilities_skip_both() -> None:
    surface = build_surface([
        ServerTools("a", ToolFilter(), [_tool("x-y"), _tool("x_y"), _tool("ok"), _tool("list_resources")],
                    has_resources=True, has_prompts=False),
        ServerTools("b", ToolFilter(), [_tool("ok")], has_resources=False, has_prompts=False),
    ])
    assert set(surface.tools) == {"mcp__a__ok", "mcp__b__ok", "mcp__a__read_resource"}
    skipped = sorted((s.server, s.original) for s in surface.skipped)
    assert skipped == [("a", "list_resources"), ("a", "list_resources"), ("a", "x-y"), ("a", "x_y")]


def test_cap_keeps_head_and_tail() -> None:
    text = "H" * MAX_OUTPUT + "T" * 100
    capped = cap(text)
    assert len(capped) == MAX_OUTPUT and capped.startswith("HHH") and capped.endswith("T" * 100)
    assert cap("short") == "short"


def test_an_include_entry_that_matches_no_tool_warns_with_the_close_match(home: Home) -> None:
    from tests.support import fast_entry, hermes, write_config

    write_config(home, {"mcp_servers": {"box": fast_entry(tools={"include": ["echo", "get_weather", "nothing*"]})}})
    listed = hermes("tools", "list", home=home)
    assert "tools.include names 'get_weather', which matches none of its tools (did you mean 'get-weather'?)" \
        in listed.stderr
    assert "tools.include names 'nothing*'" in listed.stderr and "'echo'" not in listed.stderr
    tested = hermes("mcp", "test", "box", home=home)
    assert "did you mean 'get-weather'?" in tested.stdout + tested.stderr


def test_an_exclude_written_with_hermes_s_names_warns_with_the_server_s_own_name(home: Home) -> None:
    from tests.support import fast_entry, hermes, write_config

    write_config(home, {"mcp_servers": {"box": fast_entry(tools={"exclude": ["mcp__box__get_weather", "delete"]})}})
    listed = hermes("tools", "list", home=home)
    assert "tools.exclude names 'mcp__box__get_weather', which matches none of its tools (filters take the " \
           "server's own names: write 'get-weather')" in listed.stderr
    assert "'delete'" not in listed.stderr and "mcp__box__get_weather" in listed.stdout  # not excluded
