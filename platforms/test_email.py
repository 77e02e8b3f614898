"""`hermes gateway` over email, against a real IMAP server (Dovecot) and a real SMTP server (aiosmtpd).

The gateway reads its mailbox by IMAP IDLE and answers by SMTP; the people write with smtplib and
read their mailboxes with imaplib; the model is the suite's scripted stand-in.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from email.message import EmailMessage
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from ruamel.yaml import YAML

from hermes.gateway.run import run_gateway
from hermes.home import Home
from platforms.mail import MailServer, mail_server  # noqa: F401  (the session's mail server)
from tests.agent.conftest import model_config, scripted_model  # noqa: F401  (the agent tests' fixture)
from tests.support import PATIENCE, fast_entry, needs_sandbox, write_config

# The rooms' file and terminal tools run only in the sandbox: without it the gateway does not start.
pytestmark = [pytest.mark.anyio, needs_sandbox]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # aioimaplib and aiosmtplib are built on asyncio


def configure(home: Home, mail: MailServer, **extra: Any) -> None:
    write_config(home, {"gateway": {"email": {
        "address": mail.address("hermes"), "password": "${HERMES_MAIL_PASSWORD}", "imap_host": "127.0.0.1",
        "imap_port": mail.imap_port, "smtp_host": "127.0.0.1", "smtp_port": mail.smtp_port, "security": "none",
        "allowed_users": ["Alice@Test"]}}, **extra})
    home.dotenv.write_text(f"HERMES_MAIL_PASSWORD={mail.passwords['hermes']}\n")
    os.chmod(home.dotenv, 0o600)


@asynccontextmanager
async def serving(home: Home) -> AsyncIterator[None]:
    async with anyio.create_task_group() as tasks:
        await tasks.start(run_gateway, home)
        yield
        tasks.cancel_scope.cancel()


async def mail_until(mail: MailServer, name: str, wanted: Callable[[EmailMessage], bool]) -> EmailMessage:
    """The first message in the mailbox `wanted` picks, once it has arrived."""
    with anyio.fail_after(PATIENCE):
        while True:
            for message in await anyio.to_thread.run_sync(mail.inbox, name):
                if wanted(message):
                    return message
            await anyio.sleep(0.1)


def body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    return str(part.get_content()) if part is not None else ""


async def test_a_mail_is_answered_with_an_mcp_tool_and_an_approval_is_a_reply(
        home: Home, tmp_path: Path, mail_server: MailServer, scripted_model: Any) -> None:  # noqa: F811
    mail = mail_server
    model = scripted_model([{"tool_calls": [{"name": "mcp__fast__get_weather", "arguments": {"city": "Lisboa"}}]},
                            {"answer_from_tool": True, "prefix": "Weather: "},
                            {"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "old.txt"}}]},
                            {"answer_from_tool": True, "prefix": "Done: "}])
    configure(home, mail, model=model_config(model), mcp_servers={"fast": fast_entry("--calls", str(tmp_path))})
    await anyio.to_thread.run_sync(lambda: mail.send("alice", mail.address("hermes"), "old", "before the start"))
    async with serving(home):
        asked_id = await anyio.to_thread.run_sync(lambda: mail.send(
            "alice", mail.address("hermes"), "Wetter", "Wie ist das Wetter in Lissabon?\n\n-- \nAlice\n"))
        answer = await mail_until(mail, "alice", lambda m: "Weather: " in body(m))
        assert "Lisboa" in body(answer) and answer["Subject"] == "Re: Wetter"
        assert answer["In-Reply-To"] == asked_id and answer["Auto-Submitted"] == "auto-replied"
        await anyio.to_thread.run_sync(lambda: mail.send("alice", mail.address("hermes"), "Re: Wetter",
                                                         "delete old.txt\n\nOn Monday Alice wrote:\n> Wie ist …\n"))
        question = await mail_until(mail, "alice", lambda m: "Run mcp__fast__delete?" in body(m))
        assert "Reply once, always or deny" in body(question)
        assert (tmp_path / "calls.txt").read_text().split() == ["get-weather"]
        await anyio.to_thread.run_sync(lambda: mail.send("alice", mail.address("hermes"), "Re: Wetter",
                                                         "once\n\n> Run mcp__fast__delete?\n"))
        done = await mail_until(mail, "alice", lambda m: "Done: " in body(m))
        assert "deleted old.txt" in body(done)
    prompts = [r["body"]["messages"][-1]["content"] for r in model.requests() if r["body"]["messages"][-1]["role"]
               == "user"]
    assert prompts == ["Wie ist das Wetter in Lissabon?", "delete old.txt"]  # no signature, no quote, no old mail


async def test_strangers_lists_and_unverified_mail_get_nothing_and_reach_no_model(
        home: Home, mail_server: MailServer, scripted_model: Any) -> None:  # noqa: F811
    """No backscatter: a stranger's mail is not answered (its From may be anyone's), nor is list or
    bulk mail; with `verified_by`, only mail the receiving server authenticated is read."""
    mail = mail_server
    model = scripted_model([{"content": "verified answer"}])
    configure(home, mail, model=model_config(model))
    data = YAML().load(home.config.read_text())
    data["gateway"]["email"]["verified_by"] = "mx.test"
    write_config(home, data)
    hermes = mail.address("hermes")
    async with serving(home):
        for sender, subject, headers in (
                ("mallory", "hi", {"Authentication_Results": "mx.test; dmarc=pass"}),
                ("alice", "list", {"List-Id": "<news.test>", "Authentication_Results": "mx.test; dmarc=pass"}),
                ("alice", "forged", {"Authentication_Results": "evil.example; dmarc=pass"}),
                ("alice", "unsigned", {}),
                ("alice", "signed", {"Authentication_Results": "mx.test; spf=pass; dkim=pass header.d=test"})):
            await anyio.to_thread.run_sync(partial(mail.send, sender, hermes, subject, f"mail {subject}", **headers))
        answered = await mail_until(mail, "alice", lambda m: "verified answer" in body(m))
    assert answered["Subject"] == "Re: signed"  # mail is read in order: everything before it was dropped
    assert [m["content"] for r in model.bodies() for m in r["messages"] if m["role"] == "user"] == ["mail signed"]
    assert not any("hermes" in str(m["From"]) for m in await anyio.to_thread.run_sync(mail.inbox, "mallory"))
