"""A fastmcp client in its default mode, through `hermes mcp serve --http` (run in fastmcp's own venv).

    python fastmcp_call.py URL TOKEN ROOT PREFIX     (PREFIX: how serve names the upstream's tools)

Calls the conformance upstream's sampling, elicitation and roots tools with fastmcp's handlers
and prints, as JSON, each tool's text and what the handlers were asked.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport


async def main(url: str, token: str, root: str, prefix: str) -> None:
    asked: list[str] = []

    async def sample(messages: Any, params: Any, context: Any) -> str:
        asked.append("sampling")
        return "fastmcp's model says hi"

    async def elicit(message: str, response_type: Any, params: Any, context: Any) -> Any:
        asked.append(f"elicitation: {message}")
        return {"username": "fast", "email": "fast@example.org"}

    transport = StreamableHttpTransport(url, headers={"Authorization": f"Bearer {token}"})
    async with Client(transport, roots=[root], sampling_handler=sample, elicitation_handler=elicit) as client:
        texts = {}
        for tool, arguments in (("test_sampling", {"prompt": "hello"}),
                                ("test_elicitation", {"message": "Who are you?"}),
                                ("test_input_required_result_list_roots", {})):
            result = await client.call_tool(prefix + tool, arguments)
            texts[tool] = result.content[0].text
    print(json.dumps({"texts": texts, "asked": asked}))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
