"""Snowball stems of words, in English and in the users' other languages.

Safe to ask from several threads at once: searches run in worker threads, and a team gateway holds
many sessions in one process, while a Snowball stemmer keeps its working state on the instance
(two threads in one stemmer get each other's stems). The package is imported at the first stem:
it loads all its languages' stemmers at once, a cost no process that never searches should pay.
"""

from __future__ import annotations

import threading
from functools import cache, lru_cache
from typing import Any


@cache
def _stemmer(language: str) -> tuple[Any, threading.Lock]:
    import snowballstemmer

    return snowballstemmer.stemmer(language), threading.Lock()


@lru_cache(maxsize=65536)
def stem(language: str, word: str) -> str:
    """`word`'s stem as Snowball's `language` ("english", "portuguese", "spanish", "german") cuts it."""
    stemmer, lock = _stemmer(language)
    with lock:
        return str(stemmer.stemWord(word))
