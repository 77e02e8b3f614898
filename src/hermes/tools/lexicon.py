"""The English words of a request in Portuguese, Spanish, German or Chinese, for the word index.

Tools describe themselves in English; a request in another language shares only its product names
with them, and the multilingual model, which places the request near its tool, blurs the action
("send" / "search" mail, "create" / "list" events). Most of what a request asks a tool for is said
with a few hundred everyday words: the actions of APIs and the things they act on. This table gives
their English for the four languages of hermes's users, so the word index can weigh them
(cross-language query expansion, a classic of retrieval): "manda um e-mail pro João" also searches
for "send email", "leg einen Ordner an" for "create folder", "新建文件夹" for "create folder".

Written by hand from general language use, verbs in the forms people type to an assistant
(imperative, infinitive, the Brazilian and the European Portuguese, du-form German). The first
part was written before any benchmark request was read; the second (from "buy" on) after reading
where the training translations failed (`tests/data/tool_training_intents_multilingual.jsonl`),
never the evaluation requests. Latin words are matched whole, ignoring accents and German ae/oe/ue
spellings, then by their Snowball stems (a form the table does not list: "apagou", "löschst"), and
a long one also inside a compound ("Kalendereintrag"); Chinese ones of two
characters or more, or of one that means nothing else (删, 搜; 行 is inside 银行), anywhere in the text,
since Chinese has no spaces. A word with two meanings in the four languages (Portuguese "fecha"
closes, Spanish "fecha" is a date) is left out. What the table does not know of a Chinese request
comes from CC-CEDICT where it is installed (`hermes.tools.chinese_words`); what it does not know
of a Portuguese, Spanish or German one, from FreeDict's dictionaries where Debian's packages are
installed (`hermes.tools.latin_words`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from hermes.tools import chinese_words, latin_words
from hermes.tools.query_language import CJK, OTHER_WORDS, WORD, Kind, folded, kind
from hermes.tools.stemming import stem

# The table: English word -> its forms in the four languages (read at the first lookup).
_TABLE = Path(__file__).with_name("lexicon.txt")

# Names, paths and numbers, which are the same in every language: runs of ASCII not inside a word
# with other letters ("löschen" is no name "l").
_ASCII_RUN = re.compile(r"(?<![^\W\d_])[A-Za-z0-9][A-Za-z0-9_./:@-]*(?![^\W\d_])")
_COMPOUND_PART = 6  # a word this long is also found inside a compound word (German writes them)
_OTHER_PART = 5


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(Latin form -> English words, Chinese form -> English words)."""
    latin: dict[str, set[str]] = {}
    chinese: dict[str, set[str]] = {}
    for line in _TABLE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        english, _, forms = line.partition(":")
        for form in forms.split():
            if CJK.search(form):
                chinese.setdefault(form, set()).add(english.strip())
            else:
                latin.setdefault(folded(form), set()).add(english.strip())
    return latin, chinese


_STEM_SHORTEST = 4  # a shorter stem ("cri") stands for too many words
_STEM_LANGUAGES = ("portuguese", "spanish", "german")
# Frequent words of the three languages that say nothing a tool is for, but whose stems meet the
# table's ("sich" and "Sicherheit", "seit" and "Seite", "sendo" and "send"): never looked up by stem,
# nor in a dictionary ("entre" is "among", "sich" "each other").
_NOT_BY_STEM = frozenset(folded(word) for word in (
    "sich", "seit", "seine", "seinen", "seiner", "seines", "ihre", "ihren", "ihrer", "andere", "anderen",
    "anderer", "anderes", "alles", "etwas", "immer", "wieder", "wird", "werden", "wurde", "wurden", "kann",
    "können", "koennen", "soll", "sollte", "muss", "müssen", "dass", "oder", "aber", "wenn", "weil", "sendo",
    "sido", "estou", "esta", "estao", "tenho", "temos", "tinha", "aqui", "agora", "ainda", "sempre", "depois",
    "antes", "muito", "pouco", "tudo", "nada", "cada", "outro", "outra", "outros", "outras", "siendo", "estoy",
    "estan", "tengo", "tenemos", "ahora", "todavia", "siempre", "despues", "mucho", "poco", "todo",
    "otro", "otra", "otros", "otras", "entre", "sobre", "desde", "hasta", "quem", "quien", "alguem", "alguien",
    "algo", "todos", "muy", "sehr", "mehr", "viel", "viele", "nur", "doch", "also", "dort", "hier", "zwischen",
))


