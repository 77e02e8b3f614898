"""Runs inside a server's sandbox (`network: loopback`): the host loopback ports it may reach.

    python -I relay_inside.py SOCKET_DIR PORT [PORT ...] -- PROGRAM [ARG ...]

The sandbox has a network namespace of its own, so `127.0.0.1:PORT` there is not the host's. For
each declared port this listens on the sandbox's 127.0.0.1:PORT and carries each connection to
`SOCKET_DIR/PORT.sock`, a Unix socket hermes serves outside and relays to the host's port. Then
it runs the server with the same stdin, stdout and stderr, passes signals on, and exits as the
server did. Standard library only: it runs under whichever interpreter started hermes, with no
hermes on its path.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading

_CHUNK = 65536
_MAX_CONNECTIONS = 64  # per port; more are refused rather than exhausting the descriptors


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(_CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end, how in ((sink, socket.SHUT_WR), (source, socket.SHUT_RD)):
            with contextlib.suppress(OSError):
                end.shutdown(how)


def _carry(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _listen(port: int, path: str) -> None:
    listener = socket.create_server(("127.0.0.1", port), reuse_port=False)

    slots = threading.BoundedSemaphore(_MAX_CONNECTIONS)

    def carry(client: socket.socket) -> None:
        try:
            _carry(client, path)
        finally:
            slots.release()

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            if not slots.acquire(blocking=False):
                client.close()
                continue
            threading.Thread(target=carry, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def main(argv: list[str]) -> int:
    if "--" not in argv or len(argv) < 3:
        sys.stderr.write("usage: relay_inside.py SOCKET_DIR PORT... -- PROGRAM [ARG...]\n")
        return 2
    split = argv.index("--")
    folder, ports, command = argv[0], argv[1:split], argv[split + 1:]
    for port in ports:
        _listen(int(port), os.path.join(folder, f"{port}.sock"))
    try:
        child = subprocess.Popen(command)
    except OSError as exc:
        sys.stderr.write(f"relay_inside: cannot start {command[0]}: {exc}\n")
        return 127
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, _frame: child.send_signal(number))
    code = child.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
