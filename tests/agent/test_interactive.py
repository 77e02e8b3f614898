"""Interactive `hermes chat` in a real pseudo-terminal: streaming, Ctrl-C, approvals, forms, slash commands."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pexpect
from ruamel.yaml import YAML

from hermes.home import Home
from tests.agent.conftest import ScriptedModel, model_config
from tests.support import PATIENCE, PYTHON, fast_entry, hermes, stdio_entry, wait_for, write_config

# Its test tools annotate nothing; these tests are about forms and sampling, not about approval.
DOWN = "\x1b[B"
CONFORMANCE = stdio_entry("conformance_server.py", approval="never")


def _chat(home: Home, cwd: Path, *, colour: bool = False, options: tuple[str, ...] = (),
          said_first: str | None = None) -> pexpect.spawn:
    """`hermes chat OPTIONS` in a pty; plain text (NO_COLOR) unless `colour`, a colour terminal;
    `said_first`: what it must say before its start line."""
    environment = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    looks = {"TERM": "xterm-256color"} if colour else {"TERM": "xterm", "NO_COLOR": "1"}
    child = pexpect.spawn(PYTHON, ["-m", "hermes", "chat", *options], encoding="utf-8", timeout=PATIENCE,
                          cwd=str(cwd), env={**environment, "HERMES_HOME": str(home.root), **looks},
                          dimensions=(40, 160))
    if said_first is not None:
        child.expect(said_first)
    child.expect("/help lists commands")
    child.expect("›")
    return child


def _say(child: pexpect.spawn, text: str) -> None:
    child.send(text + "\r")


def test_ctrl_c_stops_a_running_tool_on_its_server_and_the_chat_goes_on(home: Home, scripted_model: Any,
                                                                       tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    model: ScriptedModel = scripted_model([
        {"tool_calls": [{"name": "mcp__box__slow", "arguments": {"seconds": 600, "marker": str(marker)}}]},
        {"content": "still here after the interruption"}])
    write_config(home, {"model": model_config(model), "mcp_servers": {"box": fast_entry()}})
    child = _chat(home, tmp_path)
    _say(child, "run the slow one")
    child.expect("⋯ mcp__box__slow")
    # The status line is redrawn in place with the time the tool has run so far.
    child.expect(r"\r\x1b\[K(\x1b\[2m)?⋯ mcp__box__slow [1-9]\d*\.\d s")
    child.sendintr()
    child.expect(r"\(interrupted: the turn stopped; running tools were cancelled on their servers\)")
    assert wait_for(marker.exists), "the server never heard that the call was cancelled"
    assert marker.read_text() == "cancelled"
    child.expect("›")
    _say(child, "are you there?")
    child.expect("still here after the interruption")
    child.expect("›")
    # The interrupted call still got its answer in the conversation (an API refuses a dangling call).
    last = model.bodies()[-1]["messages"]
    tools = [m for m in last if m["role"] == "tool"]
    assert len(tools) == 1 and tools[0]["content"].startswith("Cancelled: the user interrupted"), last
    child.sendcontrol("c")  # at an empty prompt: leave
    child.expect(pexpect.EOF)
    child.wait()  # the terminal closes a moment before the process exits
    child.close()
    assert child.exitstatus == 0


def test_approval_form_and_sampling_are_asked_in_the_terminal(home: Home, scripted_model: Any,
                                                              tmp_path: Path) -> None:
    model = scripted_model([
        {"tool_calls": [{"name": "mcp__box__delete", "arguments": {"what": "old notes"}}]},
        {"answer_from_tool": True, "prefix": "Result: "},
        {"tool_calls": [{"name": "mcp__conf__test_elicitation_sep1034_defaults"}]},
        {"answer_from_tool": True, "prefix": "Form: "},
        {"tool_calls": [{"name": "mcp__conf__test_sampling", "arguments": {"prompt": "What is 6 times 7?"}}]},
        {"content": "forty-two"},
        {"answer_from_tool": True, "prefix": "Sampled: "}])
    write_config(home, {"model": model_config(model), "mcp_servers": {"box": fast_entry(), "conf": CONFORMANCE}})
    child = _chat(home, tmp_path)
    _say(child, "delete the old notes")
    child.expect("Allow mcp__box__delete")
    _say(child, "o")
    child.expect("Result: deleted old notes")
    child.expect("›")
    _say(child, "fill in the form")
    child.expect("asks: Please review and update the form fields with defaults")
    for label in ("Name", "Age", "Score", "Status", "Verified"):
        child.expect(label)
        child.send("\r")  # keep the default that is already filled in
    child.expect("Form: Elicitation completed: action=accept")
    child.expect("John Doe")
    child.expect("›")
    _say(child, "ask the server")
    child.expect("MCP server 'conf' asks the model")
    _say(child, "a")
    child.expect("Sampled: LLM response: forty-two")
    child.expect("›")
    sampled = model.bodies()[5]
    assert sampled["messages"] == [{"role": "user", "content": "What is 6 times 7?"}]
    _say(child, "/exit")
    child.expect(pexpect.EOF)


def test_ctrl_c_while_the_model_thinks_cancels_no_tool_and_the_clock_counts(home: Home, scripted_model: Any,
                                                                          tmp_path: Path) -> None:
    model: ScriptedModel = scripted_model([{"hang": True}, {"content": "back again"}])
    write_config(home, {"model": model_config(model), "mcp_servers": {}})
    child = _chat(home, tmp_path)
    _say(child, "think hard")
    child.expect(r"waiting for test-model [1-9]\d*\.\d s")  # the clock counts while nothing has come
    # Under load the request may still be on its way: Ctrl-C before it arrives would leave the
    # script's hanging answer for the next question.
    assert wait_for(lambda: len(model.requests()) == 1)
    child.sendintr()
    child.expect(r"\(interrupted: the turn stopped([^)]*)\)")
    assert child.match.group(1) == "", "no tool ran, so none was cancelled"
    child.expect("›")
    _say(child, "hello?")
    child.expect("back again")
    child.expect("›")
    child.sendeof()
    child.expect(pexpect.EOF)


def test_slash_commands(home: Home, scripted_model: Any, tmp_path: Path) -> None:
    model = scripted_model([{"content": "first answer"}, {"content": "second answer"}])
    write_config(home, {"model": model_config(model), "mcp_servers": {"box": fast_entry()}})
    home.chat_history.write_text("")  # as an older hermes left it
    home.chat_history.chmod(0o644)
    child = _chat(home, tmp_path)
    _say(child, "/help")
    child.expect("/reload-mcp")
    child.expect("›")
    _say(child, "/tools")
    child.expect("mcp__box__echo")
    child.expect("›")
    _say(child, "hello")
    child.expect("first answer")
    child.expect("›")
    write_config(home, {"model": model_config(model),
                        "mcp_servers": {"box": fast_entry(), "gone": fast_entry("--exit-at-start", "3")}})
    _say(child, "/reload-mcp")  # what the user typed is done, not asked about again
    child.expect("added: gone")
    child.expect("unavailable: MCP server 'gone'")
    child.expect("›")
    _say(child, "/status")
    child.expect("box: connected")
    child.expect("›")
    _say(child, "/new")
    child.expect("A fresh conversation")
    child.expect("›")
    _say(child, "hello again")
    child.expect("second answer")
    child.expect("›")
    second = model.bodies()[1]["messages"]
    # The notice goes in front of the question, in one user message: roles keep alternating.
    assert [m["role"] for m in second] == ["system", "user"]
    assert "MCP server 'gone' was added: unavailable" in second[1]["content"]
    assert second[1]["content"].endswith("hello again")
    _say(child, "/nonsense")
    child.expect("Unknown command /nonsense; /help lists them")
    child.expect("›")  # keys typed before the prompt is back could be lost
    _say(child, "/stauts")
    child.expect(r"Unknown command /stauts \(did you mean '/status'\?\)")
    child.expect("›")
    _say(child, "/mcp")
    child.expect(r"box: connected, \d+ tools \(stdio\)")
    child.expect("gone: failed, 0 tools")
    child.expect("›")
    _say(child, "/mcp disable gone")
    child.expect("Disabled MCP server 'gone'")
    child.expect("removed: gone|restarted: gone")
    child.expect("›")
    _say(child, "/mcp reconnect box")
    child.expect("Reconnected 'box': connected")
    child.expect("›")
    _say(child, "/mcp reconnect bx")
    child.expect("No MCP server 'bx' in this chat \\(did you mean 'box'\\?\\)")
    child.expect("›")
    child.sendeof()
    child.expect(r"This chat is saved: `hermes chat --resume [0-9a-z-]+`")
    child.expect(pexpect.EOF)
    assert YAML(typ="safe").load(home.config.read_text())["mcp_servers"]["gone"]["enabled"] is False
    # What was typed is the user's alone.
    assert "hello again" in home.chat_history.read_text()
    assert stat.S_IMODE(home.chat_history.stat().st_mode) == 0o600


def test_untrusted_project_skills_are_offered_once_and_the_answer_is_kept(home: Home, scripted_model: Any,
                                                                         tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".hermes" / "skills" / "haiku").mkdir(parents=True)
    (project / ".hermes" / "skills" / "haiku" / "SKILL.md").write_text("---\nname: haiku\n---\nAnswer in haiku.\n")
    model = scripted_model([{"content": "ok"}])
    write_config(home, {"model": model_config(model), "mcp_servers": {}})
    child = pexpect.spawn(PYTHON, ["-m", "hermes", "chat"], encoding="utf-8", timeout=PATIENCE, cwd=str(project),
                          env={**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm", "NO_COLOR": "1"},
                          dimensions=(40, 160))
    child.expect("has project skills \\(haiku\\)")
    child.expect("Trust this folder")
    _say(child, "y")
    child.expect("skills: haiku")
    child.expect("›")
    _say(child, "hi")
    child.expect("ok")
    child.expect("›")
    child.sendeof()
    child.expect(pexpect.EOF)
    assert "Answer in haiku." in model.bodies()[0]["messages"][0]["content"]
    # Asked once: the next chat in the same folder loads them without asking.
    again = pexpect.spawn(PYTHON, ["-m", "hermes", "chat"], encoding="utf-8", timeout=PATIENCE, cwd=str(project),
                          env={**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm", "NO_COLOR": "1"},
                          dimensions=(40, 160))
    assert again.expect(["Trust this folder", "skills: haiku"]) == 1
    again.expect("›")
    again.sendeof()
    again.expect(pexpect.EOF)


def test_a_hung_server_never_holds_the_chat_back(home: Home, scripted_model: ScriptedModel, tmp_path: Path) -> None:
    """The prompt comes after --wait, not after the hung server's connect timeout (here ten minutes)."""
    model = scripted_model([{"content": "hello"}])
    write_config(home, {"model": model_config(model), "mcp_servers": {
        "box": fast_entry(), "slow": fast_entry("--ready-delay", "600", connect_timeout=600)}})
    child = pexpect.spawn(PYTHON, ["-m", "hermes", "chat", "--wait", "1"], encoding="utf-8", timeout=PATIENCE,
                          cwd=str(tmp_path), dimensions=(40, 160),
                          env={**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm", "NO_COLOR": "1"})
    child.expect("/help lists commands")
    # (The agent's own toolsets may still be starting too.)
    child.expect(r"still starting: [a-z, ]*\bslow\b[a-z, ]*; their tools join when they are ready")
    child.expect("›")
    _say(child, "hi")
    child.expect("hello")
    # The model heard why slow's tools are not there yet.
    first = model.bodies()[0]["messages"][0]["content"]
    assert "slow" in first and "starting" in first, first
    _say(child, "/exit")
    child.expect(pexpect.EOF)


def test_hermes_mcp_reload_from_another_terminal_reaches_a_running_chat(home: Home, scripted_model: ScriptedModel,
                                                                         tmp_path: Path) -> None:
    model = scripted_model([{"content": "first"}, {"content": "second"}])
    write_config(home, {"model": model_config(model), "mcp_servers": {"box": fast_entry()}})
    child = _chat(home, tmp_path)
    _say(child, "hi")
    child.expect("first")
    child.expect("›")
    write_config(home, {"model": model_config(model), "mcp_servers": {"box": fast_entry(),
                                                                       "more": fast_entry("--lean")}})
    reloaded = hermes("mcp", "reload", home=home)
    assert reloaded.returncode == 0 and "more" in reloaded.stdout, reloaded.stdout + reloaded.stderr
    _say(child, "again")
    child.expect("second")
    last = model.bodies()[-1]["messages"][-1]["content"]
    assert "MCP server 'more' was added" in last and last.endswith("again"), last
    _say(child, "/exit")
    child.expect(pexpect.EOF)


def test_answers_are_rendered_as_markdown_on_a_colour_terminal(home: Home, scripted_model: Any,
                                                               tmp_path: Path) -> None:
    import io

    import pyte

    answer = "# Scene report\n\nThe scene has **three** objects:\n\n- Cube\n- Light\n\n```python\nprint(1)\n```\n"
    model = scripted_model([{"content": answer}, {"content": "plain **again**"}])
    write_config(home, {"model": model_config(model), "mcp_servers": {}})
    child = _chat(home, tmp_path, colour=True)
    seen = child.logfile_read = io.StringIO()
    _say(child, "what is in my scene?")
    child.expect("Scene report")
    child.expect("three")
    child.expect(r"•\S*\s*\S*Cube")  # a list item, with rich's bullet
    child.expect("print")
    child.expect("›")
    # What the screen shows once the answer is complete: each block rendered where its plain text
    # showed while it streamed in.
    screen = pyte.Screen(160, 40)
    pyte.Stream(screen).feed(seen.getvalue())
    shown = "\n".join(screen.display)
    assert "Scene report" in shown and "three" in shown and "Cube" in shown and "print(1)" in shown
    assert "**three**" not in shown and "```" not in shown and "# Scene" not in shown
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()


def test_resume_in_the_chat_takes_up_a_saved_conversation(home: Home, scripted_model: Any, tmp_path: Path) -> None:
    first = scripted_model([{"content": "noted: the code word is heron"}])
    write_config(home, {"model": model_config(first), "mcp_servers": {}})
    assert hermes("chat", "-q", "remember the code word heron", home=home).returncode == 0
    from hermes.agent.transcripts import recent

    [saved] = recent(home)
    model = scripted_model([{"content": "the code word was heron"}])
    write_config(home, {"model": model_config(model), "mcp_servers": {}})
    child = _chat(home, tmp_path)
    _say(child, "/resume")
    child.expect(saved.id)
    child.expect("›")
    _say(child, f"/resume {saved.id}")
    child.expect(f"Resumed {saved.id} \\(2 messages")
    child.expect("›")
    _say(child, "what was the code word?")
    child.expect("the code word was heron")
    child.expect("›")
    sent = model.bodies()[-1]["messages"]
    assert [m["content"] for m in sent[1:]] == ["remember the code word heron", "noted: the code word is heron",
                                                "what was the code word?"]
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()


def test_a_form_with_every_kind_of_choice_answers_values_and_lists(home: Home, scripted_model: Any,
                                                                  tmp_path: Path) -> None:
    """SEP-1330's enums: titles are shown, values are sent; a multi-select answers a list."""
    model = scripted_model([{"tool_calls": [{"name": "mcp__conf__test_elicitation_sep1330_enums"}]},
                            {"answer_from_tool": True, "prefix": "Form: "}])
    write_config(home, {"model": model_config(model), "mcp_servers": {"conf": CONFORMANCE}})
    child = _chat(home, tmp_path)
    _say(child, "choose")
    child.expect("Please select options")
    child.expect("untitledSingle")
    child.send("\r")  # option1
    child.expect("Second Option")
    child.send(DOWN + "\r")  # value2, shown by its title
    child.expect("Option Two")
    child.send("\r")  # opt1, shown as "Option One"
    child.expect("untitledMulti")
    child.send(" " + DOWN + DOWN + " \r")  # option1 and option3
    child.expect("Third Choice")
    child.send(DOWN + " \r")  # value2
    child.expect("Form: Elicitation completed: action=accept")
    child.expect("›")
    answer = model.bodies()[-1]["messages"][-1]["content"]
    assert "'titledSingle': 'value2'" in answer and "'legacyEnum': 'opt1'" in answer, answer
    assert "'untitledMulti': ['option1', 'option3']" in answer and "'titledMulti': ['value2']" in answer, answer
    _say(child, "/exit")
    child.expect(pexpect.EOF)


def test_a_call_a_small_model_writes_as_a_code_block_runs_and_is_not_shown(home: Home, scripted_model: Any,
                                                                          tmp_path: Path) -> None:
    import io

    import pyte

    # What Qwen2.5-Coder-1.5B writes under its own template on llama.cpp (measured): the call as
    # a JSON code block in the answer's text, streamed in pieces.
    written = '```json\n{\n  "name": "mcp__box__echo",\n  "arguments": {\n    "text": "ping-from-text"\n  }\n}\n```'
    model = scripted_model([{"content": written}, {"answer_from_tool": True, "prefix": "the tool said: "}])
    write_config(home, {"model": model_config(model), "mcp_servers": {"box": fast_entry(approval="never")}})
    # --yes is one-shot's: here it is said to change nothing.
    child = _chat(home, tmp_path, options=("--yes",), said_first="--yes is for one-shot runs")
    seen = child.logfile_read = io.StringIO()
    _say(child, "echo something")
    child.expect("the tool said: ping-from-text")
    child.expect("›")
    screen = pyte.Screen(160, 40)
    pyte.Stream(screen).feed(seen.getvalue())
    shown = "\n".join(screen.display)
    assert "mcp__box__echo" in shown  # the tool line
    assert '"arguments"' not in shown and "```" not in shown, shown
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
