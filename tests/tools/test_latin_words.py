"""The English of Portuguese, Spanish and German words from FreeDict (`hermes.tools.latin_words`).

Most tests read dictionaries written here in dictd's own format (an index of base-64 offsets and
lengths, the entries gzip-compressed as dictzip files are); the last ones read Debian's real
packages where they are installed (`apt install dict-freedict-deu-eng dict-freedict-por-eng
dict-freedict-spa-eng dict-freedict-eng-por dict-freedict-eng-spa`).
"""

from __future__ import annotations

import gzip
import os
import threading
import zlib
from pathlib import Path

import pytest

from hermes.tools import latin_words
from hermes.tools.deferred import SearchIndex
from hermes.tools.latin_words import Dictionaries
from hermes.tools.lexicon import english_words
from hermes.tools.search import Document, ToolIndex
from tests.tools.test_search import _surface

_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _number(value: int) -> str:
    text = ""
    while True:
        text = _DIGITS[value % 64] + text
        value //= 64
        if not value:
            return text


def _write(folder: Path, name: str, entries: list[tuple[str, str]]) -> None:
    """A dictd dictionary of (headword, entry) pairs, as FreeDict's packages lay it out."""
    text, lines = b"", []
    for headword, entry in entries:
        data = entry.encode()
        lines.append(f"{headword}\t{_number(len(text))}\t{_number(len(data))}")
        text += data
    (folder / f"freedict-{name}.index").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / f"freedict-{name}.dict.dz").write_bytes(gzip.compress(text))


_GERMAN = [
    ("00-database-info", "00-database-info\nThis is the German-English FreeDict dictionary\n"),
    ("Kalender", "Kalender /kalˈɛndɜ/ <masc, n, sg>\nmanyplies <n>, fardel <n>\n         Note: in ruminants\n"),
    ("Kalender", "Kalender /kalˈɛndɜ/ <masc, n, sg>\ncalendar <n>\n"
                 "      \"ein Fixpunkt in meinem Kalender\"  - a fixture in my calendar\n"
                 "         stomach of a cow\n"),  # indented: a note, whatever its words
    ("Kalender", "Kalender <pl>\ncalendars\n"),
    ("Kalender", "Kalender <masc, n, sg>\nappointment calendar <n>, calendar <n>, diary <n>\n"),
    ("Kalender", "Kalender <masc, n, sg>\nalmanac <n>\n"),  # a fifth entry: not read
    ("Wetter", "Wetter <pl, n>\n [min.] mine atmosphere <n>, mine air <n>\n   Synonym: {Grubenluft}\n\n"
               " see: {Brandwetter}\n"),
    ("Wetter", "Wetter <neut, n, sg>\nweather <n>\n"),
    ("Erstellen", "Erstellen <neut, n, sg>\ncompilation <n>, creation <n>\n"),
    ("erstellen", "erstellen <v, trans>\n [comp.] create sth. <v>\n         Note: file, directory\n"),
    ("Termin", "Termin <masc, n, sg>\ndate <n>, appointment <n>\n"),
    ("Datei", "Datei <fem, n, sg>\n [comp.] file <n>\n"),
    ("Fixpunkt im Kalender", "Fixpunkt im Kalender\nfixture\n"),  # several words: never a request's one word
    ("diese", "diese /dˈiːzə/ <pron>\nsuch <pron>\n"),
    ("diese", "diese /dˈiːzə/ <pron>\nthis <pron>\n"),
    ("diese", "diese /dˈiːzə/ <pl>\nthese\n"),
    ("Dies", "Dies <masc, n, sg>\nday\n"),
    ("trotz", "trotz <prep>\nin spite of\n"),  # one entry of grammar among three: a word
    ("Trotz", "Trotz <masc, n, sg>\ndefiance <n>\n"),
    ("Trotz", "Trotz <masc, n, sg>\nobstinacy <n>\n"),
    ("Pflanze", "Pflanze <fem, n, sg>\n [bot.] plant <n>\n"),  # a trade's only: known, no English
    ("Pflanzer", "Pflanzer <masc, n, sg>\nplanter <n>\n"),
    ("Abseits", "Abseits <neut, n, sg>\n [sport] offside <n>\n"),
    ("Lösche", "Lösche <fem, n, sg>\nblotter <n>\n"),
    ("Sender", "Sender <masc, n, sg>\nstation <n>\n"),
    ("senden", "senden <v>\nsend <v>\n"),
    ("Loesche", "Loesche <fem, n, sg>\nquench <n>\n"),  # folds as Lösche, further on: the first stays
]
_PORTUGUESE = [
    ("apagar", "apagar /ˌɐpɐɡˈaɹ/\n1. extinguish, put out\n2. erase, delete\n"),
    ("arquivo", "arquivo /ˌɐɾəkˈivʊ/\n1. archive, archives, files, records\n2. file\n"),
    ("diese", "diese\nsharp, hash\n"),
    ("para", "para <prep>\nfor\n"),
]


