"""Email: the bot's mailbox over IMAP (aioimaplib), its answers over SMTP (aiosmtplib).

Each correspondent is one conversation: a room is the sender's address, and the answer goes back
as a reply to their last message (`Re:` subject, `In-Reply-To`). Mail that was in the inbox before
the start is left alone; new mail arrives by IMAP IDLE (a poll where the server has no IDLE).
Only the plain-text part is read, without the quoted history below a reply or a signature; a
message over `MAX_EMAIL_BYTES` is not read (and logged). Email has no buttons: a question lists
its choices and the person replies.

Mail is never a one-to-one chat for pairing: a stranger's mail gets no answer at all, since a
From address is whatever the sender wrote, and answering it would send mail to whoever spam names
(backscatter). Bulk, list and automatic mail start no conversation. A From address can be forged
by anyone who can reach the mail server: with `verified_by` set to the authserv-id of the
receiving server, only mail whose `Authentication-Results` from that server show DMARC (or DKIM for
the From domain) passing is read.
"""

from __future__ import annotations

import email.policy
import logging
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import make_msgid, parseaddr
from typing import Any

import anyio
from anyio.abc import TaskStatus

from hermes.config.gateway_settings import PlatformSettings
from hermes.errors import HermesError
from hermes.gateway.platform import Button, Deliver, Incoming, SendFailed, closing

LOG = logging.getLogger("hermes.gateway.email")
MAX_EMAIL_BYTES = 2_000_000
MAX_BODY = 100_000  # characters of a message's text the agent reads
IDLE_SECONDS = 25 * 60  # servers drop an IDLE after 30 minutes; it is renewed before
POLL_SECONDS = 30.0  # a server without IDLE is asked this often
RETRY_SECONDS = 10.0
SIGN_IN_SECONDS = 60.0
_UID = re.compile(rb"UID (\d+)")
_SIZE = re.compile(rb"RFC822\.SIZE (\d+)")
_QUOTE_INTRO = re.compile(r"^(On .*wrote:|Am .*schrieb .*:|Em .*escreveu:|.*写道：?)\s*$")


MAX_THREADS = 1_000  # correspondents whose last subject is kept for the replies
_FAILURES: tuple[type[BaseException], ...] = (OSError, TimeoutError, HermesError)


@dataclass
class _Thread:
    subject: str
    message_id: str | None


