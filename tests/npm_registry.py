"""A loopback npm registry of real packages, so that `npx -y` has a real first start without the internet.

`build()` packs every package of an installed `node_modules` tree that a root package needs (its
dependencies, all the way down) into tarballs and writes the registry documents npm reads (each
version's `package.json` plus `dist.tarball` and `dist.integrity`); `serve()` answers npm on
127.0.0.1. The packages are the real ones from the npm registry (`tests/npm`, `npm ci`): npx
resolves, fetches, checks integrity, extracts and links them exactly as from the public registry.
Written here: no registry server is a dependency of the suite, and this needs only GET.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

_TARBALL_HOST = "TARBALL-HOST"  # replaced by the serving address in each answer
_MANIFEST_KEYS = ("name", "version", "dependencies", "optionalDependencies", "peerDependencies",
                  "peerDependenciesMeta", "bin", "engines", "os", "cpu", "type", "main", "exports")


def _installed(modules: Path) -> dict[str, list[Path]]:
    """Every installed package folder by name (`node_modules/x`, `node_modules/@s/x`, nested too)."""
    found: dict[str, list[Path]] = {}
    for manifest in modules.rglob("package.json"):
        folder = manifest.parent
        if folder.parent.name == "node_modules":
            name = folder.name
        elif folder.parent.name.startswith("@") and folder.parent.parent.name == "node_modules":
            name = f"{folder.parent.name}/{folder.name}"
        else:
            continue
        found.setdefault(name, []).append(folder)
    return found


def _tarball(folder: Path) -> bytes:
    """The package as `npm pack` lays it out: every file under `package/`, nested node_modules left out."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if relative.parts[0] == "node_modules" or path.is_symlink() or not path.is_file():
                continue
            info = archive.gettarinfo(str(path), arcname=f"package/{relative}")
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            with path.open("rb") as handle:
                archive.addfile(info, handle)
    return buffer.getvalue()


def build(modules: Path, root: str, out: Path) -> int:
    """Registry files in `out` for `root` and everything it depends on; the number of packages."""
    installed = _installed(modules)
    wanted, queue = set(), [root]
    while queue:
        name = queue.pop()
        if name in wanted or name not in installed:
            continue  # an optional dependency for another platform is not installed: npm skips it
        wanted.add(name)
        for folder in installed[name]:
            manifest = json.loads((folder / "package.json").read_text())
            for key in ("dependencies", "optionalDependencies", "peerDependencies"):
                queue += list((manifest.get(key) or {}).keys())
    (out / "tarballs").mkdir(parents=True, exist_ok=True)
    (out / "documents").mkdir(parents=True, exist_ok=True)
    for name in sorted(wanted):
        document: dict[str, object] = {"name": name, "versions": {}, "dist-tags": {}}
        versions: dict[str, object] = {}
        for folder in installed[name]:
            manifest = json.loads((folder / "package.json").read_text())
            version = manifest.get("version")
            if manifest.get("name") != name or not isinstance(version, str) or version in versions:
                continue
            data = _tarball(folder)
            file = f"{name.replace('/', '-')}-{version}.tgz"
            (out / "tarballs" / file).write_bytes(data)
            entry = {key: manifest[key] for key in _MANIFEST_KEYS if key in manifest}
            entry["dist"] = {"tarball": f"{_TARBALL_HOST}/tarballs/{file}", "shasum": hashlib.sha1(data).hexdigest(),
                             "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()}
            versions[version] = entry
        document["versions"] = versions
        document["dist-tags"] = {"latest": max(versions, key=_version_key)}
        (out / "documents" / f"{name.replace('/', '%2f')}.json").write_text(json.dumps(document))
    return len(wanted)


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("-")[0].split("."))


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """The registry in `folder` on a loopback port, for as long as the block runs; yields its URL."""

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = unquote(self.path.split("?", 1)[0]).lstrip("/")
            host = f"http://127.0.0.1:{self.server.server_address[1]}"
            if path.startswith("tarballs/") and "/" not in path[len("tarballs/"):]:
                file = folder / path
                body, kind = (file.read_bytes(), "application/octet-stream") if file.is_file() else (None, "")
            else:
                file = folder / "documents" / f"{path.replace('/', '%2f')}.json"
                body = file.read_text().replace(_TARBALL_HOST, host).encode() if file.is_file() else None
                kind = "application/json"
            if body is None:
                body, kind = b'{"error": "not found"}', "application/json"
                self.send_response(404)
            else:
                self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
