"""The meaning model tool search uses: the English model and the multilingual one, read together.

all-MiniLM-L6-v2 with its query adapter (`tools.encoder`) places English requests best; Google's
multilingual Universal Sentence Encoder (`tools.multilingual`) places a request in any of the
users' languages near the English tool it asks for. A tool's vector is both models' vectors side
by side, each scaled by 1/sqrt(2), so one cached row serves every query. A query's vector is its two
readings scaled by the weights of its kind (English, another Latin-script language, another
script: `tools.query_language`), so its dot product with a tool is the weighted mean of the two
models' cosines: an English request leans on MiniLM and on the words; another language on the
multilingual model, with MiniLM reading only its gloss (`tools.lexicon`: its everyday words in
English and its names) and the words counting less.

Either model alone works too: the pair then reduces to that one model.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes.tools import encoder, multilingual
from hermes.tools.lexicon import gloss
from hermes.tools.query_language import Kind, kind
from hermes.tools.vectors import Encoder, QueryMeaning

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Weights:
    """How one kind of query is read: the English model's share of the meaning (the multilingual
    model has the rest), the words' share of the blended score, and the meaning a tool needs when
    no word of the query is in any tool."""

    english_model: float
    word_share: float
    floor: float


# Chosen on requests written for other tools than the ones bench_recall measures: the training
# requests and their translations (tests/data/tool_training_intents_multilingual.jsonl, 500 in each
# of zh, pt, de, es), in 20-server sessions; never on the evaluation intents. With FreeDict's
# dictionaries a Portuguese, Spanish or German request's words say more: their share went from 0.2
# to 0.3 (recall@5 there de 85.0, es 81.2 -> 82.2, pt 81.8 -> 82.6; 0.4 did as well, 0.5 worse in
# Spanish; the English model's share at 0.3 or 0.5 did worse).
WEIGHTS = {
    Kind.ENGLISH: Weights(english_model=0.6, word_share=0.4, floor=0.28),
    Kind.LATIN: Weights(english_model=0.4, word_share=0.3, floor=0.28),
    Kind.OTHER_SCRIPT: Weights(english_model=0.4, word_share=0.2, floor=0.28),
}


class PairedModel:
    """Both models, or whichever one is installed."""

    def __init__(self, english: encoder.SentenceEncoder | None,
                 languages: multilingual.MultilingualEncoder | None, *,
                 weights: Mapping[Kind, Weights] = WEIGHTS) -> None:
        if english is None and languages is None:
            raise ValueError("no model")
        self._english, self._languages = english, languages
        self._weights = dict(weights)
        # The English model's vectors stay in the cache file they always had; the other's beside it.
        found: list[tuple[str, Encoder]] = []
        if english is not None:
            found.append(("", english))
        if languages is not None:
            found.append(("-multilingual", languages))
        self.encoders: Sequence[tuple[str, Encoder]] = tuple(found)
        self._scale = 1 / math.sqrt(len(found))  # a tool's row is unit length

    def join(self, parts: Sequence[NDArray[np.float32]]) -> NDArray[np.float32]:
        """One row per tool: each model's unit row, side by side, scaled to unit length."""
        import numpy as np

        joined: NDArray[np.float32] = (np.concatenate(parts, axis=1) * np.float32(self._scale)).astype(np.float32)
        return joined

    def weights(self, text: str) -> Weights:
        return self._weights[kind(text)]

    def read_query(self, text: str) -> QueryMeaning:
        import numpy as np

        if self._languages is None:  # the English model alone ranks as it always has
            assert self._english is not None
            return self._english.read_query(text)
        found = kind(text)
        chosen = self._weights[found]
        if self._english is None:
            return QueryMeaning(self._languages.encode_query([text])[0], chosen.word_share, chosen.floor)
        # The tool rows carry 1/sqrt(2) of each model; the query undoes it, so a dot product is
        # english_model * MiniLM's cosine + the rest * the multilingual cosine. The English model
        # reads an English request as it is, another one's gloss (its everyday words in English,
        # its names), and nothing when the gloss is empty.
        read = text if found is Kind.ENGLISH else gloss(text)
        share = chosen.english_model if read.strip() else 0.0
        undo = 1 / self._scale
        english = (self._english.encode_query([read])[0] * np.float32(share * undo) if share else
                   np.zeros(self._english.dimensions, np.float32))
        other = self._languages.encode_query([text])[0] * np.float32((1 - share) * undo)
        vector: NDArray[np.float32] = np.concatenate([english, other]).astype(np.float32)
        return QueryMeaning(vector, chosen.word_share, chosen.floor)


def available() -> bool:
    """Whether either model is installed (cheap: nothing is imported or read)."""
    return encoder.available() or multilingual.available()


_LOADING = threading.Lock()


def load() -> PairedModel | None:
    """The process's meaning model, loaded once (sessions' jobs may ask at once: one loads, the
    others wait for it); None when neither model is installed."""
    with _LOADING:
        return _load()


@functools.cache
def _load() -> PairedModel | None:
    english, languages = encoder.load(), multilingual.load()
    _give_back_freed_memory()
    if english is None and languages is None:
        return None
    return PairedModel(english, languages)


def _give_back_freed_memory() -> None:
    """Return the heap pages that loading left free to the system. Building the models' graphs
    allocates and frees copies of their weights (90 MB at once for MiniLM's); glibc raises its
    threshold for serving large blocks from the heap after such a free and keeps the pages, which
    stayed in the process's resident memory: 447 MB with both models, 375 MB once given back."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):  # not glibc (musl has no malloc_trim): nothing to do
        ctypes.CDLL(None).malloc_trim(0)
