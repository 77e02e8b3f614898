"""An SMTP server for the gateway's email tests: aiosmtpd (from PyPI) in front of Debian's Dovecot.

It accepts mail for the mailboxes of a Dovecot passwd-file, after SMTP AUTH with their passwords
(plain text on loopback, as a server on the same machine may allow), and hands each message to
`dovecot-lda`, Dovecot's own delivery agent, so that it lands in the mailbox IMAP serves.

Usage: mail_relay.py PORT DOVECOT_CONF USERS_FILE LDA
"""

from __future__ import annotations

import asyncio
import signal
import sys
import warnings
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

port, conf, users_file, lda = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
# aiosmtpd warns about a field of its own session it still fills; nothing here reads it.
warnings.filterwarnings("ignore", message="Session.login_data is deprecated")
USERS: dict[str, str] = {}
with open(users_file) as handle:
    for line in handle:
        name, _, rest = line.partition(":")
        USERS[name.lower()] = rest.split(":", 1)[0].removeprefix("{PLAIN}")


def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
    if not isinstance(data, LoginPassword):
        return AuthResult(success=False, handled=False)
    login, password = data.login.decode(), data.password.decode()
    return AuthResult(success=USERS.get(login.lower()) == password)


class Deliver:
    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, options: Any) -> str:
        if address.lower() not in USERS:
            return "550 5.1.1 No such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        for recipient in envelope.rcpt_tos:
            process = await asyncio.create_subprocess_exec(
                lda, "-c", conf, "-d", recipient.lower(), "-f", envelope.mail_from or "",
                stdin=asyncio.subprocess.PIPE)
            await process.communicate(envelope.original_content or envelope.content)
            if process.returncode != 0:
                return f"451 4.3.0 dovecot-lda failed with {process.returncode}"
        return "250 Delivered"


signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})  # the server's thread inherits it
controller = Controller(Deliver(), hostname="127.0.0.1", port=int(port), authenticator=authenticate,
                        auth_require_tls=False, auth_exclude_mechanism=["CRAM-MD5"])
controller.start()
print("ready", flush=True)
signal.sigwait({signal.SIGTERM, signal.SIGINT})
controller.stop()
