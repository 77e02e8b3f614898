"""Tools' meaning vectors: computed off the event loop, kept between sessions, bounded on disk.

Encoding a tool's text takes tens of milliseconds, so a session's few hundred tools cost seconds
the first time and nothing afterwards: each vector is kept in `HERMES_HOME/cache/tool-vectors.npz`
under a digest of the model and the exact text, so a changed description is encoded again and an
unchanged one never. The file is a cache: anything wrong with it (too large, not an archive, arrays
of the wrong shape) and it is ignored and rewritten, never trusted.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import io
import logging
import threading
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hermes.background import Job, run_inline
from hermes.files import TooLarge, UnreadableFile, atomic_write, file_lock, read_bounded
from hermes.tools.search import BLEND_DEPTH, MIN_SIMILARITY, WORD_SHARE, Closeness, Document, name_words

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QueryMeaning:
    """A query as a model reads it: its vector, and how its ranking weighs words against meaning."""

    vector: NDArray[np.float32]
    word_share: float = WORD_SHARE
    floor: float = MIN_SIMILARITY


class Encoder(Protocol):
    """One sentence model, whose tool vectors are cached on their own."""

    @property
    def model_id(self) -> bytes:
        """Part of every cached vector's digest: another model, other vectors."""

    @property
    def dimensions(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Tools' texts -> unit rows, in order."""


class MeaningModel(Protocol):
    """What turns tools and queries into vectors (`tools.encoder`, `tools.meaning_model`): one
    model or several, each with its own cache file (`suffix` added to its name), whose tool
    vectors `join` makes one row per tool."""

    @property
    def encoders(self) -> Sequence[tuple[str, Encoder]]: ...

    def join(self, parts: Sequence[NDArray[np.float32]]) -> NDArray[np.float32]: ...

    def read_query(self, text: str) -> QueryMeaning: ...


MAX_KEPT = 20_000  # vectors on disk (float16): about 16 MB
_FILE_LIMIT = 40 * 1024 * 1024
_DIGEST = 16
_NPY_HEADER = 4096  # an .npy member's header, beyond its data
_BATCH = 64  # texts encoded between two looks at whether the owner still wants them


@dataclass
class Recent:
    """One owner's (a session's) encodings: one at a time (the work is CPU-bound, and one core is
    left to the event loop and the servers; the encoder runs BLAS on one thread), and the vectors of
    the last surface encoded with the cache file they belong to: a surface rebuilt after one
    server reconnects finds nearly all of its tools here instead of re-reading the file."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    by_file: dict[Path, dict[bytes, NDArray[np.float16]]] = field(default_factory=dict)


# Words that say only "this is an MCP server"; the rest of a server's name (a product, its owner)
# places the tool.
_SERVER_FILLER = frozenset({"mcp", "server", "servers", "modelcontextprotocol"})


def document_text(document: Document) -> str:
    """What a tool's vector is made from: its server's name, its own name in words, its title and
    its description. The server's name places the tool: "zereight gitlab: list issues", "yahoo
    finance: get current stock price" (measured in bench_recall: 84.3 % -> 87.0 % of intents by meaning alone)."""
    server = " ".join(word for word in name_words(document.server) if word not in _SERVER_FILLER)
    parts = [" ".join(name_words(document.name)), document.title, document.description]
    text = ". ".join(part.strip() for part in parts if part.strip())
    return f"{server}: {text}" if server else text


def digest(model_id: bytes, text: str) -> bytes:
    return hashlib.sha256(model_id + b"\0" + text.encode("utf-8", "surrogatepass")).digest()[:_DIGEST]


def _header_fits(members: zipfile.ZipFile, name: str, dtype: Any, width: int, stored: int) -> bool:
    """Whether the `.npy` member `name` declares a C-ordered `dtype` array `width` wide whose data
    fits in the `stored` bytes the member really has."""
    from numpy.lib import format as npy

    with members.open(name) as member:
        version = npy.read_magic(member)
        read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, fortran, declared = read_header(member, max_header_size=_NPY_HEADER)
        header = member.tell()
    return (declared == dtype and not fortran and len(shape) == 2 and shape[1] == width
            and 0 <= shape[0] <= MAX_KEPT and shape[0] * width * dtype.itemsize <= stored - header)


class VectorFile:
    """The on-disk cache: digests and their vectors, most recently used first."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self, dimensions: int) -> dict[bytes, NDArray[np.float16]]:
        import numpy as np

        try:
            data = read_bounded(self.path, _FILE_LIMIT, follow_symlinks=False)
        except FileNotFoundError:
            return {}
        except (TooLarge, UnreadableFile, OSError) as exc:
            log.info("ignoring the tool-vector cache %s: %s", self.path, exc)
            return {}
        try:
            # Sizes as stored, before anything is inflated: a few MB of compressed zeros would
            # otherwise unpack into gigabytes.
            with zipfile.ZipFile(io.BytesIO(data)) as members:
                sizes = {info.filename: info.file_size for info in members.infolist()}
                caps = {"digests.npy": MAX_KEPT * _DIGEST, "vectors.npy": MAX_KEPT * dimensions * 2}
                if any(sizes.get(name, 0) > cap + _NPY_HEADER for name, cap in caps.items()):
                    log.info("ignoring the tool-vector cache %s: more than %d vectors", self.path, MAX_KEPT)
                    return {}
                # Each array's header, before NumPy allocates what it claims: a forged shape of
                # billions of rows in a 200-byte member would otherwise ask for gigabytes.
                expected = {"digests.npy": (np.dtype(np.uint8), _DIGEST),
                            "vectors.npy": (np.dtype(np.float16), dimensions)}
                if not all(_header_fits(members, name, dtype, width, sizes.get(name, 0))
                           for name, (dtype, width) in expected.items()):
                    log.info("ignoring the tool-vector cache %s: arrays of an unexpected shape", self.path)
                    return {}
            with np.load(io.BytesIO(data), allow_pickle=False) as archive:
                digests, vectors = archive["digests"], archive["vectors"]
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError, MemoryError) as exc:
            log.info("ignoring the tool-vector cache %s: not a vector archive (%s)", self.path, exc)
            return {}
        if (digests.dtype != np.uint8 or vectors.dtype != np.float16 or digests.ndim != 2 or vectors.ndim != 2
                or digests.shape[1] != _DIGEST or vectors.shape != (digests.shape[0], dimensions)):
            log.info("ignoring the tool-vector cache %s: arrays of an unexpected shape", self.path)
            return {}
        # A vector that is not finite, or all zeros, would rank its tool at random: it is encoded again.
        sound = np.isfinite(vectors).all(axis=1) & vectors.any(axis=1)
        if not sound.all():
            log.info("the tool-vector cache %s holds %d unusable vectors; they are encoded again",
                     self.path, int((~sound).sum()))
        return {bytes(d): v for d, v, ok in zip(digests, vectors, sound, strict=True) if ok}

    def write(self, fresh: dict[bytes, NDArray[np.float16]], dimensions: int) -> None:
        """Put `fresh` first, then what the file held, up to `MAX_KEPT` vectors."""
        import numpy as np

        with contextlib.suppress(OSError), file_lock(self.path):
            kept = dict(fresh)
            for key, vector in self.read(dimensions).items():
                if len(kept) >= MAX_KEPT:
                    break
                kept.setdefault(key, vector)
            keys = list(kept)[:MAX_KEPT]
            digests = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), _DIGEST)
            vectors = np.stack([kept[k] for k in keys]) if keys else np.zeros((0, dimensions), np.float16)
            buffer = io.BytesIO()
            np.savez(buffer, digests=digests, vectors=vectors.astype(np.float16))
            atomic_write(self.path, buffer.getvalue())


class Meaning:
    """The vectors of one index's documents (row i is document i), computed as a job `start` runs
    (a session's `Background`: a worker thread its task group owns), with the encoder `load` gives
    (None: no meaning, words alone rank).

    The model is loaded in that job too (a 91 MB read), never on the event loop. A job cancelled
    with its owner stops between batches (a one-shot chat ends without waiting for it); the cache
    file is only ever replaced whole."""

    def __init__(self, documents: Sequence[Document], load: Callable[[], MeaningModel | None],
                 cache: VectorFile | None, *, start: Callable[[Job], None] = run_inline,
                 recent: Recent | None = None) -> None:
        self._future: Future[tuple[MeaningModel, CosineTable] | None] = Future()
        work, memory = list(documents), recent or Recent()
        start(lambda check: self._run(work, load, cache, memory, check))

    def _run(self, documents: list[Document], load: Callable[[], MeaningModel | None],
             cache: VectorFile | None, recent: Recent, check: Callable[[], None]) -> None:
        try:
            with recent.lock:
                model = load()
                if model is None:
                    return  # no meaning: answered below
                rows = _vectors(model, documents, cache, recent, check)
            # The table is this index's own: built without holding up other sessions' vectors.
            self._future.set_result((model, CosineTable(rows)))
        except Exception as exc:
            log.warning("tool search ranks by words alone: encoding the tools failed: %s", exc)
        finally:  # cancelled with its owner, or failed: a search waiting for it ranks by words
            if not self._future.done():
                self._future.set_result(None)

    def vectors(self) -> NDArray[np.float32] | None:
        """The document vectors, waiting for them (from a thread, never the event loop)."""
        done = self._future.result()
        return None if done is None else done[1].rows

    async def ready(self) -> None:
        await asyncio.wrap_future(self._future)

    def closeness(self, text: str) -> Closeness | None:
        """How close in meaning each document is to `text`; None without an encoder."""
        done = self._future.result()
        if done is None:
            return None
        model, table = done
        query = model.read_query(text)
        return closeness_of(table(query.vector), word_share=query.word_share, floor=query.floor)


def _vectors(model: MeaningModel, documents: list[Document], cache: VectorFile | None, recent: Recent,
             check: Callable[[], None]) -> NDArray[np.float32]:
    texts = [document_text(d) for d in documents]
    parts = []
    for suffix, encoder in model.encoders:
        own = None if cache is None else VectorFile(cache.path.with_name(cache.path.stem + suffix + cache.path.suffix))
        parts.append(_compute(encoder, texts, own, recent, check))
    return model.join(parts)


def _compute(encoder: Encoder, texts: list[str], cache: VectorFile | None, recent: Recent,
             check: Callable[[], None]) -> NDArray[np.float32]:
    """Called with `recent.lock` held; `check` raises once the owner no longer wants the vectors."""
    import numpy as np

    keys = [digest(encoder.model_id, t) for t in texts]
    known = recent.by_file.get(cache.path, {}) if cache is not None else {}
    if cache is not None and any(key not in known for key in keys):
        known = cache.read(encoder.dimensions)
    missing = [i for i, key in enumerate(keys) if key not in known]
    fresh: dict[bytes, NDArray[np.float16]] = {}
    missing.sort(key=lambda i: len(texts[i]))  # batches of like lengths pad little
    for start in range(0, len(missing), _BATCH):
        check()
        chunk = missing[start:start + _BATCH]
        encoded = encoder.encode([texts[i] for i in chunk]).astype(np.float16)
        fresh.update({keys[i]: row for i, row in zip(chunk, encoded, strict=True)})
    rows = [fresh[key] if key in fresh else known[key] for key in keys]
    used = dict(zip(keys, rows, strict=True))
    if cache is not None:
        if missing:
            # The vectors in use go first, so the least recently used are the ones dropped.
            cache.write(used, encoder.dimensions)
        recent.by_file[cache.path] = used
    matrix = np.stack(rows).astype(np.float32) if rows else np.zeros((0, encoder.dimensions), np.float32)
    # float16 storage loses a little length; unit rows keep dot products honest cosines.
    return unit_rows(matrix)


def unit_rows(matrix: NDArray[np.float32]) -> NDArray[np.float32]:
    """Each row scaled to length 1 (a row of zeros stays zeros), as 32-bit floats."""
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: NDArray[np.float32] = (matrix / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


def tokenizable(texts: Sequence[str], limit: int) -> list[str]:
    """Texts as a model's tokenizer may take them: cut to `limit` characters, and a lone surrogate
    replaced (server text is hostile, and one would make the tokenizer refuse the whole batch)."""
    return [text[:limit].encode("utf-8", "replace").decode("utf-8") for text in texts]


class CosineTable:
    """The dot products of a query with unit rows (the tools' vectors): with onnxruntime, through
    the rows in 8 bits (`encoder_graph.cosine_graph`; about 0.001 from the floats at worst), else
    by NumPy."""

    def __init__(self, rows: NDArray[np.float32]) -> None:
        self.rows = rows
        self._session: Any = None
        if len(rows) and importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx"):
            from hermes.tools import encoder_graph

            try:
                self._session = encoder_graph.session(encoder_graph.cosine_graph(rows))
            except Exception as exc:  # onnxruntime's errors are plain Exceptions; NumPy answers the same
                log.warning("tool search compares meanings with NumPy: %s: %s", type(exc).__name__, exc)

    def __call__(self, query: NDArray[np.float32]) -> NDArray[np.float32]:
        import numpy as np

        if self._session is None:
            found: NDArray[np.float32] = self.rows @ query
            return found
        from hermes.tools.encoder_graph import COSINES, QUERY

        cosines: NDArray[np.float32] = self._session.run([COSINES], {QUERY: query.astype(np.float32)[None, :]})[0][0]
        return cosines


def closeness_of(cosine: NDArray[np.float32], depth: int = BLEND_DEPTH, *,
                 word_share: float = WORD_SHARE, floor: float = MIN_SIMILARITY) -> Closeness:
    """A query's `cosine` to each row (a `CosineTable`'s answer), and the `depth` closest rows."""
    import numpy as np

    depth = min(depth, len(cosine))
    if depth <= 0:
        return Closeness(cosine, [], word_share, floor)
    top = np.argpartition(-cosine, depth - 1)[:depth]
    return Closeness(cosine, [int(n) for n in top[np.argsort(-cosine[top], kind="stable")]], word_share, floor)
