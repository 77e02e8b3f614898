"""A real mail server on loopback for the gateway's email tests: Debian's Dovecot for IMAP (with
IDLE), aiosmtpd from PyPI for SMTP, and Dovecot's own delivery agent between them
(`tests/servers/mail_relay.py`). The people write and read their mail with Python's own smtplib
and imaplib clients.
"""

from __future__ import annotations

import email.policy
import imaplib
import os
import shutil
import smtplib
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest

from tests.support import PATIENCE, PYTHON, SERVERS, free_port

LDA = "/usr/lib/dovecot/dovecot-lda"
MAILBOXES = ("hermes", "alice", "mallory")
CONFIG = """base_dir = {folder}/run
state_dir = {folder}/state
log_path = {folder}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {folder}/users
}}
userdb {{
  driver = passwd-file
  args = username_format=%u {folder}/users
}}
mail_location = maildir:~/Maildir
first_valid_uid = 1
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
  chroot =
}}
service anvil {{
  chroot =
}}
"""


@dataclass
class MailServer:
    imap_port: int
    smtp_port: int
    passwords: dict[str, str]

    def address(self, name: str) -> str:
        return f"{name}@test"

    def send(self, sender: str, to: str, subject: str, body: str, **headers: str) -> str:
        """Mail from `sender` (a mailbox name) as a mail program sends it; returns its Message-ID."""
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = self.address(sender), to, subject
        message["Message-ID"] = f"<{time.monotonic_ns()}@test>"
        for key, value in headers.items():
            message[key.replace("_", "-")] = value
        message.set_content(body)
        with smtplib.SMTP("127.0.0.1", self.smtp_port, timeout=PATIENCE) as smtp:
            smtp.login(self.address(sender), self.passwords[sender])
            smtp.send_message(message)
        return str(message["Message-ID"])

    def inbox(self, name: str) -> list[EmailMessage]:
        """Every message in the mailbox, oldest first."""
        with imaplib.IMAP4("127.0.0.1", self.imap_port, timeout=PATIENCE) as imap:
            imap.login(self.address(name), self.passwords[name])
            imap.select("INBOX", readonly=True)
            found: list[EmailMessage] = []
            for uid in imap.uid("search", "ALL")[1][0].split():
                data = imap.uid("fetch", uid, "(BODY.PEEK[])")[1][0]
                assert isinstance(data, tuple)
                parsed = BytesParser(policy=email.policy.default).parsebytes(data[1])
                assert isinstance(parsed, EmailMessage)
                found.append(parsed)
            return found


def _until_greeting(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"Dovecot exited at start: {log.read_text() if log.exists() else ''}")
        try:
            imaplib.IMAP4("127.0.0.1", port, timeout=5).logout()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("Dovecot did not greet within its start budget")


@pytest.fixture(scope="session")
def mail_server() -> Iterator[MailServer]:
    dovecot = os.environ.get("HERMES_DOVECOT")
    if not dovecot:
        raise RuntimeError('HERMES_DOVECOT is not set: run `eval "$(bash .ci/platforms.sh)"` first')
    # Dovecot reads mail as an unprivileged user: a folder it can reach, not pytest's private one.
    folder = Path(tempfile.mkdtemp(prefix="hermes-mail-"))
    folder.chmod(0o755)
    uid = os.getuid() if os.getuid() != 0 else 65534
    passwords = {name: f"{name}-pass" for name in MAILBOXES}
    for name in MAILBOXES:
        (folder / "mail" / name).mkdir(parents=True)
        os.chown(folder / "mail" / name, uid, uid)
    (folder / "users").write_text("".join(f"{name}@test:{{PLAIN}}{passwords[name]}:{uid}:{uid}::{folder}/mail/{name}\n"
                                          for name in MAILBOXES))
    imap_port, smtp_port = free_port(), free_port()
    (folder / "dovecot.conf").write_text(CONFIG.format(folder=folder, port=imap_port))
    imap = subprocess.Popen([dovecot, "-F", "-c", str(folder / "dovecot.conf")], stdin=subprocess.DEVNULL)
    smtp = subprocess.Popen([PYTHON, str(SERVERS / "mail_relay.py"), str(smtp_port), str(folder / "dovecot.conf"),
                             str(folder / "users"), LDA], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        _until_greeting(imap_port, imap, folder / "dovecot.log")
        assert smtp.stdout is not None and smtp.stdout.readline().strip() == b"ready"
        yield MailServer(imap_port, smtp_port, passwords)
    finally:
        for process in (smtp, imap):
            process.terminate()
            process.wait(PATIENCE)
        shutil.rmtree(folder, ignore_errors=True)
