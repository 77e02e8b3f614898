"""Build the shipped tool-search corpus from a raw collection of real servers' `tools/list` answers.

The raw collection (one line per tool: server package, version, registry and the tool object exactly
as the server listed it; a servers.json with each package's declared license; hand-written intents)
came from installing MCP server packages from npm and PyPI and asking each for its tools inside a
network namespace with only loopback. This keeps the servers whose declared license is an
open-source one, drops a description that carries the collecting machine's temporary path, and
writes:

    tool_corpus.jsonl.gz   {"server", "version", "registry", "license", "tool": {...}} per line
    tool_intents.jsonl     {"intent", "server", "tool"} for the kept servers only

Usage: python tests/data/build_tool_corpus.py RAW_FOLDER
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

OPEN_SOURCE = {"MIT", "MIT License", "The MIT License (MIT)", "Apache-2.0", "Apache License",
               "Apache Software License", "ISC", "AGPL-3.0", "GNU AFFERO GENERAL PUBLIC LICENSE"}
# The reference servers declare "SEE LICENSE IN LICENSE"; their repository's license is MIT.
REFERENCE_SERVERS = {"@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-filesystem",
                     "@modelcontextprotocol/server-memory", "@modelcontextprotocol/server-sequential-thinking"}
MACHINE_SPECIFIC = {("cli-mcp-server", "run_command")}


def main(raw: Path) -> None:
    here = Path(__file__).parent
    servers = json.loads((raw / "servers.json").read_text(encoding="utf-8"))
    licenses = {s["server"]: ("MIT" if s["server"] in REFERENCE_SERVERS else s["license"])
                for s in servers if s["status"] == "ok"}
    kept = {name for name, license in licenses.items() if license in OPEN_SOURCE}
    count = 0
    with gzip.open(here / "tool_corpus.jsonl.gz", "wt", encoding="utf-8", compresslevel=9) as out:
        for line in (raw / "tools.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["server"] not in kept or (row["server"], row["tool"]["name"]) in MACHINE_SPECIFIC:
                continue
            row["license"] = licenses[row["server"]]
            out.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
    intents = [json.loads(line) for line in (raw / "intents.jsonl").read_text(encoding="utf-8").splitlines()]
    kept_intents = [i for i in intents if i["server"] in kept and (i["server"], i["tool"]) not in MACHINE_SPECIFIC]
    (here / "tool_intents.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in kept_intents),
                                        encoding="utf-8")
    print(f"{count} tools from {len(kept)} servers, {len(kept_intents)} intents")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
