"""Naming what a sandbox refused a server, from what the server said about it.

bubblewrap does not see the server's system calls, so hermes reads the server's own words: each
stderr line and the text of each failed tool call. A line is a denial only when the plan explains
it: an errno of its kind *and* a path the plan hides or keeps read-only (and that exists on the
host: a missing file nobody hid is just missing), or a network error while the network is not
the host's. Everything else is left alone; a false "the sandbox did it" would send the user the
wrong way.
"""

from __future__ import annotations

import os
import re

from hermes.config.sandbox import Network
from hermes.mcp.sandbox import SECRET_STORES, Plan, tilde
from hermes.mcp.sandbox_places import VCS_CODE, holds_home, starts_up

_READ = re.compile(r"ENOENT|No such file or directory|EACCES|Permission denied|EPERM|Operation not permitted")
_WRITE = re.compile(r"EROFS|Read-only file system|os error 30")
_NETWORK = re.compile(r"ENETUNREACH|Network is unreachable|EAI_AGAIN|Temporary failure in name resolution|"
                      r"Name or service not known|os error 101|ECONNREFUSED|Connection refused|"
                      r"Could not resolve host|getaddrinfo")
_PATH = re.compile(r"(?<![\w:/.])(/[^\s'\"`,;)\]}]+|~/[^\s'\"`,;)\]}]+)")
# A match starts only at the start of a run of name characters (`-` included in the lookbehind): a
# start after every `-` of `a-a-a-…` made each scan to the run's end, quadratic on a model's text.
_ADDRESS = re.compile(r"(?<![\w.-])(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:]+\]|localhost|"
                      r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})(?::(\d{1,5}))?")
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
# Node cannot load a package or a file: `Cannot find package 'x' imported from /a/b.js`,
# `Cannot find module '/a/c.js'` (ESM and CommonJS, `code: 'ERR_MODULE_NOT_FOUND'` on its own line).
_NODE_PACKAGE = re.compile(r"Cannot find (?:package|module) '((?:@[\w.-]+/)?[\w.-]+)[^']*' (?:imported )?from (/\S+)")
_NODE_FILE = re.compile(r"Cannot find module '(/[^']+)'")
_MAX_SEEN = 50
_MAX_TEXT = 64 * 1024
_MAX_LINE = 4096  # what of one line is read: a path or a host name is far shorter