class EmailPlatform:
    name = "email"
    max_text = MAX_BODY

    def __init__(self, settings: PlatformSettings) -> None:
        values = settings.values
        self._address = values["address"]
        self._username = values.get("username") or values["address"]
        self._password = values["password"]
        self._imap_host, self._smtp_host = values["imap_host"], values["smtp_host"]
        self._security = values.get("security") or "tls"
        # starttls is SMTP's (port 587); IMAP is then over TLS from the start (993), as providers offer it.
        self._imap_port = int(values.get("imap_port") or (143 if self._security == "none" else 993))
        self._smtp_port = int(values.get("smtp_port") or {"tls": 465, "starttls": 587}.get(self._security, 25))
        self._verified_by = (values.get("verified_by") or "").lower()
        self._threads: OrderedDict[str, _Thread] = OrderedDict()
        self._next_uid = 0

    async def run(self, deliver: Deliver, *, task_status: TaskStatus[None]) -> None:
        import aioimaplib

        failures = (*_FAILURES, aioimaplib.AioImapException)
        imap = await self._connect(first=True)
        task_status.started()
        try:
            while True:
                try:
                    await self._serve(imap, deliver)
                except failures as exc:  # the server went away: connect again
                    LOG.warning("email: the IMAP connection failed (%s); connecting again", exc)
                await closing(imap.logout, "email")
                await anyio.sleep(RETRY_SECONDS)
                try:
                    imap = await self._connect(first=False)
                except failures as exc:
                    LOG.warning("email: connecting to %s failed (%s)", self._imap_host, exc)
        finally:
            await closing(imap.logout, "email")

    async def _connect(self, *, first: bool) -> Any:
        import ssl

        import aioimaplib

        where = f"email: signing in to {self._imap_host}:{self._imap_port} as {self._username}"
        context = None if self._security == "none" else ssl.create_default_context()
        try:
            with anyio.fail_after(SIGN_IN_SECONDS):
                imap = aioimaplib.IMAP4_SSL(self._imap_host, self._imap_port, ssl_context=context) if context \
                    else aioimaplib.IMAP4(self._imap_host, self._imap_port)
                await imap.wait_hello_from_server()
                answer = await imap.login(self._username, self._password)
                if answer.result != "OK":
                    raise HermesError(f"{where} failed: the server refused the user name or password.")
                selected = await imap.select("INBOX")
                if selected.result != "OK":
                    raise HermesError(f"{where}: the INBOX could not be opened.")
        except TimeoutError:
            raise HermesError(f"{where}: no answer within {SIGN_IN_SECONDS:.0f} s.") from None
        except OSError as exc:
            raise HermesError(f"{where} failed: {exc.strerror or exc}.") from None
        if first:  # what was there before the start is not for this gateway
            self._next_uid = max(await self._uids(imap, 1), default=0) + 1
        return imap

    async def _serve(self, imap: Any, deliver: Deliver) -> None:
        idle = imap.has_capability("IDLE")
        while True:
            for uid in await self._uids(imap, self._next_uid):
                self._next_uid = uid + 1
                incoming = await self._read(imap, uid)
                if incoming is not None:
                    await deliver(incoming)
            if not idle:
                await anyio.sleep(POLL_SECONDS)
                await imap.noop()
                continue
            waiting = await imap.idle_start(timeout=IDLE_SECONDS)
            try:
                await imap.wait_server_push(timeout=IDLE_SECONDS)
            except TimeoutError:
                pass
            finally:
                imap.idle_done()
                with anyio.fail_after(SIGN_IN_SECONDS):
                    await waiting

    async def _uids(self, imap: Any, start: int) -> list[int]:
        answer = await imap.uid_search(f"UID {start}:*")
        if answer.result != "OK":
            raise HermesError(f"email: searching the INBOX failed ({answer.result}).")
        found = [int(word) for line in answer.lines[:1] for word in bytes(line).split() if word.isdigit()]
        return sorted(uid for uid in found if uid >= start)  # "n:*" also names the last one, whatever its UID

    async def _read(self, imap: Any, uid: int) -> Incoming | None:
        sized = await imap.uid("fetch", str(uid), "(RFC822.SIZE)")
        size = _SIZE.search(b" ".join(bytes(line) for line in sized.lines))
        if size is None:
            return None
        raw = None
        if int(size.group(1)) <= MAX_EMAIL_BYTES:
            fetched = await imap.uid("fetch", str(uid), "(BODY.PEEK[])")
            raw = next((bytes(line) for line in fetched.lines if isinstance(line, bytearray)), None)
        else:
            LOG.warning("email: message %s (%s bytes) is over %s bytes and was not read", uid, size.group(1),
                        MAX_EMAIL_BYTES)
        await imap.uid("store", str(uid), "+FLAGS", "(\\Seen)")
        if raw is None:
            return None
        try:
            return self._incoming(raw)
        except Exception as exc:  # a hostile message (a bogus charset, an address that breaks parsing): skipped
            LOG.warning("email: message %s could not be read and was skipped: %s", uid, exc)
            return None

    def _incoming(self, raw: bytes) -> Incoming | None:
        message = BytesParser(policy=email.policy.default).parsebytes(raw)
        sender = parseaddr(str(message.get("From", "")))[1].strip().lower()
        if not sender or sender == self._address.lower() or automatic(message):
            return None  # its own mail, and bulk, list or automatic mail start no conversation
        if self._verified_by and not verified(message, self._verified_by, sender):
            LOG.warning("email: mail from %s without a passing DMARC or DKIM check by %s was not read", sender,
                        self._verified_by)
            return None
        subject = " ".join(str(message.get("Subject", "")).split())  # no line break reaches a reply's header
        self._threads[sender] = _Thread(subject, message.get("Message-ID"))
        self._threads.move_to_end(sender)
        while len(self._threads) > MAX_THREADS:
            self._threads.popitem(last=False)
        body = message.get_body(preferencelist=("plain",))
        text = body.get_content() if body is not None else ""
        return Incoming(sender, sender, written_part(str(text))[:MAX_BODY] or subject)

    async def send(self, room: str, text: str, buttons: Sequence[Button] = ()) -> None:
        """Email has no buttons: the question's text lists its choices."""
        import aiosmtplib

        try:
            message = self._reply(room, text)
            await aiosmtplib.send(message, hostname=self._smtp_host, port=self._smtp_port, username=self._username,
                                  password=self._password, use_tls=self._security == "tls",
                                  start_tls=self._security == "starttls", timeout=SIGN_IN_SECONDS)
        except (aiosmtplib.SMTPException, OSError, ValueError) as exc:  # ValueError: a header the library refused
            raise SendFailed(str(exc)) from None

    def _reply(self, room: str, text: str) -> EmailMessage:
        thread = self._threads.get(room, _Thread("", None))
        message = EmailMessage()
        message["From"], message["To"] = self._address, room
        subject = thread.subject or "hermes"
        message["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
        message["Message-ID"] = make_msgid(domain=self._address.rpartition("@")[2] or None)
        message["Auto-Submitted"] = "auto-replied"  # RFC 3834: vacation responders must not answer this
        replying_to = " ".join(str(thread.message_id or "").split())
        if replying_to:
            message["In-Reply-To"] = message["References"] = replying_to
        message.set_content(text)
        return message


def written_part(text: str) -> str:
    """What the person wrote: without the quoted message below a reply, nor a signature."""
    kept: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.rstrip() == "--" or line.startswith(">"):
            break
        kept.append(line)
    while kept and (not kept[-1].strip() or _QUOTE_INTRO.match(kept[-1].strip())):
        kept.pop()
    return "\n".join(kept).strip()


def automatic(message: Any) -> bool:
    """Mail no person wrote to the bot: automatic replies, bounces, lists and bulk mail (RFC 3834)."""
    return (str(message.get("Auto-Submitted", "no")).strip().lower() != "no"
            or str(message.get("Precedence", "")).strip().lower() in ("bulk", "list", "junk")
            or message.get("List-Id") is not None
            or str(message.get("Return-Path", "")).strip() == "<>")


def verified(message: Any, authserv_id: str, sender: str) -> bool:
    """Whether the receiving server `authserv_id` found the From domain's mail authentic (RFC 8601):
    DMARC passed, or a DKIM signature of the From domain did."""
    domain = sender.rpartition("@")[2]
    for header in message.get_all("Authentication-Results") or []:
        server, _, results = str(header).partition(";")
        if server.strip().split()[0:1] != [authserv_id]:
            continue  # another server's word (or the sender's own): not trusted
        for result in (part.strip().lower() for part in results.split(";")):
            if result.startswith("dmarc=pass"):
                return True
            if result.startswith("dkim=pass") and f"header.d={domain}" in result.split():
                return True
    return False
