"""Turning an MCP tool result into what a model reads.

Text blocks are joined; structured content is kept; images and audio are written to the cache
folder and referenced by path (a model can't use base64 soup); everything is capped at
`MAX_OUTPUT` characters keeping the head and the tail, where the useful parts usually are.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types

from hermes.files import write_private
from hermes.security.invisible import visible, visible_value

MAX_OUTPUT = 2_000_000


@dataclass(frozen=True)
class RenderedResult:
    text: str
    structured: dict[str, Any] | None
    is_error: bool

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"text": self.text, "is_error": self.is_error}
        if self.structured is not None:
            data["structured"] = self.structured
        return data


def cap(text: str, limit: int = MAX_OUTPUT) -> str:
    if len(text) <= limit:
        return text
    marker = f"\n[... {len(text) - limit} characters omitted ...]\n"
    keep = limit - len(marker)
    head = keep // 2
    return text[:head] + marker + text[len(text) - (keep - head):]


def _save_blob(data_b64: str, mime: str, cache: Path, server: str) -> str:
    try:
        data = base64.b64decode(data_b64, validate=True)
    except (binascii.Error, ValueError):
        return f"[{mime} content that is not valid base64 was dropped]"
    extension = mimetypes.guess_extension(mime) or ".bin"
    digest = hashlib.sha256(data).hexdigest()[:16]
    path = cache / f"mcp-{server}-{digest}{extension}"
    if not path.exists():
        write_private(path, data)
    return f"[{mime} saved to {path}]"


def _block_text(block: types.ContentBlock, cache: Path, server: str) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, (types.ImageContent, types.AudioContent)):
        return _save_blob(block.data, block.mime_type, cache, server)
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return resource.text
        return _save_blob(resource.blob, resource.mime_type or "application/octet-stream", cache, server)
    if isinstance(block, types.ResourceLink):
        return f"[resource {block.uri}]"
    return f"[{getattr(block, 'type', 'unknown')} content]"


MAX_BLOCKS = 10_000  # content blocks of one result; a million one-character blocks is not an answer


def _fewer_blocks(result: types.CallToolResult) -> list[types.ContentBlock]:
    content = list(result.content)
    if len(content) <= MAX_BLOCKS:
        return content
    omitted = len(content) - MAX_BLOCKS
    return [*content[:MAX_BLOCKS],
            types.TextContent(type="text", text=f"[{omitted} more content blocks omitted by hermes]")]


def clean_result(result: types.CallToolResult, redact: Any) -> types.CallToolResult:
    """The result as it may leave hermes: every text in it redacted (a server may echo back what it
    was configured with, a token in its arguments, a header, on success as much as in an error)
    and made visible (no hidden characters, see `hermes.security.invisible`)."""

    def text(value: str) -> str:
        return visible(redact(value))

    def clean(block: types.ContentBlock) -> types.ContentBlock:
        if isinstance(block, types.TextContent):
            return block.model_copy(update={"text": text(block.text)})
        if isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.TextResourceContents):
            resource = block.resource.model_copy(update={"text": text(block.resource.text)})
            return block.model_copy(update={"resource": resource})
        return block

    update: dict[str, Any] = {"content": [clean(block) for block in _fewer_blocks(result)]}
    if result.structured_content is not None:
        update["structured_content"] = visible_value(redact.value(result.structured_content))
    if result.meta is not None:
        update["meta"] = visible_value(redact.value(result.meta))
    return result.model_copy(update=update)


def render_result(result: types.CallToolResult, *, cache: Path, server: str) -> RenderedResult:
    """What a model (or `tools call`) gets: `result` should already have passed `clean_result`."""
    # `clean_result` already kept at most MAX_BLOCKS and said how many it left out.
    text = "\n".join(_block_text(block, cache, server) for block in result.content)
    structured = result.structured_content
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False)
    if structured is not None and len(json.dumps(structured, ensure_ascii=False)) > MAX_OUTPUT:
        structured = None
        text = "[structured content omitted: larger than the output cap]\n" + text
    return RenderedResult(cap(text), structured, bool(result.is_error))
