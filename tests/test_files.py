"""Safe file plumbing: bounded reads that refuse FIFOs and folders, atomic writes through symlinks."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from hermes.files import TooLarge, UnreadableFile, atomic_write, read_bounded, read_tail, read_text_bounded


def test_reads_a_regular_file_within_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    assert read_bounded(path, 3) == b"abc"
    with pytest.raises(TooLarge):
        read_bounded(path, 2)
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "missing", 10)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []
    reader = threading.Thread(target=lambda: _capture(outcome, fifo), daemon=True)
    reader.start()
    reader.join(timeout=30)
    assert not reader.is_alive(), "reading a FIFO blocked"
    assert isinstance(outcome[0], UnreadableFile) and "FIFO" in outcome[0].reason


def _capture(outcome: list[BaseException], path: Path, read: object = read_bounded) -> None:
    try:
        read(path, 100)  # type: ignore[operator]
    except BaseException as exc:
        outcome.append(exc)


def test_the_tail_of_a_file_is_its_last_bytes_and_a_fifo_is_refused_there_too(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"".join(b"line %d\n" % n for n in range(1000)))
    assert read_tail(log, 9) == b"line 999\n"
    assert read_tail(log, 10**9) == log.read_bytes()  # a small file: all of it
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []
    reader = threading.Thread(target=lambda: _capture(outcome, fifo, read_tail), daemon=True)
    reader.start()
    reader.join(timeout=30)
    assert not reader.is_alive(), "reading a FIFO's tail blocked"
    assert isinstance(outcome[0], UnreadableFile) and "FIFO" in outcome[0].reason


def test_folders_symlinks_and_non_utf8(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile, match="a folder"):
        read_bounded(tmp_path, 100)
    target = tmp_path / "target"
    target.write_text("secret")
    link = tmp_path / "link"
    link.symlink_to(target)
    assert read_bounded(link, 100) == b"secret"
    with pytest.raises(UnreadableFile, match="symbolic link"):
        read_bounded(link, 100, follow_symlinks=False)
    (tmp_path / "latin1").write_bytes(b"caf\xe9")
    with pytest.raises(UnreadableFile, match="not UTF-8"):
        read_text_bounded(tmp_path / "latin1", 100)


def test_atomic_write_keeps_the_mode_and_writes_through_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "real.yaml"
    target.write_text("old")
    link = tmp_path / "config.yaml"
    link.symlink_to(target)
    atomic_write(link, "new", mode=0o640)
    assert link.is_symlink() and target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
