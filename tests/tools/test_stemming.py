"""Snowball stems asked from several threads at once (searches run in worker threads)."""

from __future__ import annotations

import itertools
import sys
from concurrent.futures import ThreadPoolExecutor

import snowballstemmer

from hermes.tools import stemming


def test_stems_asked_from_many_threads_at_once_are_each_word_s_own() -> None:
    # A Snowball stemmer keeps its working state on the instance: unguarded, one thread's word
    # ends up in another's stem.
    words = ["".join(parts) for parts in itertools.product(
        ("apag", "busc", "envi", "compr", "arquiv", "program", "atualiz", "cancel", "reserv", "calcul"),
        ("ando", "amos", "aram", "ou", "emos", "endo", "asse", "ariam", "ação", "ações", "ado", "adas"),
        ("", "s", "mente"))]
    reference = snowballstemmer.stemmer("portuguese")
    expected = {word: reference.stemWord(word) for word in words}
    stemming.stem.cache_clear()
    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as they can
    try:
        with ThreadPoolExecutor(8) as pool:
            found = dict(zip(words, pool.map(lambda word: stemming.stem("portuguese", word), words), strict=True))
    finally:
        sys.setswitchinterval(switching)
    assert found == expected
