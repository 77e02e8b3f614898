"""all-MiniLM-L6-v2's transformer blocks as an ONNX graph, for onnxruntime to run.

`tools.encoder` looks the tokens up and pools the result with NumPy; what lies between, six BERT
blocks of matrix products, is where a query's time goes. NumPy hands each product to OpenBLAS,
whose general product for a few rows is slow: the 36 products of a query of three tokens took
4.0 ms, of one token 1.0 ms (my reading: it packs each weight matrix again on every call).
onnxruntime packs constant weights once, when the session is made.

Two graphs are built from the same weights:
- **exact**: the model as it is, in 32-bit floats, for tools (their vectors are cached, so they
  must not depend on how they were computed: `.ci/check_encoder.py` holds them to 1e-5 of
  sentence-transformers).
- **quick**: for queries, each dense layer's weight (with the query adapter merged in:
  x @ W + x @ down @ up is x @ (W + down @ up)) stored as 8-bit codes with a scale per block of
  inputs, multiplied by onnxruntime's MatMulNBits. 0.28 of the bytes to read per query; an
  eight-token query costs 0.8 ms instead of 4.6 ms with NumPy (2.3 ms with this graph in floats).
  The vector's cosine to the exact one is 0.9989 or more on real requests, 0.998 on hostile text
  (tests/tools/test_query_adapter.py holds 0.997); recall is measured by bench_recall.

Sessions run on the calling thread, with no pool of their own and no spinning: the two cores are
shared with the event loop and the servers (`tools.encoder` says more). Importing onnxruntime
starts one idle thread of its own, so a process that forks must have the child exec or `os._exit`
(a child that ran Python's normal exit hung in onnxruntime's exit handlers, waiting for a thread
it does not have); hermes forks only to exec servers and sandboxes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

HIDDEN = "hidden"  # input: the embeddings after their LayerNorm, batch x tokens x 384
BLOCKED = "blocked"  # input: 0 where a token may be attended to, -1e9 for padding, batch x 1 x 1 x tokens
OUTPUT = "output"  # the last block's hidden states, batch x tokens x 384
QUERY = "query"  # the cosine graph's input: one query vector, 1 x columns
COSINES = "cosines"  # its output: the query's dot product with each row, 1 x rows
_OPSET = 17  # the first with LayerNormalization
_MICROSOFT = "com.microsoft"  # onnxruntime's own operators (MatMulNBits)
# The quick graph's weights have one scale per QUANTUM inputs of an output. Its products quantize
# their inputs to 8 bits in blocks of the same size (accuracy level 4), so an outlier among a
# token's 384 or 1,536 values costs precision only in its own block: against one scale per output
# and per product (onnxruntime's DynamicQuantizeMatMul), a query's cosine to the exact vector went
# from 0.980-0.992 to 0.998-0.9996, for 0.3 ms more a query.
QUANTUM = 32


class Builder:
    """Nodes and constants, named as they are added."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.constants: list[Any] = []

    def constant(self, name: str, value: NDArray[Any]) -> str:
        import numpy as np
        from onnx import numpy_helper

        self.constants.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], domain: str = "", **attributes: Any) -> str:
        from onnx import helper

        output = f"{op.lower()}_{len(self.nodes)}"
        self.nodes.append(helper.make_node(op, inputs, [output], domain=domain or None, **attributes))
        return output


