"""The conformance suite's client under test: hermes, driven through its own CLI like a user would.

    python conformance/client.py SERVER_URL        (the suite appends the URL; it sets
                                                  MCP_CONFORMANCE_SCENARIO and, for a
                                                  pre-registered client, MCP_CONFORMANCE_CONTEXT)

Each run gets a fresh HERMES_HOME whose config names the scenario's server `target`. An `auth/*`
scenario starts with `hermes mcp login target` (the 'browser' follows the authorization server's
redirect back to hermes's loopback callback, as a person approving would); then the scenario's
work is done with `hermes mcp test` and `hermes tools call`. When a call is refused for want of
scope, hermes says to sign in again; this script does what the user would: it runs the login once
more and repeats the call. The commands run in this one process (the CLI's own entry point), so
the suite's parallel scenarios do not pay for many interpreter starts. Only as many clients run
at once as `run.py` has slots for (conformance/slots.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from conformance.slots import slot  # noqa: E402  (the suite runs this file as a script)

BROWSER = HERE.parent / "tests" / "servers" / "fake_browser.py"
# The suite's authorization server knows hermes by this Client ID Metadata Document (it is never fetched).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
# What each non-auth scenario's server offers to be called, with the arguments it expects, in order.
CALLS: dict[str, list[tuple[str, dict[str, object]]]] = {
    "tools_call": [("add_numbers", {"a": 5, "b": 3})],
    "sse-retry": [("test_reconnection", {})],
    "elicitation-sep1034-client-defaults": [("test_client_elicitation_defaults", {})],
    # Two rounds with and without requestState, a call between flows, and a result without resultType.
    "sep-2322-client-request-state": [("test_mrtr_echo_state", {}), ("test_mrtr_no_state", {}),
                                      ("test_mrtr_unrelated", {}), ("test_mrtr_no_result_type", {})],
}
# The echo tool of json-schema-2020-12-preservation takes back the schema hermes holds for this tool.
SCHEMA_TOOL, ECHO_TOOL = "json_schema_2020_12_tool", "json_schema_echo"


def hermes(*args: str) -> tuple[int, str]:
    """Run one hermes command in-process; its output is shown (on stderr) and returned."""
    from hermes.cli.main import cli

    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        try:
            cli.main(list(args), prog_name="hermes", standalone_mode=False)
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except Exception as exc:  # the CLI reports its own errors; anything else is a failure to show
            print(f"hermes {' '.join(args)}: {type(exc).__name__}: {exc}", file=sys.stderr)
            code = 1
    output = captured.getvalue()
    print(f"$ hermes {' '.join(args)}  -> {code}\n{output}", file=sys.stderr, flush=True)
    return code, output


def configure(home: Path, url: str, scenario: str) -> None:
    entry: dict[str, object] = {"url": url}
    if scenario.startswith("auth/"):
        oauth: dict[str, object] = {"client_metadata_url": CLIENT_METADATA_URL}
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        if context.get("client_id"):
            oauth["client_id"] = context["client_id"]
            if context.get("client_secret"):
                oauth["client_secret"] = context["client_secret"]
        entry.update({"auth": "oauth", "oauth": oauth})
    (home / "config.yaml").write_text(json.dumps({"mcp_servers": {"target": entry}}))  # JSON is YAML


def call(tool: str, arguments: dict[str, object], *, yes: bool) -> tuple[int, str]:
    return hermes("tools", "call", f"mcp__target__{tool}", "--args", json.dumps(arguments), "--json",
                  *(["--yes"] if yes else []))


def offered_tools() -> list[dict[str, object]]:
    """The target's tools as hermes offers them to a model (what it refused is not among them)."""
    code, listed = hermes("tools", "list", "--json")
    if code != 0:
        return []
    return [t for t in json.loads(listed).get("tools", []) if t.get("server") == "target" and t.get("kind") == "tool"]


def call_every_offered_tool() -> int:
    """http-invalid-tool-headers: call each tool hermes offers, with a string for each required
    argument; a tool hermes should have refused (an invalid `x-mcp-header`) must not be among them."""
    code = 0
    for tool in offered_tools():
        code, described = hermes("tools", "describe", str(tool["name"]), "--json")
        schema = json.loads(described)["definition"].get("inputSchema", {}) if code == 0 else {}
        arguments = {name: "us-west1" for name in schema.get("required", [])}
        code |= hermes("tools", "call", str(tool["name"]), "--args", json.dumps(arguments), "--json")[0]
    return code


def echo_schema() -> int:
    """json-schema-2020-12-preservation: hand back the input schema hermes keeps for the focal tool."""
    code, described = hermes("tools", "describe", f"mcp__target__{SCHEMA_TOOL}", "--json")
    if code != 0:
        return code
    return call(ECHO_TOOL, {"schema": json.loads(described)["definition"]["inputSchema"]}, yes=False)[0]


def run_auth(scenario: str) -> int:
    code, _ = hermes("mcp", "login", "target", "--timeout", "60")
    if code != 0:
        return code
    code, listed = hermes("tools", "list", "--json")
    tools = [t["name"] for t in json.loads(listed).get("tools", [])
             if t.get("server") == "target" and t.get("kind") == "tool"] if code == 0 else []
    if not tools:
        return code or 1
    code, answer = hermes("tools", "call", tools[0], "--json")
    if code != 0 and "needs a broader OAuth authorization" in answer:
        # What hermes told the user to do: sign in again (for the larger scope), then repeat the call.
        code, _ = hermes("mcp", "login", "target", "--timeout", "60")
        if code == 0:
            code, _ = hermes("tools", "call", tools[0], "--json")
    return code


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python conformance/client.py SERVER_URL", file=sys.stderr)
        return 2
    with slot():
        return run(argv[0], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""))


def run(url: str, scenario: str) -> int:
    with tempfile.TemporaryDirectory(prefix="hermes-conformance-client-") as scratch:
        home = Path(scratch) / "home"
        home.mkdir(mode=0o700)
        configure(home, url, scenario)
        os.environ.update({"HERMES_HOME": str(home), "NO_COLOR": "1",
                           "BROWSER": f"{sys.executable} {BROWSER} %s", "FAKE_BROWSER_MODE": "follow",
                           "FAKE_BROWSER_LOG": str(Path(scratch) / "browser.log")})
        if scenario.startswith("auth/"):
            return run_auth(scenario)
        # The scenario's own list of calls (http-custom-headers names its arguments this way).
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        calls = [(str(c["name"]), dict(c.get("arguments") or {})) for c in context.get("toolCalls", [])]
        calls = calls or CALLS.get(scenario, [])
        if calls:
            code = 0
            for tool, arguments in calls:
                code |= call(tool, arguments, yes=scenario.startswith("elicitation"))[0]
            return code
        if scenario == "http-invalid-tool-headers":
            return call_every_offered_tool()
        if scenario == "json-schema-2020-12-preservation":
            return echo_schema()
        code, _ = hermes("mcp", "test", "target")  # initialize, and anything else: connect and list
        return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
