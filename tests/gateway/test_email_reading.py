"""What the email platform reads of a message: the person's words, and whether a person wrote it at all."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from hermes.gateway.email_platform import automatic, verified, written_part


def test_the_written_part_leaves_out_quotes_and_signatures_in_the_users_languages() -> None:
    assert written_part("Hallo!\n\nAm Montag schrieb Alice:\n> alt\n> älter\n") == "Hallo!"
    assert written_part("Olá\r\n\r\nEm 2 de dez. de 2026, Ana escreveu:\r\n> antigo") == "Olá"
    assert written_part("你好\n\n2026年12月5日 张三 写道：\n> 旧的") == "你好"
    assert written_part("Yes, go on.\n-- \nAlice\nAlice's phone") == "Yes, go on."
    assert written_part("line one\nline two") == "line one\nline two"


@pytest.mark.parametrize(("headers", "automatic_mail"), [
    ({}, False),
    ({"Auto-Submitted": "auto-replied"}, True),
    ({"Auto-Submitted": "no"}, False),
    ({"Precedence": "bulk"}, True),
    ({"List-Id": "<news.example.org>"}, True),
    ({"Return-Path": "<>"}, True),
])
def test_automatic_mail_starts_no_conversation(headers: dict[str, str], automatic_mail: bool) -> None:
    message = EmailMessage()
    for key, value in headers.items():
        message[key] = value
    assert automatic(message) is automatic_mail


@pytest.mark.parametrize(("results", "trusted"), [
    (["mx.test; dmarc=pass header.from=example.org"], True),
    (["mx.test; dkim=pass header.d=example.org header.s=s1"], True),
    (["mx.test; dkim=pass header.d=elsewhere.org"], False),  # a signature, but not the From domain's
    (["mx.test; spf=pass smtp.mailfrom=example.org"], False),  # SPF alone says nothing about From
    (["evil.example; dmarc=pass"], False),  # another server's word
    (["mx.test.evil; dmarc=pass"], False),
    (["mx.test; dmarc=fail", "evil.example; dmarc=pass"], False),
    ([], False),
])
def test_only_the_trusted_servers_authentication_results_count(results: list[str], trusted: bool) -> None:
    message = EmailMessage()
    for result in results:
        message["Authentication-Results"] = result
    assert verified(message, "mx.test", "alice@example.org") is trusted
