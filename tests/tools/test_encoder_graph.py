"""The ONNX graphs tool search runs (`tools.encoder_graph`): 8-bit codes and the tools' cosine table.
The models' graphs are held against the models themselves in test_query_adapter.py (MiniLM) and
test_multilingual.py (the Universal Sentence Encoder)."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

from hermes.tools.encoder_graph import QUANTUM, quantized
from hermes.tools.vectors import CosineTable, closeness_of


def test_8_bit_codes_keep_every_weight_within_half_a_step_and_a_block_of_zeros_whole() -> None:
    rng = np.random.default_rng(3)
    weight = rng.standard_normal((2 * QUANTUM, 3)).astype(np.float32)
    weight[:QUANTUM, 1] = 0.0  # one block of zeros
    weight[5, 2] = 40.0  # an outlier costs precision in its own block only
    codes, scales = quantized(weight)
    assert codes.shape == (3, 2, QUANTUM) and scales.shape == (3, 2) and codes.dtype == np.uint8
    back = ((codes.astype(np.float32) - 128) * scales[:, :, None]).reshape(3, 2 * QUANTUM).T
    assert (np.abs(back - weight) <= scales.repeat(QUANTUM, axis=1).T / 2 + 1e-6).all()
    assert scales[1, 0] == 1.0 and (codes[1, 0] == 128).all()
    assert scales[2, 0] == np.float32(40.0 / 127) and scales[2, 1] < 0.05


def test_inputs_that_fill_no_whole_block_are_padded_with_zeros() -> None:
    weight = np.arange(1, 1 + (QUANTUM + 3) * 2, dtype=np.float32).reshape(QUANTUM + 3, 2)
    codes, scales = quantized(weight)
    assert codes.shape == (2, 2, QUANTUM)
    assert (codes[:, 1, 3:] == 128).all()  # the padding is zero
    back = ((codes.astype(np.float32) - 128) * scales[:, :, None]).reshape(2, 2 * QUANTUM)[:, :QUANTUM + 3].T
    assert np.abs(back - weight).max() <= scales.max() / 2 + 1e-5


def _unit_rows(count: int, width: int, seed: int = 5) -> Any:
    rows = np.random.default_rng(seed).standard_normal((count, width)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize("width", [896, 512, 384, 100])
def test_the_cosine_table_answers_each_row_s_cosine_within_a_few_thousandths(width: int) -> None:
    rows = _unit_rows(700, width)
    table = CosineTable(rows)
    for query in _unit_rows(5, width, seed=9):
        found = table(query)
        assert found.shape == (700,) and found.dtype == np.float32
        assert np.abs(found - rows @ query).max() < 3e-3  # 0.0026 at worst for 100 columns; real rows have 384+
        assert np.abs(found - rows @ query).max() > 0  # read through 8-bit codes, not the floats
    # The closest rows come out as NumPy ranks them, but for near ties.
    query = rows[17] * 0.8 + rows[3] * 0.6
    assert closeness_of(table(query / np.linalg.norm(query))).nearest[:2] == [17, 3]


def test_an_empty_table_answers_no_cosine_and_without_onnxruntime_numpy_does(monkeypatch: pytest.MonkeyPatch) -> None:
    empty = CosineTable(np.zeros((0, 896), np.float32))
    assert empty(_unit_rows(1, 896)[0]).shape == (0,)
    assert closeness_of(empty(_unit_rows(1, 896)[0])).nearest == []
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name == "onnxruntime" else real(name))
    rows = _unit_rows(50, 384)
    query = _unit_rows(1, 384, seed=1)[0]
    assert np.array_equal(CosineTable(rows)(query), rows @ query)


def test_a_weight_that_is_not_a_finite_number_is_refused_not_coded() -> None:
    weight = np.ones((QUANTUM, 2), np.float32)
    weight[3, 1] = np.nan
    with pytest.raises(ValueError, match="not finite"):
        quantized(weight)


def test_onnxruntime_failing_to_build_the_table_leaves_numpy_to_answer(monkeypatch: pytest.MonkeyPatch,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from hermes.tools import encoder_graph

    def refuse(graph: bytes) -> Any:
        raise RuntimeError("no session today")

    monkeypatch.setattr(encoder_graph, "session", refuse)
    rows = _unit_rows(20, 384)
    with caplog.at_level(logging.WARNING, logger="hermes.tools.vectors"):
        table = CosineTable(rows)
    assert np.array_equal(table(rows[2]), rows @ rows[2])
    assert any("no session today" in r.getMessage() for r in caplog.records)


def test_every_graph_hermes_builds_is_valid_onnx() -> None:
    import onnx

    from hermes.tools import encoder, encoder_graph, multilingual, multilingual_graph

    folder = encoder.bundled_model()
    languages = multilingual.load()
    assert folder is not None and languages is not None, "the test command installs the semantic extra and models"
    from safetensors.numpy import load_file

    weights = {name: np.ascontiguousarray(value.T) if name.startswith("encoder.") and value.ndim == 2 else value
               for name, value in load_file(str(folder / "model.safetensors")).items()}
    graphs = [encoder_graph.blocks_graph(weights, layers=6, heads=12, eps=1e-12),
              encoder_graph.blocks_graph(weights, layers=6, heads=12, eps=1e-12, quantize=True),
              encoder_graph.cosine_graph(_unit_rows(10, 896)),
              multilingual_graph.query_graph(languages._model._model)]
    for graph in graphs:
        onnx.checker.check_model(onnx.load_from_string(graph), full_check=True)