def blocks_graph(weights: Mapping[str, NDArray[np.float32]], *, layers: int, heads: int, eps: float,
                 change: Mapping[str, NDArray[np.float32]] | None = None, quantize: bool = False) -> bytes:
    """The serialized graph of the model's `layers` blocks. Dense weights are given as stored by
    `tools.encoder` (inputs x outputs); `change` maps a dense layer's name to an inputs x outputs
    matrix added to its weight (the query adapter); `quantize` makes the quick graph."""
    import numpy as np
    from onnx import TensorProto, helper

    graph = Builder()
    size = weights["encoder.layer.0.attention.self.query.weight"].shape[0]
    head = size // heads
    split = graph.constant("split_heads", np.array([0, 0, heads, head], np.int64))
    join = graph.constant("join_heads", np.array([0, 0, size], np.int64))
    scale = graph.constant("attention_scale", np.array(1 / np.sqrt(head), np.float32))
    half = graph.constant("half", np.array(0.5, np.float32))
    one = graph.constant("one", np.array(1.0, np.float32))
    root_two = graph.constant("root_two", np.array(np.sqrt(2.0), np.float32))

    def dense(x: str, name: str) -> str:
        weight, bias = weights[f"{name}.weight"], weights[f"{name}.bias"]
        if change is not None and name in change:
            weight = weight + change[name]
        if not quantize:
            product = graph.node("MatMul", [x, graph.constant(f"{name}.weight", weight)])
            return graph.node("Add", [product, graph.constant(f"{name}.bias", bias)])
        return quick_product(graph, x, weight, name, graph.constant(f"{name}.bias", bias))

    def norm(x: str, name: str) -> str:
        return graph.node("LayerNormalization", [x, graph.constant(f"{name}.gain", weights[f"{name}.weight"]),
                                                 graph.constant(f"{name}.shift", weights[f"{name}.bias"])],
                          axis=-1, epsilon=eps)

    def heads_of(x: str, name: str, order: list[int]) -> str:
        return graph.node("Transpose", [graph.node("Reshape", [dense(x, name), split])], perm=order)

    x = HIDDEN
    for layer in range(layers):
        p = f"encoder.layer.{layer}."
        query = heads_of(x, f"{p}attention.self.query", [0, 2, 1, 3])
        keys = heads_of(x, f"{p}attention.self.key", [0, 2, 3, 1])  # already transposed for the product
        values = heads_of(x, f"{p}attention.self.value", [0, 2, 1, 3])
        scores = graph.node("Add", [graph.node("Mul", [graph.node("MatMul", [query, keys]), scale]), BLOCKED])
        context = graph.node("MatMul", [graph.node("Softmax", [scores], axis=-1), values])
        context = graph.node("Reshape", [graph.node("Transpose", [context], perm=[0, 2, 1, 3]), join])
        x = norm(graph.node("Add", [dense(context, f"{p}attention.output.dense"), x]), f"{p}attention.output.LayerNorm")
        inner = dense(x, f"{p}intermediate.dense")
        erf = graph.node("Erf", [graph.node("Div", [inner, root_two])])
        inner = graph.node("Mul", [graph.node("Mul", [inner, half]), graph.node("Add", [one, erf])])  # exact GELU
        x = norm(graph.node("Add", [dense(inner, f"{p}output.dense"), x]), f"{p}output.LayerNorm")
    graph.nodes.append(helper.make_node("Identity", [x], [OUTPUT]))
    inputs = [helper.make_tensor_value_info(HIDDEN, TensorProto.FLOAT, ["batch", "tokens", size]),
              helper.make_tensor_value_info(BLOCKED, TensorProto.FLOAT, ["batch", 1, 1, "tokens"])]
    outputs = [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", "tokens", size])]
    return serialized(graph, "minilm_blocks", inputs, outputs)


def quantized(weight: NDArray[np.float32]) -> tuple[NDArray[np.uint8], NDArray[np.float32]]:
    """`weight` (inputs x outputs) in MatMulNBits's layout: for each output, its inputs in blocks of
    QUANTUM (the last one padded with zeros), each block's largest magnitude mapped to 127 and every
    value to a code 128 + round(value / scale) (outputs x blocks x QUANTUM), and the scales
    (outputs x blocks). A block of zeros gets scale 1 (its codes are 128). A value that is not a
    finite number is a ValueError: its codes would be garbage that ranks first."""
    import numpy as np

    if not np.isfinite(weight).all():
        raise ValueError("values that are not finite numbers cannot be coded in 8 bits")
    inputs, outputs = weight.shape
    blocks = -(-inputs // QUANTUM)
    padded = np.zeros((outputs, blocks * QUANTUM), np.float32)
    padded[:, :inputs] = weight.T
    grouped = padded.reshape(outputs, blocks, QUANTUM)
    largest = np.abs(grouped).max(axis=2)
    scales = np.where(largest > 0, largest / 127.0, 1.0).astype(np.float32)
    codes = (np.clip(np.rint(grouped / scales[:, :, None]), -127, 127) + 128).astype(np.uint8)
    return codes, scales


def quick_product(graph: Builder, x: str, weight: NDArray[np.float32], name: str, bias: str = "") -> str:
    """x @ weight (inputs x outputs) through 8-bit codes: onnxruntime's MatMulNBits."""
    codes, block_scales = quantized(weight)
    size, outputs = weight.shape
    # Inputs: A, B, scales, zero points (none: 8-bit codes are centred on 128), g_idx (none), bias.
    operands = [x, graph.constant(f"{name}.codes", codes), graph.constant(f"{name}.scales", block_scales), "", "", bias]
    return graph.node("MatMulNBits", operands if bias else operands[:3], domain=_MICROSOFT,
                      K=size, N=outputs, bits=8, block_size=QUANTUM, accuracy_level=4)


def cosine_graph(rows: NDArray[np.float32]) -> bytes:
    """The serialized graph of `rows @ query` for one query (1 x columns -> 1 x rows), the rows in
    8 bits: 0.28 of the memory a query reads (a byte a value, and a scale per 32), so the tools'
    vectors (18 MB in floats for 5,000 tools and both models) no longer push the word index out of
    the cache."""
    from onnx import TensorProto, helper

    graph = Builder()
    product = quick_product(graph, QUERY, rows.T, "rows")
    graph.nodes.append(helper.make_node("Identity", [product], [COSINES]))
    count, columns = rows.shape
    inputs = [helper.make_tensor_value_info(QUERY, TensorProto.FLOAT, [1, columns])]
    outputs = [helper.make_tensor_value_info(COSINES, TensorProto.FLOAT, [1, count])]
    return serialized(graph, "cosines", inputs, outputs)


def serialized(graph: Builder, name: str, inputs: list[Any], outputs: list[Any]) -> bytes:
    """`graph` as an ONNX model's bytes, with these inputs and outputs (value infos)."""
    from onnx import helper

    model = helper.make_model(helper.make_graph(graph.nodes, name, inputs, outputs, graph.constants),
                              opset_imports=[helper.make_opsetid("", _OPSET), helper.make_opsetid(_MICROSOFT, 1)])
    data: bytes = model.SerializeToString()
    return data


def session(graph: bytes) -> Any:
    """An onnxruntime session for `graph` on one thread, its weights packed once, here."""
    import onnxruntime

    onnxruntime.set_default_logger_severity(3)  # its own messages go to stderr: errors only, raised anyway
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # errors only: its warnings are about graph rewrites, not for users
    return onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
