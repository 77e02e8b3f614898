"""Whether a request reads as English: it decides how much each sentence model and the words count.

The English model and the word index both read English only; a request in another language is
ranked mostly by the multilingual model (`tools.meaning_model`). Nothing here needs to name the
language: a script other than Latin, or the small words of Portuguese, German or Spanish outnumbering
English ones, is enough. Product names, paths and code are Latin and English-looking in every
language, so a terse request with nothing else ("github issues") counts as English, where the
English model is the better reader anyway.
"""

from __future__ import annotations

import re
import unicodedata
from enum import Enum

WORD = re.compile(r"[^\W\d_]+", re.UNICODE)  # a run of letters
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")  # Japanese kana, Chinese, Korean
_IDENTIFIER = re.compile(r"[-./@:_\d]")

# Function words: what every sentence of the language has, whatever it is about. Words the
# languages share with English ("a", "in", "me", "no", "die") are left out of every list.
_ENGLISH_TEXT = (
    "the to of on at for and or my we our you your with from by is are was be it this that these those "
    "do does did can could should would will please what which who how when where all any some there their "
    "them its into about if then than so not i get show find give tell")
ENGLISH_WORDS = frozenset(_ENGLISH_TEXT.split())
_PORTUGUESE_TEXT = (
    "o os um uma uns umas da dos das em no na nos nas para pra por com que e é meu minha meus minhas "
    "seu sua você vc eu nós não se como qual quais quando onde isso isto esse essa este esta ao aos "
    "pelo pela também mais já mim todos todas mostra mostre quero preciso ver fazer ")
_GERMAN_TEXT = (
    "der das den dem des ein eine einen einem einer und ist sind mit für von zu zum zur im auf aus bei "
    "nach über unter mir mich mein meine meinen meiner ich du wir ihr sie es nicht kein keine bitte wie "
    "wo wann welche welcher welches alle auch noch dann schon hat haben gib zeig zeige mach mache ")
_SPANISH_TEXT = (
    "el la los las un una unos del y con mi mis tu tus yo nosotros sí cual cuál cuando cuándo donde dónde "
    "esto ese al hay muestra muéstrame dame quiero necesito hazme busca buscar crear")
# Each language's own small words, by its ISO 639-2 code (a request's words vote for its language).
LANGUAGE_WORDS = {"por": frozenset(_PORTUGUESE_TEXT.split()), "deu": frozenset(_GERMAN_TEXT.split()),
                  "spa": frozenset(_SPANISH_TEXT.split())}
OTHER_WORDS = frozenset().union(*LANGUAGE_WORDS.values())


def folded(word: str) -> str:
    """Lower case, accents and German ae/oe/ue/ss spellings folded: "Lösche", "loesche" -> "losche"."""
    plain = word.lower()
    if not plain.isascii():  # most words are: a dictionary's half a million headwords are folded at once
        plain = "".join(ch for ch in unicodedata.normalize("NFKD", plain) if not unicodedata.combining(ch))
    return plain.replace("ae", "a").replace("oe", "o").replace("ue", "u").replace("ß", "ss")


# Letters English text does not use: accents of the three languages, and ß.
_FOREIGN_LETTERS = frozenset("ãõçáéíóúâêôàüöäßñ¿¡")


class Kind(Enum):
    """How a request reads, for the weights of `tools.meaning_model`."""

    ENGLISH = "english"
    LATIN = "latin"  # Portuguese, German, Spanish...: Latin script, other small words
    OTHER_SCRIPT = "other script"  # Chinese, Japanese, Cyrillic...: the English model reads noise


def kind(text: str) -> Kind:
    # Addresses, paths, ids and names joined by "-./@:_" say nothing of the language ("example.com",
    # "eu-west-1", "3f2a9c1e-..."), nor do single letters ("plot y against x").
    plain = " ".join(token for token in text.split() if not _IDENTIFIER.search(token.rstrip(".,;:!?")))
    if not any(ch.isalpha() for ch in plain):
        return Kind.ENGLISH
    # Another script outweighs the Latin words: a Chinese character counts as a word (Chinese
    # requests carry English names: "给 agent 用的 GitHub OAuth provider 轮换 client secret"), a word
    # of another script as one word ("send a message to Дмитрий Иванов" is English).
    latin_words = other_script = 0
    for word in WORD.findall(plain):
        if all(ch.isascii() or "LATIN" in unicodedata.name(ch, "") for ch in word):
            latin_words += 1
        else:
            cjk = len(CJK.findall(word))
            other_script += cjk if cjk else 1
    if other_script > latin_words:
        return Kind.OTHER_SCRIPT
    words = [word for word in WORD.findall(plain) if len(word) > 1]
    english = sum(word.lower() in ENGLISH_WORDS for word in words)
    other = sum(word.lower() in OTHER_WORDS for word in words)
    # Accents count in ordinary words, not in names ("Zürich", "Pokémon").
    other += sum(1 for word in words if word[0].islower() for ch in word if ch in _FOREIGN_LETTERS)
    return Kind.ENGLISH if other <= english else Kind.LATIN


def reads_as_english(text: str) -> bool:
    return kind(text) is Kind.ENGLISH
