"""A streamed reply's text on its way to the screen, with what may be a tool call written as text
held back: a small local model that writes its call as a JSON code block (or in `<tool_call>`
tags, or as the whole reply) must not have that call printed as if it were its answer.

Held: a code block opened as ```` ```json ````, ```` ```tool_call ```` or ```` ``` ```` whose body
starts with `{`, a `<tool_call>` element (inside a code block too: `text_calls` looks there), and a
reply that starts with a JSON object. A region found not to be a call (a block that closes without
naming an offered tool, another language's code, an object that is not a call) is shown at once,
so answers about code still stream. Once a held region is a call, everything after it is held too
(text shown out of order would be worse than text shown late). Once nothing in the reply can be
recognised any more (a `<tool_call>` element that is not a call, a reply longer than `text_calls`
reads), everything streams. When the reply ends, the loop says whether its calls were recognised:
if so, the held text is dropped (the call runs, and shows as a tool line); if not, it is shown.

Text already shown is forgotten as it goes, and every scan looks only at what is new, so a long
answer costs time in proportion to its length.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from enum import Enum

from hermes.agent.provider import TextSink
from hermes.agent.text_calls import FENCE, FENCE_INFOS, FENCED, MAX_TEXT, TAG_CLOSE, TAG_OPEN, parse_call

_OPENERS = (FENCE, TAG_OPEN)
_NOT_SPACE = re.compile(r"\S")
_FORGET_AFTER = 4096  # shown text is dropped from memory in pieces at least this long


class _Verdict(Enum):
    CALL = "call"
    TEXT = "text"
    UNDECIDED = "undecided"


def _partial_opener(text: str) -> int:
    """How many characters at the end of `text` may be the start of an opener still arriving."""
    for length in range(min(len(text), len(TAG_OPEN) - 1), 0, -1):
        if any(opener.startswith(text[-length:]) for opener in _OPENERS):
            return length
    return 0


class _ObjectEnd:
    """Finds where a JSON object that starts a text ends, reading each character once."""

    def __init__(self) -> None:
        self.at = 0  # the next character to read
        self.depth = 0
        self.in_string = self.escaped = False
        self.opened = False  # past the object's first `{`
        self.first_member = True  # no character yet after the first `{` but spaces

    def scan(self, text: str) -> int | None:
        """Where the object ends (just after its `}`), -1 if the text cannot be one, None if not known yet."""
        for index in range(self.at, len(text)):
            char = text[index]
            self.at = index + 1
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.in_string = False
                continue
            if self.opened and self.first_member and not char.isspace():
                self.first_member = False
                if char not in '"}':
                    return -1  # `{x} is a set`: prose, not an object
            if char == '"':
                self.in_string = True
            elif char in "{[":
                self.opened = True
                self.depth += 1
            elif char in "}]":
                self.depth -= 1
                if self.depth == 0:
                    return index + 1
        return None


class HeldCallText:
    def __init__(self, sink: TextSink, offered: Collection[str]) -> None:
        self._sink = sink
        self._offered = offered
        self._text = ""  # what arrived and is still needed (shown text is forgotten, see _forget)
        self._forgotten = 0  # how much was dropped from the front of _text
        self._sent = 0  # how much of _text the sink has been given
        self._started = False  # something but spaces has been shown or held
        self._blank_until = 0  # before this, the text is known to be spaces only (while not started)
        self._held: int | None = None  # where the region being judged starts
        self._searched = 0  # how far into that region its end was looked for
        self._object = _ObjectEnd()
        self._shown_until = 0  # where a region judged to be text ends
        self._code_from: int | None = None  # inside a code block shown as text: where to look on
        self._after_call = False  # a held region is a call: hold the rest
        self._streaming = not offered  # nothing can be recognised: show everything as it comes

    async def feed(self, delta: str) -> None:
        self._text += delta
        if self._forgotten + len(self._text) > MAX_TEXT:  # text_calls does not read a reply this long
            self._streaming, self._after_call = True, False
        await self._advance()
        self._forget()

    async def end(self, *, recognised: bool) -> None:
        """The reply is complete: drop what was held if it ran as calls, show it otherwise."""
        if not recognised:
            await self._send_to(len(self._text))

    async def _send_to(self, end: int) -> None:
        if end > self._sent:
            piece, self._sent = self._text[self._sent:end], end
            self._started = self._started or not piece.isspace()
            await self._sink(piece)

    def _forget(self) -> None:
        keep = min([self._sent, *(i for i in (self._held, self._code_from) if i is not None)])
        if keep >= _FORGET_AFTER:
            self._text = self._text[keep:]
            self._forgotten += keep
            self._sent -= keep
            self._blank_until = max(0, self._blank_until - keep)
            self._held = None if self._held is None else self._held - keep
            self._code_from = None if self._code_from is None else self._code_from - keep

    async def _advance(self) -> None:
        while not self._after_call:
            if self._streaming:
                await self._send_to(len(self._text))
                return
            if self._code_from is not None:
                if not await self._pass_code():
                    return
            elif self._held is None:
                send_to, self._held = self._next_hold()
                self._searched = 0
                await self._send_to(send_to)
                if self._held is None:
                    return
                self._started = True
            else:
                verdict = self._verdict(self._text[self._held:])
                if verdict is _Verdict.UNDECIDED:
                    return
                if verdict is _Verdict.CALL:
                    self._after_call = True
                    return
                if self._text.startswith(TAG_OPEN, self._held):
                    self._streaming = True  # a tag that is not a call: text_calls recognises nothing now
                self._held = None
                await self._send_to(self._shown_until)

    async def _pass_code(self) -> bool:
        """Show a code block that is not a call up to its end (or a `<tool_call>` inside it); False
        while its end has not arrived."""
        assert self._code_from is not None
        close = self._text.find(FENCE, self._code_from)
        tag = self._text.find(TAG_OPEN, self._code_from)
        if tag >= 0 and (close < 0 or tag < close):
            self._code_from = None
            await self._send_to(tag)
            self._held, self._searched = tag, 0
            return True
        if close < 0:
            self._code_from = max(self._code_from, len(self._text) - len(TAG_OPEN) + 1)
            await self._send_to(self._code_from)
            return False
        self._code_from = None
        await self._send_to(close + len(FENCE))
        return True

    def _next_hold(self) -> tuple[int, int | None]:
        """How far the text can be shown, and where the next region to hold starts (None: none yet)."""
        if not self._started:
            first = _NOT_SPACE.search(self._text, max(self._sent, self._blank_until))
            if first is None:
                self._blank_until = len(self._text)
                return self._sent, None  # only spaces yet: the reply may still start with `{`
            if self._text[first.start()] == "{":
                return self._sent, self._sent  # the whole reply may be one call
        rest = self._text[self._sent:]
        starts = [index for index in (rest.find(opener) for opener in _OPENERS) if index >= 0]
        if starts:
            return self._sent + min(starts), self._sent + min(starts)
        return len(self._text) - _partial_opener(rest), None

    def _verdict(self, region: str) -> _Verdict:
        if region.startswith(FENCE):
            return self._fence_verdict(region)
        if region.startswith(TAG_OPEN):
            close = self._find_end(region, TAG_CLOSE, len(TAG_OPEN))
            if close < 0:
                return _Verdict.UNDECIDED
            return self._call_or_text(region[len(TAG_OPEN):close], close + len(TAG_CLOSE))
        return self._object_verdict(region)

    def _find_end(self, region: str, closer: str, start: int) -> int:
        """Where `closer` is in the region, looking only at what was not looked at before."""
        found = region.find(closer, max(start, self._searched - len(closer) + 1))
        self._searched = len(region)
        return found

    def _fence_verdict(self, region: str) -> _Verdict:
        close = self._find_end(region, FENCE, len(FENCE))
        if close >= 0:  # the block is complete: a call, or a block to show
            element = region.find(TAG_OPEN, 0, close)
            if element >= 0:  # text_calls reads the element inside first: it is judged on its own
                return self._text_until(self._held_at(element))
            match = FENCED.fullmatch(region[:close + len(FENCE)])
            return self._call_or_text(match.group(1) if match else "", close + len(FENCE))
        inside = region[len(FENCE):]
        if any(tag.startswith(inside) and tag != inside for tag in FENCE_INFOS):
            return _Verdict.UNDECIDED  # the info string is still arriving
        info = next((tag for tag in FENCE_INFOS if inside.startswith(tag)), "")
        body = inside[len(info):].lstrip()
        if not body or body.startswith("{"):
            return _Verdict.UNDECIDED
        # Another language's code, or not an object: shown as it streams, up to the block's end.
        self._code_from = self._held_at(len(FENCE))
        return self._text_until(self._code_from)

    def _object_verdict(self, region: str) -> _Verdict:
        end = self._object.scan(region)
        if end is None:
            return _Verdict.UNDECIDED
        if end < 0:  # shown up to the character that proved it (which may open a block)
            return self._text_until(self._held_at(self._object.at - 1))
        return self._call_or_text(region[:end], end)

    def _call_or_text(self, inner: str, region_end: int) -> _Verdict:
        if parse_call(inner.strip(), self._offered) is not None:
            return _Verdict.CALL
        return self._text_until(self._held_at(region_end))

    def _held_at(self, offset: int) -> int:
        assert self._held is not None
        return self._held + offset

    def _text_until(self, end: int) -> _Verdict:
        self._shown_until = end
        return _Verdict.TEXT
