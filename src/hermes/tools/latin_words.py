"""The English of a Portuguese, Spanish or German request's words, from FreeDict, where installed.

The hand-written table (`hermes.tools.lexicon`) knows the actions and things most requests name; a
request also names what no table of a few hundred words holds ("lembrete", "Überweisung",
"factura"). FreeDict's German-English, Portuguese-English and Spanish-English dictionaries
(German's GPL-3+, the others GPL-2+; from Debian's packages `dict-freedict-deu-eng`, `-por-eng`,
`-spa-eng`; 240,000, 9,000 and 3,800 words), and its English-Portuguese and English-Spanish ones
read backwards (`dict-freedict-eng-por`, `-eng-spa`: 15,000 Portuguese words in all, 4,300
Spanish), are read where those packages are installed, in their own dictd format, and never
copied into hermes.

A word is looked up only when the table does not know it, by its accent-folded form and then by
the forms a request bends a dictionary word into: Portuguese and Spanish verbs said to someone
("apaga", "busca": the dictionary has "apagar", "buscar"), plurals ("arquivos", "hojas"), German
verbs in the du-form ("lösche", "erstell") and plural nouns ("Termine", "Einträge"). Each word
gives the English words most of its first entries share (German lists a word's entries in no
order of use: "Kalender" is first a ruminant's stomach, then three times a calendar), leaving out
entries of the trades no tool is for (mining, medicine, botany, ...) and words of grammar ("diese",
"dass"). A request is read in one language: the one whose small words and dictionary know most of
its words (Portuguese "diese" is the sign #).

Measured on the translated training requests (20-server sessions, recall@5 of the whole ranking,
words and both models, held-out query adapters): German 83.0 -> 85.0 %, Spanish 79.8 -> 81.2 %,
Portuguese 78.6 -> 81.8 %; by words alone 65.6 -> 69.2, 62.6 -> 66.6, 62.6 -> 67.6 (the backward
reading gave Portuguese 0.8 of those points). The words' share of the blend then went up
(`tools.meaning_model`). On the evaluation requests (bench_recall, held out): German 79 -> 84 %,
Spanish 81 -> 83 %, Portuguese 79 -> 80 %. Reading six entries of a word and keeping four
English words did no better; the dictionary's words left out of what the English model reads did
worse (German 83.4, Spanish 80.2, Portuguese 79.8).

The dictionaries are read once per process, by the first request in Latin script that is not
English, in that search's worker thread: about 3 s on two cores, 50 MB kept (German's 240,000
words) and about 250 MB while reading. A process whose requests are all English, Chinese or in
another script never reads them.
"""

from __future__ import annotations

import io
import re
import threading
import zlib
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from hermes.files import read_bounded
from hermes.tools.query_language import LANGUAGE_WORDS, folded

FOLDER = Path("/usr/share/dictd")
LANGUAGES = ("deu", "por", "spa")
# English-to-X dictionaries also read backwards: Portuguese's and Spanish's own are small (9,000 and
# 3,800 words; "pasta" is only dough there). German's is 240,000 words already.
_BACKWARDS = ("por", "spa")
_GERMAN = LANGUAGES.index("deu")
_PLURALS = (("oes", "ao"), ("aes", "ao"), ("ns", "m"), ("ais", "al"), ("eis", "el"))
_MAX_INDEX_BYTES = 32 << 20  # German's index is 13 MB
_MAX_TEXT_BYTES = 192 << 20  # German's entries are 100 MB once decompressed
_ENTRIES = 4  # of one word, read: the German dictionary has up to dozens
_ITEMS = 2  # a sense's first translations ("send off, ship, dispatch")
_WORDS_PER_ITEM = 2
_KEEP = 3
_SHORTEST = 4
# What a real dictionary never holds, refused before any work (the files are read whole, and a forged
# index could point half a million headwords at one megabyte): German's longest entry is 4.9 KB,
# its offsets five base-64 digits.
_LONGEST_ENTRY = 64 << 10
_LONGEST_NUMBER = 8
_LONGEST_LINE = 1000
_BASE64 = {ch: n for n, ch in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}
# Senses of trades no tool is for, as the German dictionary marks them: "Wetter" is first a mine's air.
_TRADES = re.compile(r"\[(?:min|med|chem|bot|zool|biol|anat|geol|astron|mil|naut|relig|hist|agr|ornith|pharm"
                     r"|phys|mus|ling|lit|sport|textil|print|aviat|electr|constr|mach)\.?\]")  # "[sport]" has no dot
