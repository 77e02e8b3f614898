"""Collect the corpus of ordinary outputs the redactor must leave byte for byte unchanged.

    python tests/data/collect_redaction_corpus.py   (writes tests/data/redaction_corpus.json.gz)

Everything is real text found on a Debian machine with this project's test tools installed, of
the kinds MCP tools return every day:

- docs: the long descriptions of installed Python packages (their READMEs) and the READMEs of
  the npm packages the suite installs (`tests/npm`), in pieces of up to 4 KB;
- listings: `ls -la` of system folders, and file lists as an S3-style JSON listing (`"Key":
  "README.md"`, sizes, ETags, dates);
- logs: dpkg/apt logs as they are, and the same lines as logfmt and JSON logs with levels;
- JSON: `package.json` files of those npm packages.

A piece that holds a well-known credential shape (an AWS example key, a `ghp_` sample in a
README) or a token in a URL (`badge.svg?token=yZL6LtXkOA`) is left out: such text is
secret-shaped by definition and hiding it is right. What was left out is counted in the file, so
the note can say so.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from hermes.security.credentials import known_shapes_pattern, token_like  # noqa: E402

_URL_TOKEN = re.compile(r"[?&](?:token|sig|signature|api_key|key|access_token)=([^&\s)\]\"']+)")


def secret_shaped(text: str) -> bool:
    return bool(known_shapes_pattern().search(text)) or any(token_like(m.group(1)) for m in _URL_TOKEN.finditer(text))

OUT = Path(__file__).with_name("redaction_corpus.json.gz")
PIECE = 4096


def pieces(text: str) -> list[str]:
    return [text[i:i + PIECE] for i in range(0, min(len(text), 40 * PIECE), PIECE)]


def _node_modules() -> Path:
    from tests.npm_tools import install

    return install().root / "node_modules"


def docs() -> list[str]:
    found = []
    site = next((ROOT / ".venv" / "lib").glob("python3*/site-packages"))
    for metadata in sorted(site.glob("*.dist-info/METADATA")):
        text = metadata.read_text(errors="replace")
        body = text.split("\n\n", 1)[1] if "\n\n" in text else ""
        found += pieces(body)
    for readme in sorted((_node_modules()).glob("**/README.md"))[:400]:
        found += pieces(readme.read_text(errors="replace"))
    return found


def listings() -> list[str]:
    found = []
    for folder in ("/etc", "/usr/bin", "/usr/lib/python3", "/usr/share/doc", "/var/log", str(ROOT / "src"),
                   str(_node_modules())):
        if os.path.isdir(folder):
            found += pieces(subprocess.run(["ls", "-la", "--time-style=long-iso", folder], capture_output=True,
                                           text=True).stdout)
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src").rglob("*") if p.is_file())
    files += sorted(p.name for p in Path("/usr/share/doc").iterdir())[:300]
    for start in range(0, len(files), 40):
        contents = [{"Key": name, "LastModified": "2026-11-30T12:00:00.000Z",
                     "ETag": '"' + hashlib.md5(name.encode()).hexdigest() + '"', "Size": len(name) * 97,
                     "StorageClass": "STANDARD"} for name in files[start:start + 40]]
        found.append(json.dumps({"Name": "my-bucket", "Prefix": "", "KeyCount": len(contents), "MaxKeys": 1000,
                                 "IsTruncated": False, "Contents": contents}, indent=2))
    return found


def logs() -> list[str]:
    found = []
    lines: list[str] = []
    for log in ("/var/log/dpkg.log", "/var/log/apt/history.log", "/var/log/alternatives.log"):
        if os.path.exists(log):
            lines += Path(log).read_text(errors="replace").splitlines()[:2000]
    levels = ["debug", "info", "warn", "error", "INFO", "WARNING", "DEBUG"]
    for start in range(0, len(lines), 50):
        chunk = lines[start:start + 50]
        found.append("\n".join(chunk))
        found.append("\n".join(f'time="2026-11-30T12:00:{i % 60:02d}Z" level={levels[i % len(levels)]} '
                               f'msg="{line[:120].replace(chr(34), chr(39))}" key=value'
                               for i, line in enumerate(chunk)))
        found.append("\n".join(json.dumps({"level": levels[i % len(levels)], "msg": line[:160], "key": f"job-{i}",
                                           "session": i, "auth": "none", "token_count": 42 + i})
                               for i, line in enumerate(chunk)))
    return found


def package_files() -> list[str]:
    found = []
    for manifest in sorted((_node_modules()).glob("*/package.json"))[:200]:
        found.append(manifest.read_text(errors="replace")[:PIECE])
    return found


def main() -> None:
    kinds = {"docs": docs(), "listings": listings(), "logs": logs(), "json": package_files()}
    corpus: dict[str, list[str]] = {}
    left_out = 0
    for kind, texts in kinds.items():
        kept = []
        for text in texts:
            if secret_shaped(text):
                left_out += 1
            elif text.strip():
                kept.append(text)
        corpus[kind] = kept
    data = {"left_out_for_known_credential_shapes": left_out, "corpus": corpus}
    OUT.write_bytes(gzip.compress(json.dumps(data).encode(), mtime=0))
    print(f"{OUT}: " + ", ".join(f"{kind} {len(texts)}" for kind, texts in corpus.items()) + f"; left out {left_out}")


if __name__ == "__main__":
    main()
