"""A streamed reply's text on its way to the screen, with what may be a tool call written as text
held back: a small local model that writes its call as a JSON code block (or in `<tool_call>`
tags, or as the whole reply) must not have that call printed as if it were its answer.

Held: a code block opened as ```` ```json ````, ```` ```tool_call ```` or ```` ``` ```` whose body
starts with `{`, a `<tool_call>` element, and a reply that starts with `{`. A block found not to
be a call (it closes without naming an offered tool, or it is another language's code) is shown at
once, so answers about code still stream. Once a held block is a call, everything after it is held
too (text shown out of order would be worse than text shown late). When the reply ends, the loop
says whether its calls were recognised (`text_calls`): if so, the held text is dropped (the call
runs, and shows as a tool line); if not, it is shown.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from enum import Enum

from hermes.agent.provider import TextSink
from hermes.agent.text_calls import FENCED, MAX_TEXT, call_from_value, parse_call

FENCE, TAG_OPEN, TAG_CLOSE = "```", "<tool_call>", "</tool_call>"
_OPENERS = (FENCE, TAG_OPEN)
_CALL_FENCE_TAGS = ("json", "tool_call", "tool")  # what FENCED accepts after the opening fence


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


class HeldCallText:
    def __init__(self, sink: TextSink, offered: Collection[str]) -> None:
        self._sink = sink
        self._offered = offered
        self._text = ""
        self._sent = 0  # how much of _text the sink has been given
        self._held: int | None = None  # where the region being judged starts
        self._searched = 0  # how far into that region its end was looked for
        self._shown_until = 0  # where a region judged to be text ends
        self._code_from: int | None = None  # inside a code block shown as text: where its end may be
        self._after_call = False  # a held region is a call: hold the rest

    async def feed(self, delta: str) -> None:
        self._text += delta
        await self._advance()

    async def end(self, *, recognised: bool) -> None:
        """The reply is complete: drop what was held if it ran as calls, show it otherwise."""
        if not recognised:
            await self._send_to(len(self._text))

    async def _send_to(self, end: int) -> None:
        if end > self._sent:
            piece, self._sent = self._text[self._sent:end], end
            await self._sink(piece)

    async def _advance(self) -> None:
        while not self._after_call:
            if self._code_from is not None:
                close = self._text.find(FENCE, self._code_from)
                if close < 0:
                    self._code_from = max(self._code_from, len(self._text) - len(FENCE) + 1)
                    await self._send_to(self._code_from)
                    return
                self._code_from = None
                await self._send_to(close + len(FENCE))
            elif self._held is None:
                send_to, self._held = self._next_hold()
                self._searched = 0
                await self._send_to(send_to)
                if self._held is None:
                    return
            else:
                verdict = self._verdict(self._text[self._held:])
                if verdict is _Verdict.UNDECIDED:
                    return
                if verdict is _Verdict.CALL:
                    self._after_call = True
                    return
                self._held = None
                await self._send_to(self._shown_until)

    def _next_hold(self) -> tuple[int, int | None]:
        """How far the text can be shown, and where the next region to hold starts (None: none yet)."""
        rest = self._text[self._sent:]
        at_start = not self._text[:self._sent].strip()
        if at_start and rest.lstrip().startswith("{"):
            return self._sent, self._sent  # the whole reply may be one call
        if at_start and not rest.strip():
            return self._sent, None  # only whitespace yet: the reply may still start with `{`
        starts = [index for index in (rest.find(opener) for opener in _OPENERS) if index >= 0]
        if starts:
            return self._sent + min(starts), self._sent + min(starts)
        return len(self._text) - _partial_opener(rest), None

    def _verdict(self, region: str) -> _Verdict:
        if len(region) > MAX_TEXT:  # text_calls never takes a reply this long for a call
            return self._text_until(len(self._text))
        if region.startswith(FENCE):
            return self._fence_verdict(region)
        if region.startswith(TAG_OPEN):
            close = self._find_end(region, TAG_CLOSE, len(TAG_OPEN))
            if close < 0:
                return _Verdict.UNDECIDED
            return self._call_or_text(region[len(TAG_OPEN):close].strip(), close + len(TAG_CLOSE))
        return self._whole_verdict(region)

    def _find_end(self, region: str, closer: str, start: int) -> int:
        """Where `closer` is in the region, looking only at what was not looked at before."""
        found = region.find(closer, max(start, self._searched - len(closer) + 1))
        self._searched = len(region)
        return found

    def _fence_verdict(self, region: str) -> _Verdict:
        close = self._find_end(region, FENCE, len(FENCE))
        if close >= 0:  # the block is complete: a call, or a block to show
            match = FENCED.fullmatch(region[:close + len(FENCE)])
            return self._call_or_text(match.group(1) if match else "", close + len(FENCE))
        inside = region[len(FENCE):]
        if any(tag.startswith(inside) and tag != inside for tag in _CALL_FENCE_TAGS):
            return _Verdict.UNDECIDED  # the info string is still arriving
        tag = next((tag for tag in _CALL_FENCE_TAGS if inside.startswith(tag)), "")
        body = inside[len(tag):].lstrip()
        if not body or body.startswith("{"):
            return _Verdict.UNDECIDED
        # Another language's code, or not an object: shown as it streams, up to the block's end.
        self._code_from = self._held_at(len(FENCE))
        return self._text_until(self._code_from)

    def _whole_verdict(self, region: str) -> _Verdict:
        stripped = region.rstrip()
        if not stripped.endswith("}"):
            return _Verdict.UNDECIDED  # an object cannot have ended here
        try:
            value, used = json.JSONDecoder().raw_decode(stripped.lstrip())
        except ValueError:
            return _Verdict.UNDECIDED  # not complete yet, or not JSON (shown when the reply ends)
        if stripped.lstrip()[used:] or call_from_value(value, self._offered) is None:
            return self._text_until(len(self._text))
        return _Verdict.CALL

    def _call_or_text(self, inner: str, region_end: int) -> _Verdict:
        if parse_call(inner, self._offered) is not None:
            return _Verdict.CALL
        return self._text_until(self._held_at(region_end))

    def _held_at(self, offset: int) -> int:
        assert self._held is not None
        return self._held + offset

    def _text_until(self, end: int) -> _Verdict:
        self._shown_until = end
        return _Verdict.TEXT