# A sense the German dictionary marks as computing's counts double: "erstellen" is "create" there.
_COMPUTING_MARK, _COMPUTING = "[comp.]", 2
# A word of grammar (pronoun, conjunction, preposition, article, interjection, numeral), as the German
# dictionary marks its entries: "diese" is "such", "was" "what", "dass" "that"; no tool is for them.
_GRAMMAR = re.compile(r"<(?:pron|conj|prep|art|int|num)\b")
# Each bounded, so that a line of unmatched "<" costs linear time, not quadratic.
_MARKS = re.compile(r"<[^<>]{0,80}>|\[[^\[\]]{0,80}\]|\([^()]{0,80}\)|/[^/]{0,80}/|^\d+\.\s*")
_ENGLISH_WORD = re.compile(r"[a-z][a-z-]{1,39}")
_NOT_SENSES = ('"', "Note:", "Synonym", "see:")
_SMALL_WORDS = frozenset(["a", "an", "the", "to", "of", "for", "and", "or", "in", "on", "at", "by", "with", "from",
                          "as", "be", "is", "sth", "sb", "something", "someone", "oneself", "it", "one's", "up",
                          "out", "off", "into", "etc"])


def _number(text: str) -> int:
    """A dictd index's base-64 offset or length (KeyError: not one)."""
    if len(text) > _LONGEST_NUMBER:
        raise KeyError(text[:_LONGEST_NUMBER])
    value = 0
    for ch in text:
        value = value * 64 + _BASE64[ch]
    return value


def _senses(entry: str) -> Iterator[str]:
    """The lines of a dictd entry that translate it (not its headword, examples, notes or links)."""
    for line in entry.split("\n")[1:]:
        if line[:2].isspace() or len(line) > _LONGEST_LINE:  # examples, notes and synonyms are indented further
            continue
        sense = line.strip()
        if sense and not sense.startswith(_NOT_SENSES) and not _TRADES.search(sense):
            yield sense


def _english(sense: str) -> list[str]:
    words: list[str] = []
    for item in _MARKS.sub(" ", sense).lower().split(",")[:_ITEMS]:
        words += [w for w in _ENGLISH_WORD.findall(item) if w not in _SMALL_WORDS][:_WORDS_PER_ITEM]
    return words


def _index_lines(index: str) -> Iterator[tuple[str, str, str]]:
    """A dictd index's (headword, offset, length), line by line: a list of half a million lines
    costs 35 MB."""
    for line in io.StringIO(index):
        fields = line.rstrip("\n").split("\t")
        if len(fields) == 3 and all(fields):
            yield fields[0], fields[1], fields[2]


def _entry(text: bytes, offset: str, length: str) -> str | None:
    """The entry an index line points at; None when its numbers are not ones, or it is not an entry
    a real dictionary holds."""
    try:
        start, size = _number(offset), _number(length)
    except KeyError:
        return None
    if size > _LONGEST_ENTRY or start >= len(text):
        return None
    return text[start:start + size].decode("utf-8", errors="replace")


def _count_translations(entry: str, counts: Counter[str]) -> None:
    for sense in _senses(entry):
        weight = _COMPUTING if _COMPUTING_MARK in sense else 1
        for word in _english(sense):
            counts[word] += weight


def parse(index: str, text: bytes) -> dict[str, str]:
    """Folded headword -> its English words (space-separated), from a dictd index and its entries.

    The index is sorted, so a word's entries are read together and their counts dropped before the
    next word's; a word met again further on ("Loesche" after "Lösche") keeps its first reading.
    Holding every word's counts at once took three times the table's memory."""
    table: dict[str, str] = {}
    word, counts, entries, grammar = "", Counter[str](), 0, 0

    def keep() -> None:
        # A word of grammar (most of the entries read), or of trades only, is kept as known with
        # no English: its other forms are then not tried ("Pflanze" is no "Pflanzer").
        if entries and word not in table:
            table[word] = "" if 2 * grammar > entries else " ".join(w for w, _ in counts.most_common(_KEEP))

    written, headword = "", ""
    for shown, offset, length in _index_lines(index):
        if " " in shown:
            continue
        if shown != written:  # a word's entries follow each other: folded once
            written, headword = shown, folded(shown)
        if headword != word:
            keep()
            word, counts, entries, grammar = headword, Counter(), 0, 0
        if len(headword) < _SHORTEST or headword.startswith("00") or entries >= _ENTRIES:
            continue  # 00-database-info and the like describe the dictionary itself
        entry = _entry(text, offset, length)
        if entry is None:
            continue
        entries += 1
        grammar += _GRAMMAR.search(entry.partition("\n")[0]) is not None
        _count_translations(entry, counts)
    keep()
    return table


def parse_backwards(index: str, text: bytes) -> dict[str, str]:
    """Folded word -> the English headwords that list it (space-separated), from an English-to-X
    dictd dictionary read backwards ("folder: 1. caderno 2. pasta" gives "pasta" folder). A
    translation of two words counts for its first ("planilha eletrônica": planilha)."""
    alone: dict[str, list[str]] = {}  # from translations of one word
    leading: dict[str, list[str]] = {}  # from the first word of two
    for shown, offset, length in _index_lines(index):
        english = shown.lower()
        if not _ENGLISH_WORD.fullmatch(english) or english in _SMALL_WORDS:
            continue
        entry = _entry(text, offset, length)
        for sense in _senses(entry) if entry is not None else ():
            for item in _MARKS.sub(" ", sense).split(","):
                words = item.split()
                if 1 <= len(words) <= 2 and len(word := folded(words[0])) >= _SHORTEST:
                    listed = (alone if len(words) == 1 else leading).setdefault(word, [])
                    if english not in listed and len(listed) < _KEEP:
                        listed.append(english)
    # A word that translates something alone is read so; one that only leads phrases is read by the
    # phrase only when it leads one: "planilha eletrônica" is a spreadsheet, but "nova" ("nova linha"
    # newline, "nova avaliação" reassessment) and "tornar" (automate, beautify) say how, not what.
    heads = {word: english for word, english in leading.items() if len(english) == 1}
    return {word: " ".join(english) for word, english in {**heads, **alone}.items()}


