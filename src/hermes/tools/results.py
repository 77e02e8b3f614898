"""Turning an MCP tool result into what a model reads, without losing anything silently.

Text blocks are joined; structured content is kept; images and audio are written to the cache
folder and referenced by path (a model can't use base64 soup). A text longer than its budget
(`MAX_OUTPUT` characters, or less when the tool's `_meta` says `maxResultSizeChars`) keeps its
head and its tail, where the useful parts usually are, and the whole text goes to a file of its
own (0600, under `HERMES_HOME/results/`): the model is told how much was left out and where it is.
Both folders are bounded: past their size, the oldest files go first.
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

from hermes.files import trim_folder, write_private
from hermes.security.clean import clean_text, clean_value
from hermes.security.redact import Redactor

MAX_OUTPUT = 2_000_000
MIN_BUDGET = 1_000  # a server's hint below this would leave the model nothing to read
SPILL_LIMIT = 256 * 1024 * 1024  # whole results kept on disk, all servers together
MEDIA_LIMIT = 256 * 1024 * 1024  # images and audio saved from results


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


def cap(text: str, limit: int = MAX_OUTPUT, *, whole: str = "") -> str:
    """`text` within `limit` characters: head, a marker saying what was left out (and `whole`, where
    all of it is), tail."""
    if len(text) <= limit:
        return text
    where = f"; the whole result ({len(text)} characters) is in {whole}" if whole else ""
    marker = f"\n[... {len(text) - limit} characters omitted by hermes{where} ...]\n"
    keep = max(0, limit - len(marker))
    head = keep // 2
    return text[:head] + marker + text[len(text) - (keep - head):]


@dataclass(frozen=True)
class ResultFiles:
    """Where results put what does not fit in a model's reading: media, and whole long texts."""

    cache: Path  # images and audio, by content
    spill: Path  # whole texts of results that were cut for the model
    spill_limit: int = SPILL_LIMIT
    media_limit: int = MEDIA_LIMIT

    def cut(self, text: str, server: str, budget: int = MAX_OUTPUT) -> str:
        if len(text) <= budget:
            return text
        data = text.encode("utf-8", errors="replace")
        path = self.spill / f"{_safe(server)}-{hashlib.sha256(data).hexdigest()[:16]}.txt"
        try:
            if not path.exists():
                write_private(path, data)
                trim_folder(self.spill, self.spill_limit, pattern="*.txt")
            where = str(path)
        except OSError:
            where = ""  # the disk refused: the model still gets the head and the tail, and the count
        return cap(text, budget, whole=where)

    def save_blob(self, data_b64: str, mime: str, server: str) -> str:
        try:
            data = base64.b64decode(data_b64, validate=True)
        except (binascii.Error, ValueError):
            return f"[{mime} content that is not valid base64 was dropped]"
        extension = mimetypes.guess_extension(mime) or ".bin"
        digest = hashlib.sha256(data).hexdigest()[:16]
        path = self.cache / f"mcp-{_safe(server)}-{digest}{extension}"
        try:
            if not path.exists():
                write_private(path, data)
                trim_folder(self.cache, self.media_limit, pattern="mcp-*")
        except OSError as exc:
            return f"[{mime} content of {len(data)} bytes could not be saved: {exc.strerror}]"
        return f"[{mime} saved to {path}]"


def _safe(server: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in server)[:64]


def budget_of(tool: types.Tool | None) -> int:
    """The tool's own `maxResultSizeChars` hint (any `_meta` namespace), within hermes's limits."""
    meta = tool.meta if tool is not None else None
    if isinstance(meta, dict):
        for key, value in meta.items():
            if key.rsplit("/", 1)[-1] == "maxResultSizeChars" and type(value) is int:
                return max(MIN_BUDGET, min(MAX_OUTPUT, value))
    return MAX_OUTPUT


def _block_text(block: types.ContentBlock, files: ResultFiles, server: str) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, (types.ImageContent, types.AudioContent)):
        return files.save_blob(block.data, block.mime_type, server)
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return resource.text
        return files.save_blob(resource.blob, resource.mime_type or "application/octet-stream", server)
    if isinstance(block, types.ResourceLink):
        return f"[resource {block.uri}]"
    return f"[{getattr(block, 'type', 'unknown')} content]"


# One encoder for every result: `json.dumps` with an option builds a new one per call.
_AS_WRITTEN = json.JSONEncoder(ensure_ascii=False)

MAX_BLOCKS = 10_000  # content blocks of one result


def _clean_block(block: types.ContentBlock, redact: Redactor) -> types.ContentBlock:
    if isinstance(block, types.TextContent):
        cleaned = clean_text(block.text, redact)
        return block if cleaned is block.text else block.model_copy(update={"text": cleaned})
    if isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.TextResourceContents):
        cleaned = clean_text(block.resource.text, redact)
        if cleaned is block.resource.text:
            return block
        return block.model_copy(update={"resource": block.resource.model_copy(update={"text": cleaned})})
    return block


def clean_result(result: types.CallToolResult, redact: Redactor) -> types.CallToolResult:
    """The result as it may leave hermes: every text in it redacted (a server may echo back what it
    was configured with, a token in its arguments, a header, on success as much as in an error)
    and made visible (no hidden characters, see `hermes.security.invisible`). A result with nothing
    to hide or cut is returned as it came (every call passes here: no copy where nothing changes)."""
    kept = result.content
    update: dict[str, Any] = {}
    if len(kept) > MAX_BLOCKS:  # a million one-character blocks is not an answer
        omitted = len(kept) - MAX_BLOCKS
        kept = [*kept[:MAX_BLOCKS], types.TextContent(type="text", text=f"[{omitted} more content blocks omitted "
                                                                              f"by hermes]")]
        update["content"] = kept
    content: list[types.ContentBlock] | None = None  # made at the first change, with the blocks before it
    for index, block in enumerate(kept):
        cleaned = _clean_block(block, redact)
        if content is None and cleaned is not block:
            content = list(kept[:index])
        if content is not None:
            content.append(cleaned)
    if content is not None:
        update["content"] = content
    for field in ("structured_content", "meta"):
        value = getattr(result, field)
        cleaned_value = clean_value(value, redact) if value is not None else None
        if cleaned_value is not value:
            update[field] = cleaned_value
    return result.model_copy(update=update) if update else result


def render_result(result: types.CallToolResult, *, files: ResultFiles, server: str,
                  budget: int = MAX_OUTPUT) -> RenderedResult:
    """What a model (or `tools call`) gets: `result` should already have passed `clean_result`."""
    # `clean_result` already kept at most MAX_BLOCKS and said how many it left out.
    text = "\n".join(_block_text(block, files, server) for block in result.content)
    structured = result.structured_content
    dumped = _AS_WRITTEN.encode(structured) if structured is not None else ""
    if not text:
        text = dumped
    note = ""
    if len(dumped) > budget:
        # The text (often the same data) is cut to the budget with the whole of it kept on disk.
        structured = None
        note = "[structured content omitted for the model: larger than its budget]\n"
    return RenderedResult(note + files.cut(text, server, budget - len(note)), structured, bool(result.is_error))