class DenialWatch:
    """The denials of one server's sandbox, each named once, in the order they happened."""

    def __init__(self, server: str, sandbox: Plan) -> None:
        self.server = server
        self.plan = sandbox
        self.seen: list[str] = []

    def observe(self, text: str) -> list[str]:
        """New denials `text` shows (a stderr line, a failed call's text), as sentences for the user."""
        found: list[str] = []
        for line in text[:_MAX_TEXT].splitlines():
            sentence = self._explain(line[:_MAX_LINE])
            if sentence is not None and sentence not in self.seen and sentence not in found:
                found.append(sentence)
            if len(self.seen) + len(found) >= _MAX_SEEN:
                break  # a server repeating denials by the thousand fills neither the log nor the memory
        self.seen += found
        return found

    def _explain(self, line: str) -> str | None:
        loaded = self._unloadable(line)
        if loaded is not None:
            return loaded
        if _WRITE.search(line):
            for path in self._paths(line):
                exists = os.path.lexists(path) or os.path.lexists(os.path.dirname(path))
                guard = next((g for g in self.plan.guarded if path == g or path.startswith(g + "/")), None)
                if exists and guard is not None and os.path.basename(guard) in VCS_CODE:
                    return (f"server '{self.server}' tried to write {self._show(path)}: a repository's own files "
                            f"are read-only to servers, since its hooks and config run code later; "
                            f"{self._allow(f'`sandbox: {{write: [{self._show(guard)}]}}`')} (hooks and config "
                            f"stay read-only)")
                if exists and (guard is not None or starts_up(path, self.plan.homes)):
                    return (f"server '{self.server}' tried to write {self._show(path)}, which its sandbox keeps "
                            f"read-only in every case: what is there runs later with your rights (shell start-up "
                            f"files, repositories' hooks and config, folders on PATH)")
                if exists and not self.plan.writable_path(path):
                    folder = path if os.path.isdir(path) else os.path.dirname(path)
                    if holds_home(folder, (*self.plan.homes, self.plan.home)):
                        # A whole home (or more) is never writable: a server could create start-up files.
                        return (f"server '{self.server}' tried to write {self._show(path)}, in a home folder, "
                                f"which a sandbox never lets a server write whole (it could create start-up "
                                f"files there); {self._allow('`sandbox: {write: [~/FOLDER]}`', 'a folder inside it')}")
                    return (f"server '{self.server}' tried to write {self._show(path)}, which its sandbox keeps "
                            f"read-only; {self._allow(f'`sandbox: {{write: [{self._show(folder)}]}}`')}")
        if _READ.search(line):
            for path in self._paths(line):
                if os.path.lexists(path) and not self.plan.visible(path):
                    store = next((s for s in self._stores() if path == s or path.startswith(s + "/")), None)
                    if store is not None:
                        return (f"server '{self.server}' tried to read {self._show(path)}, which its sandbox "
                                f"hides: secrets are kept there, and hermes shares them with no server")
                    return (f"server '{self.server}' tried to read {self._show(path)}, which its sandbox "
                            f"hides; {self._allow(f'`sandbox: {{read: [{self._show(path)}]}}`')}")
                parent = os.path.dirname(path)
                if not os.path.lexists(path) and os.path.isdir(parent) and not self.plan.visible(parent):
                    # Creating a file where the sandbox shows an empty place: the folder is not there inside.
                    return (f"server '{self.server}' tried to create {self._show(path)}, in a folder its sandbox "
                            f"hides; {self._allow(f'`sandbox: {{write: [{self._show(parent)}]}}`')}")
        if self.plan.network is not Network.ALL and _NETWORK.search(line):
            return self._network(line)
        return None

    def _unloadable(self, line: str) -> str | None:
        """Code a program could not load because the sandbox hides where it is on the host."""
        found: str | None = None
        file = _NODE_FILE.search(line)
        if file is not None and os.path.exists(file.group(1)) and not self.plan.visible(file.group(1)):
            found = os.path.dirname(file.group(1))
        package = _NODE_PACKAGE.search(line)
        if found is None and package is not None:
            name, importer = package.group(1), package.group(2)
            folder = os.path.dirname(importer)
            while folder not in ("/", ""):
                modules = os.path.join(folder, "node_modules")
                if os.path.isdir(os.path.join(modules, name)):
                    found = modules if not self.plan.visible(os.path.join(modules, name)) else None
                    break
                folder = os.path.dirname(folder)
        if found is None:
            return None
        if self.plan.project:
            return (f"server '{self.server}' could not load code from {self._show(found)}, which its sandbox hides; "
                    f"{self._allow(f'`sandbox: {{read: [{self._show(found)}]}}`')}")
        return (f"server '{self.server}' could not load code from {self._show(found)}, which its sandbox hides; "
                f"allow it with `hermes mcp configure {self.server} --sandbox-read {self._show(found)}` "
                f"(`sandbox: {{read: [{self._show(found)}]}}` in its config entry)")

    def _network(self, line: str) -> str | None:
        refused = "ECONNREFUSED" in line or "Connection refused" in line
        target = None
        for match in _ADDRESS.finditer(line):
            host, port = match.group(1), match.group(2)
            if host in ("0.0.0.0",) or (host[0].isdigit() and port is None and not refused):
                continue
            target = f"{host}:{port}" if port else host
            if refused and not (host in _LOOPBACK and port and int(port) not in self.plan.ports):
                return None  # a refused connection is the sandbox's doing only on the host loopback
            break
        if refused and target is None:
            return None
        network = self.plan.network.value
        if target is not None and target.split(":")[0] in _LOOPBACK and target.count(":") == 1:
            port = target.rsplit(":", 1)[1]
            fix = f"`{port}` added to `sandbox.ports`" if self.plan.network is Network.LOOPBACK else \
                f"`sandbox: {{network: loopback, ports: [{port}]}}` (or network: all)"
        else:
            fix = "`sandbox: {network: all}`"
        where = target or "the network"
        return (f"server '{self.server}' tried to reach {where}, which its sandbox does not allow "
                f"(network: {network}); {self._allow(fix)}")

    def _allow(self, setting: str, what: str = "it") -> str:
        """How the user allows what was refused: in the entry, or for a project's server by the grant."""
        if self.plan.project:
            return (f"a project's server gets more than its folder only when its .hermes/config.yaml asks "
                    f"({setting}) and you run `hermes mcp trust --grant`")
        return f"allow {what} with {setting} in its config entry"

    def _stores(self) -> list[str]:
        return [*self.plan.secrets, *self.plan.hidden, *(os.path.join(self.plan.home, store)
                                                         for store in SECRET_STORES)]

    def _paths(self, line: str) -> list[str]:
        return [os.path.normpath(os.path.expanduser(p).rstrip(".:")) for p in _PATH.findall(line)]

    def _show(self, path: str) -> str:
        return tilde(path, self.plan.home)