# English to Portuguese, read backwards for the words the Portuguese dictionary lacks or says less of.
_FROM_ENGLISH = [
    ("00-database-info", "00-database-info\nThe English-Portuguese FreeDict dictionary\n"),
    ("folder", "folder /fouldər/ <s>\n1. caderno, fascículo\n2. pasta\n"),
    ("spreadsheet", "spreadsheet <s>\nplanilha eletrônica\n"),
    ("put out", "put out\nexpulsar\n"),  # several words: no English word a tool would use
    ("file", "file\narquivo, caixa de entrada de arquivos\n"),  # three words: no word of a request
    ("delete", "delete <vt>\napagar, deletar\n"),
    ("newline", "newline\nnova linha\n"),  # "nova" leads two phrases: it says how, not what
    ("reassessment", "reassessment\nnova avaliação\n"),
    ("stop", "stop\nparar, para\n"),  # "para" is a word of grammar, and stays one
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    _write(tmp_path, "deu-eng", _GERMAN)
    _write(tmp_path, "por-eng", _PORTUGUESE)
    return tmp_path  # no Spanish: a missing package is an empty table


def test_a_word_gets_the_english_most_of_its_first_entries_share(folder: Path) -> None:
    found = Dictionaries(folder)
    # Three of the four entries read say calendar; the fifth (almanac) is not read.
    assert found.english_of("kalender")[0] == "calendar"
    assert "almanac" not in found.english_of("kalender")
    # Senses of trades no tool is for, examples, notes, synonyms and links are not translations.
    assert found.english_of("wetter") == ["weather"]
    assert not {"fixture", "ruminants", "stomach"} & set(found.english_of("kalender"))
    assert found.english_of("abseits") == []  # "[sport]", without a dot, is a trade too
    # A trade's word is known with no English: no other form of it is tried ("Pflanzer").
    assert found.english_of("pflanze") == []
    # A sense marked as computing's counts double: erstellen is first "create", before the noun's words.
    assert found.english_of("erstellen")[0] == "create"
    # Numbered senses, each read for its first translations; three words in all are kept.
    assert found.english_of("apagar") == ["extinguish", "put", "erase"]


def test_a_bent_word_is_found_by_its_dictionary_form(folder: Path) -> None:
    found = Dictionaries(folder)
    assert found.english_of("apaga") == found.english_of("apagar")  # said to someone
    assert "file" in found.english_of("arquivos")  # a plural
    assert found.english_of("termine") == ["date", "appointment"]  # a German plural
    assert found.english_of("erstell")[0] == "create"  # the du-form
    assert found.english_of("dateien") == ["file"]
    assert found.english_of("sende", 0) == ["send"]  # the German du-form before the "-er" noun (Sender)
    assert found.english_of("losche", 0) == ["blotter"]  # the first of two spellings that fold alike
    assert found.english_of("apa") == [] and found.english_of("") == []  # too short to say anything
    assert found.english_of("unbekannt") == []


def test_a_word_of_grammar_is_known_with_no_english_and_a_request_s_language_decides(folder: Path) -> None:
    found = Dictionaries(folder)
    # German marks "diese" a pronoun: no English, and no other form of it is tried ("dies").
    german = found.language_of(["zeig", "mir", "diese", "datei"])
    assert german == 0 and found.english_of("diese", german) == [] and found.english_of("diesem", german) == []
    # One entry of grammar among a word's three does not make it a word of grammar.
    assert sorted(found.english_of("trotz", german)) == ["defiance", "obstinacy", "spite"]
    # The small words vote too: two German ones outweigh one Portuguese word the dictionary knows.
    assert found.language_of(["mit", "der", "arquivo"]) == 0
    # Portuguese has "diese" too (the sign #): a Portuguese request reads it so, a German one never.
    portuguese = found.language_of(["o", "arquivo", "com", "um", "diese"])
    assert portuguese == 1 and found.english_of("diese", portuguese) == ["sharp", "hash"]
    assert found.english_of("arquivo", german) == []
    # No vote, or a tie: every dictionary is read.
    assert found.language_of(["hello", "world"]) is None and found.language_of(["mit", "com"]) is None
    assert found.english_of("arquivo", None) == ["archive", "archives", "file"]


def test_an_english_to_portuguese_dictionary_read_backwards_adds_words_and_senses(folder: Path) -> None:
    _write(folder, "eng-por", _FROM_ENGLISH)
    found = Dictionaries(folder)
    assert found.english_of("pasta", 1) == ["folder"]  # only the English-to-Portuguese one knows it
    assert found.english_of("planilha", 1) == ["spreadsheet"]  # the first of two words
    assert found.english_of("apagar", 1) == ["extinguish", "put", "erase", "delete"]  # beside its own senses
    assert found.english_of("deletar", 1) == ["delete"] and found.english_of("arquivo", 1)[-1] == "file"
    assert found.english_of("expulsar", 1) == [] and found.english_of("entrada", 1) == []
    assert found.english_of("diese", 1) == ["sharp", "hash"]
    assert found.english_of("nova", 1) == [] and found.english_of("para", 1) == []
    # German's is never read backwards: its own dictionary is large.
    _write(folder, "eng-deu", [("folder", "folder\nMappe\n")])
    assert Dictionaries(folder).english_of("mappe", 0) == []


def test_what_is_not_a_word_of_a_request_is_never_read(folder: Path) -> None:
    german, portuguese, spanish = Dictionaries(folder).tables()
    assert not any(word.startswith("00") for word in german)  # the dictionary's description of itself
    assert not any(" " in word for word in german)
    assert set(portuguese) == {"apagar", "arquivo", "diese", "para"} and spanish == {}


def test_hostile_or_broken_files_give_an_empty_table_never_an_error(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, "por-eng", _PORTUGUESE)
    # German: an index with lines that are not entries, offsets past the end, and a character that
    # is no base-64 digit; Spanish: entries that are not gzip at all.
    (tmp_path / "freedict-deu-eng.index").write_text(
        "Datei\tA\n\tA\tB\nDatei\tzzzzzz\tZ\nDatei\tA!\tB\nDatei\tA\t\n\n\x00\t\x00\t\x00\n", encoding="utf-8")
    (tmp_path / "freedict-deu-eng.dict.dz").write_bytes(gzip.compress(b"Datei\nfile\n"))
    (tmp_path / "freedict-spa-eng.index").write_text("archivo\tA\tM\n", encoding="utf-8")
    (tmp_path / "freedict-spa-eng.dict.dz").write_bytes(b"archivo\nfile\n")
    german, portuguese, spanish = Dictionaries(tmp_path).tables()
    assert german == {} and spanish == {} and "arquivo" in portuguese
    # A file that unpacks to more than the cap (a bomb) is refused whole, unpacked no further than the cap.
    monkeypatch.setattr(latin_words, "_MAX_TEXT_BYTES", 1 << 16)
    _write(tmp_path, "spa-eng", [("archivo", "archivo\nfile\n" + " " * (1 << 20))])
    asked: list[int] = []
    real_unpacker = zlib.decompressobj

    class Unpacker:
        def __init__(self, wbits: int) -> None:
            self._real = real_unpacker(wbits)

        def decompress(self, data: bytes, max_length: int = 0) -> bytes:
            asked.append(max_length)
            return self._real.decompress(data, max_length)

    monkeypatch.setattr(zlib, "decompressobj", Unpacker)
    assert Dictionaries(tmp_path).tables()[2] == {}
    assert asked and all(0 < size <= (1 << 16) + 1 for size in asked)
    assert Dictionaries(tmp_path / "nowhere").tables() == ({}, {}, {})


def test_a_fifo_a_folder_or_a_sparse_giant_in_a_dictionary_s_place_is_refused_and_a_symlink_is_followed(
        tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "freedict-deu-eng.index")  # nobody writes: a plain open would wait for ever
    (tmp_path / "freedict-deu-eng.dict.dz").write_bytes(gzip.compress(b"Datei\nfile\n"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _write(elsewhere, "por-eng", _PORTUGUESE)
    for suffix in (".index", ".dict.dz"):
        (tmp_path / f"freedict-por-eng{suffix}").symlink_to(elsewhere / f"freedict-por-eng{suffix}")
    (tmp_path / "freedict-spa-eng.index").mkdir()
    with open(tmp_path / "eng-spa-giant", "wb") as giant:  # a terabyte that takes no disk
        giant.truncate(1 << 40)
    (tmp_path / "freedict-eng-spa.index").write_text("archivo\tA\tB\n", encoding="utf-8")
    (tmp_path / "freedict-eng-spa.dict.dz").symlink_to(tmp_path / "eng-spa-giant")
    german, portuguese, spanish = Dictionaries(tmp_path).tables()
    assert german == {} and spanish == {} and "arquivo" in portuguese


def test_a_forged_index_cannot_make_the_reading_slow_or_the_table_large(tmp_path: Path) -> None:
    # Half a megabyte of one "word" and of unmatched marks, which thousands of headwords point at;
    # offsets of a thousand digits; an entry past the end.
    word, marks = "w" * (1 << 19), "<" * (1 << 19)
    text = f"x\n{word}\n{marks}\n".encode()
    lines = [f"wort{n}\tA\t{_number(len(text))}" for n in range(2000)]
    lines += [f"zahl\t{'B' * 1000}\tB", f"ende\t{_number(len(text) + 10)}\tB", "gut\tA\tB"]
    (tmp_path / "freedict-deu-eng.index").write_text("\n".join(lines), encoding="utf-8")
    (tmp_path / "freedict-deu-eng.dict.dz").write_bytes(gzip.compress(text))
    german = Dictionaries(tmp_path).tables()[0]
    # Refused before any work: the whole run took as long as reading two thousand short lines.
    assert german == {}
    # Within the bounds, a long word is cut and a line of marks read in linear time.
    small = f"y\n{'v' * 500}, {'<' * 400}\n".encode()
    assert latin_words.parse(f"wort\tA\t{_number(len(small))}", small) == {"wort": "v" * 40}


class _WatchedLock:
    """A lock that counts who came to take it, so a test knows a thread waits on it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.arrived = threading.Semaphore(0)

    def __enter__(self) -> None:
        self.arrived.release()
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def test_searches_asking_while_the_files_are_read_wait_and_the_files_are_read_once(
        folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []
    reading, go_on = threading.Event(), threading.Event()
    real_read = latin_words._read

    def held(where: Path, language: str) -> dict[str, str]:
        reads.append(language)
        if len(reads) == 1:  # the first reading lasts until every other search has come to wait
            reading.set()
            go_on.wait()
        return real_read(where, language)

    monkeypatch.setattr(latin_words, "_read", held)
    found = Dictionaries(folder)
    lock = _WatchedLock()
    found._reading = lock  # type: ignore[assignment]
    assert not found.loaded
    answers: list[list[str]] = []
    threads = [threading.Thread(target=lambda: answers.append(found.english_of("datei"))) for _ in range(4)]
    threads[0].start()
    assert reading.wait(timeout=30)
    for thread in threads[1:]:
        thread.start()
    # Each search came to the lock (the first one took it); the bound only ever passes when broken.
    arrived = all(lock.arrived.acquire(timeout=30) for _ in threads)
    go_on.set()
    for thread in threads:
        thread.join()
    assert arrived and answers == [["file"]] * 4
    assert sorted(reads) == ["deu", "por", "spa"] and found.loaded


def test_only_a_request_in_latin_script_other_than_english_reads_the_dictionaries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, "deu-eng", _GERMAN)
    found = Dictionaries(tmp_path)
    monkeypatch.setattr(latin_words, "INSTALLED", found)
    english_words("отправь письмо Ивану про kalender")  # Russian, with a word the table does not know
    english_words("把 kalender 同步一下")
    assert not found.loaded
    assert "planter" in english_words("Bitte den Pflanzer von gestern zeigen") and found.loaded


@pytest.mark.anyio
async def test_a_search_that_may_read_the_dictionaries_runs_off_the_event_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked_from: list[threading.Thread] = []

    class Watched(Dictionaries):
        def tables(self) -> tuple[dict[str, str], ...]:
            asked_from.append(threading.current_thread())
            return super().tables()

    _write(tmp_path, "deu-eng", _GERMAN)
    monkeypatch.setattr(latin_words, "INSTALLED", Watched(tmp_path))
    index = SearchIndex(_surface({"files": [("read_file", "Read a file from the disk.")]}))
    found, _ = await index.search([], "Bitte die Datei von gestern lesen")
    assert [tool.name for tool in found][:1] == ["mcp__files__read_file"]
    assert asked_from and threading.main_thread() not in asked_from  # reading takes seconds: never on the loop


_PACKAGES = ("deu-eng", "por-eng", "spa-eng", "eng-por", "eng-spa")
_INSTALLED = all((latin_words.FOLDER / f"freedict-{name}.index").is_file() for name in _PACKAGES)
needs_debian = pytest.mark.skipif(not _INSTALLED, reason="Debian's dict-freedict-{deu-eng,por-eng,spa-eng,eng-por,"
                                                         "eng-spa} are not installed")


@needs_debian
def test_debian_s_dictionaries_read_everyday_words_of_the_three_languages() -> None:
    found = latin_words.INSTALLED
    german, portuguese, spanish = found.tables()
    assert len(german) > 100_000 and len(portuguese) > 10_000 and len(spanish) > 3_000
    assert "transfer" in found.english_of("uberweisung")  # Überweisung, folded as requests are
    assert "calendar" in found.english_of("kalender")
    assert "busy" in found.english_of("ocupados")
    assert "sheet" in found.english_of("hojas")
    assert "folder" in found.english_of("pasta") and "spreadsheet" in found.english_of("planilha")
    assert "weather" in found.english_of("wetter")
    # Portuguese plurals that are not the singular plus s, folded as requests are.
    portuguese_only = latin_words.LANGUAGES.index("por")
    for plural, english in (("mensagens", "message"), ("canais", "channel"), ("permissoes", "permission"),
                            ("variaveis", "variable"), ("configuracoes", "configuration")):
        assert english in found.english_of(plural, portuguese_only), plural


@needs_debian
def test_a_german_word_the_table_does_not_know_finds_its_tool_through_the_dictionary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = [("create_transfer", "Send money from one of your accounts to another person's bank account."),
             ("create_invoice", "Create an invoice for a customer with line items and a due date."),
             ("list_payments", "List the payments received in a date range.")]
    index = ToolIndex([Document(f"mcp__bank__{name}", "bank", name, "", text, "") for name, text in tools])
    request = "Überweisung von 50 Euro an Max"
    assert "transfer" in english_words(request)
    assert [d.name for d in index.search(request, 1)] == ["create_transfer"]
    # Without a dictionary the request shares no word with any tool.
    monkeypatch.setattr(latin_words, "INSTALLED", Dictionaries(tmp_path))
    assert "transfer" not in english_words(request)
    assert [d.name for d in index.search(request, 1)] != ["create_transfer"]
