"""Reading a page's form post (bounded) and the notes a post leaves for the page it redirects to."""

from __future__ import annotations

import json
import secrets
from collections import OrderedDict
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse

MAX_FORM_BYTES = 64_000  # a form post; the biggest is the add form with its env lines
MAX_JSON_BYTES = 1_000_000  # a view's tool call: its arguments
MAX_NOTES = 64  # notes waiting for their page; older ones are dropped


class Notes:
    """What the last actions said, kept until the page they redirect to shows them."""

    def __init__(self) -> None:
        self._notes: OrderedDict[str, tuple[bool, str]] = OrderedDict()

    def add(self, ok: bool, text: str) -> str:
        key = secrets.token_urlsafe(8)
        self._notes[key] = (ok, text)
        while len(self._notes) > MAX_NOTES:
            self._notes.popitem(last=False)
        return key

    def take(self, key: str | None) -> tuple[bool, str] | None:
        return self._notes.pop(key, None) if key else None



async def read_form(request: Request) -> Any:
    length = request.headers.get("content-length")
    if length is None or not length.isdigit() or int(length) > MAX_FORM_BYTES:
        return PlainTextResponse(f"A form post must say its length and be at most {MAX_FORM_BYTES} bytes.",
                                 status_code=413)
    try:
        return await request.form(max_files=0, max_fields=2_000)
    except Exception:  # a malformed body is the sender's problem, said in one sentence
        return PlainTextResponse("The form could not be read.", status_code=400)


async def read_json(request: Request) -> dict[str, Any] | PlainTextResponse:
    """A JSON object posted by the page's script, bounded like a form."""
    length = request.headers.get("content-length")
    if length is None or not length.isdigit() or int(length) > MAX_JSON_BYTES:
        return PlainTextResponse(f"A post must say its length and be at most {MAX_JSON_BYTES} bytes.",
                                 status_code=413)
    try:
        data = json.loads(await request.body())
    except (ValueError, RecursionError):  # not JSON, or nested deeper than anyone writes
        return PlainTextResponse("The body is not JSON (or is nested too deeply).", status_code=400)
    if not isinstance(data, dict):
        return PlainTextResponse("The body must be a JSON object.", status_code=400)
    return data
