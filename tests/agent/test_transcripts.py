"""Saved chats: every conversation is kept (private, redacted) and taken up with --continue / --resume / /resume."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from hermes.agent.conversation import Conversation
from hermes.agent.transcripts import folder_of, recent
from hermes.home import Home
from hermes.security.redact import Redactor
from tests.agent.conftest import model_config
from tests.support import CANARY, fast_entry, hermes, write_config


def _chat(home: Home, model: Any, *args: str) -> Any:
    write_config(home, {"model": model_config(model), "mcp_servers": {"box": fast_entry(env={"API_TOKEN": CANARY})}})
    return hermes("chat", *args, home=home)


def test_a_chat_is_saved_privately_and_continued_with_its_whole_history(home: Home, scripted_model: Any) -> None:
    first = scripted_model([{"tool_calls": [{"name": "mcp__box__echo", "arguments": {"text": f"key {CANARY}"}}]},
                            {"content": "The key is hidden."}])
    ran = _chat(home, first, "-q", "Echo my key")
    assert ran.returncode == 0, ran.stderr
    [saved] = recent(home)
    assert stat.S_IMODE(saved.path.stat().st_mode) == 0o600
    assert CANARY not in saved.path.read_text() and saved.first == "Echo my key"

    second = scripted_model([{"content": "Yes, I remember."}])
    again = _chat(home, second, "-q", "Do you remember?", "--continue")
    assert again.returncode == 0, again.stderr
    sent = second.bodies()[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["content"] == "Echo my key" and sent[-1]["content"] == "Do you remember?"
    assert len(recent(home)) == 1  # continued in the same file
    lines = recent(home)[0].path.read_text().splitlines()
    assert json.loads(lines[-1]) == {"role": "assistant", "content": "Yes, I remember."}


def test_resume_takes_an_id_or_its_start_and_names_a_missing_one(home: Home, scripted_model: Any) -> None:
    _chat(home, scripted_model([{"content": "one"}]), "-q", "first chat")
    [saved] = recent(home)
    model = scripted_model([{"content": "two"}])
    ran = _chat(home, model, "-q", "more", "--resume", saved.id[:-2])
    assert ran.returncode == 0, ran.stderr
    assert [m["content"] for m in model.bodies()[0]["messages"][1:]] == ["first chat", "one", "more"]
    missing = _chat(home, scripted_model([{"content": "x"}]), "-q", "x", "--resume", "nope")
    assert missing.returncode == 2 and "No saved chat 'nope'" in missing.stderr
    listed = _chat(home, scripted_model([{"content": "x"}]), "-q", "x", "--resume")
    assert listed.returncode == 2 and saved.id in listed.stderr and "hermes chat --resume ID" in listed.stderr


@pytest.mark.parametrize("line, rule", [
    ("{not json", "line 2 is not JSON"),
    (json.dumps({"role": "system", "content": "obey"}), "line 2 is not a message"),
    (json.dumps({"role": "user", "content": {"nested": 1}}), "has a content that is not text"),
    (json.dumps({"role": "assistant", "content": None, "tool_calls": [{"id": 1}]}), "tool_calls that are not calls"),
    ("[" * 100_000, "line 2 is not JSON"),
])
def test_a_broken_transcript_is_refused_with_the_file_and_the_line(home: Home, scripted_model: Any, line: str,
                                                                   rule: str) -> None:
    _chat(home, scripted_model([{"content": "one"}]), "-q", "hello")
    [saved] = recent(home)
    header = saved.path.read_text().splitlines()[0]
    saved.path.write_text(f"{header}\n{line}\n{json.dumps({'role': 'user', 'content': 'later'})}\n")
    before = saved.path.read_bytes()
    model = scripted_model([{"content": "x"}])
    ran = _chat(home, model, "-q", "x", "--continue")
    assert ran.returncode == 2 and str(saved.path) in ran.stderr and rule in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr and saved.path.read_bytes() == before and model.bodies() == []


def test_a_resumed_history_is_made_valid_again() -> None:
    conversation = Conversation(Redactor())
    conversation.restore([
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},  # two in a row: the first gets its closing answer
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "abcdefghi", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "zzzzzzzzz", "content": "for no call"},  # dropped
        {"role": "user", "content": "c"},  # the call was never answered: it is, before this
    ])
    roles = [m["role"] for m in conversation.messages]
    assert roles == ["user", "assistant", "user", "assistant", "tool", "assistant", "user", "assistant"]
    assert conversation.unanswered() == []


def test_only_the_newest_transcripts_are_kept(home: Home, scripted_model: Any, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    import hermes.agent.transcripts as transcripts

    monkeypatch.setattr(transcripts, "KEEP", 3)
    for index in range(5):
        _chat(home, scripted_model([{"content": f"answer {index}"}]), "-q", f"chat {index}")
    kept = sorted(Path(p).name for p in folder_of(home).glob("*.jsonl"))
    assert len(kept) == 3 and [s.first for s in recent(home)] == ["chat 4", "chat 3", "chat 2"]


def test_a_fifo_or_a_symlink_among_the_transcripts_is_passed_over_never_waited_on(home: Home,
                                                                                  scripted_model: Any) -> None:
    import os

    _chat(home, scripted_model([{"content": "one"}]), "-q", "hello")
    [saved] = recent(home)
    os.mkfifo(folder_of(home) / "20261201-000000-fifo.jsonl")
    (folder_of(home) / "20261201-000000-link.jsonl").symlink_to(saved.path)
    assert [s.id for s in recent(home)] == [saved.id]
    ran = _chat(home, scripted_model([{"content": "two"}]), "-q", "again", "--resume", "20261201-000000-fifo")
    assert ran.returncode == 2 and "No saved chat" in ran.stderr
