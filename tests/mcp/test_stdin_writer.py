"""Requests written to a stdio server by their senders: whole, in order, bounded when the server stops reading."""

from __future__ import annotations

import asyncio
import io
import os
from pathlib import Path

import anyio
import anyio.abc
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from hermes.mcp.stdin_writer import ROOM, StdinWriter
from hermes.mcp.stdio import StdioProcess
from hermes.security.redact import Redactor
from tests.support import PYTHON, SERVERS

pytestmark = pytest.mark.anyio
ENV = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")}
ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"
NOT_READING = "import sys, time\nprint('up', file=sys.stderr, flush=True)\ntime.sleep(600)\n"


def _process(tmp_path: Path, script: str, **kwargs: float) -> StdioProcess:
    path = tmp_path / "server.py"
    path.write_text(script)
    return StdioProcess(PYTHON, [str(path)], env=ENV, cwd=None, log=io.StringIO(), redact=Redactor(), **kwargs)


def _note(sender: int, number: int, size: int) -> SessionMessage:
    return SessionMessage(types.JSONRPCNotification(jsonrpc="2.0", method="notes/x", params={
        "sender": sender, "number": number, "text": f"{sender}-{number}-" * (size // 8)}))


async def test_senders_at_once_each_arrive_whole_and_in_their_order(tmp_path: Path) -> None:
    # Messages past asyncio's buffer mark, so senders wait for the pipe to drain while others write.
    senders, each, size = 8, 12, 200_000
    async with _process(tmp_path, ECHO) as (incoming, outgoing):
        async def send(sender: int) -> None:
            for number in range(each):
                await outgoing.send(_note(sender, number, size))

        seen: dict[int, list[int]] = {sender: [] for sender in range(senders)}
        async with anyio.create_task_group() as tasks:
            for sender in range(senders):
                tasks.start_soon(send, sender)
            for _ in range(senders * each):
                item = await incoming.receive()
                assert isinstance(item, SessionMessage)
                message = item.message
                assert isinstance(message, types.JSONRPCNotification) and message.params is not None
                sender, number = message.params["sender"], message.params["number"]
                assert message.params["text"] == f"{sender}-{number}-" * (size // 8)
                seen[sender].append(number)
    assert seen == {sender: list(range(each)) for sender in range(senders)}


async def test_a_server_that_reads_nothing_never_holds_a_sender_for_good(tmp_path: Path) -> None:
    """Senders go on at once while the buffer has room (their requests' own timeouts run from
    there); past it, each waits at most its patience, its message kept whole in the buffer."""
    process = _process(tmp_path, NOT_READING, patience=0.2)
    async with process as (incoming, outgoing):
        writer = getattr(process.process.stdin, "_stream", None) if process.process is not None else None
        assert isinstance(writer, asyncio.StreamWriter)
        for number in range(40):  # half a megabyte each: past the room of 16 MiB, and past what the pipe holds
            await outgoing.send(_note(0, number, 1_000_000))
        assert writer.transport.get_write_buffer_size() > ROOM  # the last ones each waited 0.2 s, then went on
        await outgoing.send(_note(1, 0, 10))  # the connection is still open for the next one
        assert incoming.statistics().current_buffer_used == 0  # nothing came back: the server read nothing


async def test_a_server_gone_ends_the_connection_for_the_next_sender(tmp_path: Path) -> None:
    process = StdioProcess(PYTHON, [str(SERVERS / "silent.py"), "--exit", "0"], env=ENV, cwd=None,
                           log=io.StringIO(), redact=Redactor())
    async with process as (incoming, outgoing):
        with anyio.fail_after(60):
            await process.exited.wait()
        with pytest.raises(anyio.BrokenResourceError):
            for number in range(8):  # the first write finds the pipe broken; every later one is refused
                await outgoing.send(_note(0, number, 10))
                await anyio.lowlevel.checkpoint()
        with pytest.raises((anyio.EndOfStream, anyio.ClosedResourceError)):
            await incoming.receive()
    assert number <= 1


class _Wrapped:
    """A byte stream with no asyncio writer inside (another backend, or anyio without `_stream`)."""

    def __init__(self, inner: anyio.abc.ByteSendStream) -> None:
        self._inner = inner

    async def send(self, data: bytes) -> None:
        await self._inner.send(data)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_a_stream_without_an_asyncio_writer_is_written_through_anyio(tmp_path: Path) -> None:
    process = _process(tmp_path, ECHO)
    async with process as (incoming, _):
        assert process.process is not None and process.process.stdin is not None
        writer = StdinWriter(_Wrapped(process.process.stdin), patience=60, broken=lambda: None)  # type: ignore[arg-type]
        for number in range(3):
            await writer.send(_note(0, number, 300_000))
        for number in range(3):
            item = await incoming.receive()
            assert isinstance(item, SessionMessage) and isinstance(item.message, types.JSONRPCNotification)
            assert item.message.params == {"sender": 0, "number": number, "text": f"0-{number}-" * (300_000 // 8)}