def _unpacked(folder: Path, name: str) -> tuple[str, bytes] | None:
    """A dictd dictionary's index and entries, within their caps (None: missing, unreadable, too large)."""
    try:  # a FIFO, a device or a folder in their place is refused, never waited on
        index = read_bounded(folder / f"freedict-{name}.index", _MAX_INDEX_BYTES)
        packed = read_bounded(folder / f"freedict-{name}.dict.dz", _MAX_TEXT_BYTES)
        unpacking = zlib.decompressobj(16 + zlib.MAX_WBITS)  # dictzip is gzip with an index of its chunks
        text = unpacking.decompress(packed, _MAX_TEXT_BYTES + 1)
    except (OSError, zlib.error):
        return None
    if len(text) > _MAX_TEXT_BYTES:
        return None
    return index.decode("utf-8", errors="replace"), text


def _read(folder: Path, language: str) -> dict[str, str]:
    """A language's table: its X-to-English dictionary, and (Portuguese, Spanish: the small ones)
    its English-to-X one read backwards, for the words the first does not know or beside its words."""
    forward = _unpacked(folder, f"{language}-eng")
    table = parse(*forward) if forward is not None else {}
    backward = _unpacked(folder, f"eng-{language}") if language in _BACKWARDS else None
    for word, english in (parse_backwards(*backward) if backward is not None else {}).items():
        known = table.get(word)
        if known != "":  # a word of grammar stays one
            table[word] = " ".join(dict.fromkeys(f"{known or ''} {english}".split()))
    return table


def _forms(word: str, language: int | None) -> Iterator[str]:
    """`word` as written, then the dictionary forms a request's bending of it can come from in
    `language` (every language's, when None)."""
    yield word
    if language in (None, _GERMAN):  # before "r": "lösche" is löschen, not Löscher
        yield word + "n"  # "lösche": löschen
        yield word + "en"  # "erstell": erstellen
    if language != _GERMAN:
        yield word + "r"  # "apaga", "busca": apagar, buscar
        # Plurals that do not end in the singular plus s, folded: "notificações", "mensagens",
        # "canais", "papéis" are notificação, mensagem, canal, papel.
        for plural, single in _PLURALS:
            if word.endswith(plural) and len(word) - len(plural) + len(single) >= _SHORTEST:
                yield word[:-len(plural)] + single
    for cut in (1, 2):  # "arquivos", "Termine": arquivo, Termin; "Dateien": Datei
        if len(word) - cut >= _SHORTEST:
            yield word[:-cut]


class Dictionaries:
    """The FreeDict dictionaries of one folder, read at the first lookup (empty where a package is
    missing or its files cannot be read: the hand-written table still works)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        # Two searches in worker threads may ask at once; one reads the files, the other waits.
        self._reading = threading.Lock()
        self._tables: tuple[dict[str, str], ...] | None = None

    @property
    def loaded(self) -> bool:
        return self._tables is not None

    def tables(self) -> tuple[dict[str, str], ...]:
        """Each dictionary's table, read once (seconds for German: callers keep it off the event loop)."""
        with self._reading:
            if self._tables is None:
                self._tables = tuple(_read(self.folder, language) for language in LANGUAGES)
            return self._tables

    def language_of(self, words: Sequence[str]) -> int | None:
        """The language (its place in LANGUAGES) of a request's words, lower-cased: the one whose
        small words and dictionary know most of them; None on a tie. Portuguese "diese" is the
        sign #, German "diese" is "these"."""
        tables = self.tables()
        plain = [(word, folded(word)) for word in words]  # folded once, looked up in each table
        votes = [sum(word in LANGUAGE_WORDS[language] or (len(word) >= _SHORTEST and form in table)
                     for word, form in plain) for language, table in zip(LANGUAGES, tables, strict=True)]
        best = max(votes)
        return votes.index(best) if best and votes.count(best) == 1 else None

    def english_of(self, word: str, language: int | None = None) -> list[str]:
        """The English of one folded word (as `query_language.folded` gives it), from the first of
        its forms the dictionary of `language` knows (any dictionary, when None); [] when none does."""
        if len(word) < _SHORTEST:
            return []
        tables = self.tables()
        chosen = tables if language is None else tables[language:language + 1]
        for form in _forms(word, language):
            known = [table[form] for table in chosen if form in table]
            if known:  # a word of grammar is known, with no English: its other forms are not tried
                return list(dict.fromkeys(" ".join(known).split()))
        return []


# Debian's packages, where installed; read once per process, whichever session asks first.
INSTALLED = Dictionaries(FOLDER)