@lru_cache(maxsize=1)
def _stem_tables() -> dict[str, dict[str, set[str]]]:
    """Per language (Portuguese, Spanish, German): each form's stem in it -> English.

    The table lists the forms people type most; a stem also finds the others ("apagou", "apagando"
    beside "apaga"; "löschst" beside "lösche"). A request's language is not known, so a word is
    stemmed as each of the three and looked up in that language's stems of the whole table."""
    latin, _ = _tables()
    found: dict[str, dict[str, set[str]]] = {}
    for language in _STEM_LANGUAGES:
        table = found.setdefault(language, {})
        for form, words in latin.items():
            stemmed = stem(language, form)
            if len(stemmed) >= _STEM_SHORTEST:
                table.setdefault(stemmed, set()).update(words)
    return found


def _by_stem(plain: str) -> list[str]:
    """The English of a word the table does not list, by its stems in the three languages."""
    if len(plain) < _STEM_SHORTEST or plain in _NOT_BY_STEM or plain in OTHER_WORDS:
        return []
    found: list[str] = []
    for language, table in _stem_tables().items():
        stemmed = stem(language, plain)
        if len(stemmed) >= _STEM_SHORTEST:
            found.extend(sorted(table.get(stemmed, ())))
    return found


def english_words(text: str) -> list[str]:
    """The English of the everyday words of `text` that the table knows, in a stable order."""
    latin, chinese = _tables()
    found: dict[str, None] = {}
    chinese_too = CJK.search(text) is not None
    unknown: list[str] = []
    written = WORD.findall(text)
    for word in written:
        plain = folded(word)
        if plain in latin:
            found.update(dict.fromkeys(sorted(latin[plain])))
            continue
        # An English word inside a Chinese request ("帮我看看 past orders") is no Portuguese one.
        if not (chinese_too and word.isascii()):
            by_stem = _by_stem(plain)
            found.update(dict.fromkeys(by_stem))
            if not by_stem and plain not in OTHER_WORDS and plain not in _NOT_BY_STEM:
                unknown.append(plain)
        if len(plain) > _COMPOUND_PART:
            for form, words in latin.items():
                # A compound holds another word beside this one ("kalender" + "eintrag"); a
                # longer form of a word ("restaurantes", "programación") does not.
                if len(form) >= _COMPOUND_PART and form in plain and len(plain) - len(form) >= _OTHER_PART:
                    for english in sorted(words):
                        found[english] = None
    if chinese_too:
        for form, words in chinese.items():
            if form in text:
                for english in sorted(words):
                    found[english] = None
        found.update(dict.fromkeys(chinese_words.english_of(text)))  # what the table does not know
    elif unknown and kind(text) is Kind.LATIN:  # what the table does not know, where a dictionary is installed
        dictionaries = latin_words.INSTALLED
        language = dictionaries.language_of([word.lower() for word in written])
        for plain in unknown:
            found.update(dict.fromkeys(dictionaries.english_of(plain, language)))
    return list(found)


def gloss(text: str) -> str:
    """What an English reader can take from a request in another language: the English of its
    everyday words, then its names, paths and numbers ("把 pipeline 88 回滚到上一个版本" ->
    "pipeline release version restore 88"). The English model reads this far better
    than the request itself ('' when there is nothing to read)."""
    latin, _ = _tables()
    # A word found only by its stem ("apagou") stays among the names: leaving it out was measured
    # on the training translations and did no better.
    names = [token.rstrip(".:-/") for token in _ASCII_RUN.findall(text)
             if token.lower() not in OTHER_WORDS and folded(token) not in latin]
    return " ".join([*english_words(text), *(name for name in names if name)])
