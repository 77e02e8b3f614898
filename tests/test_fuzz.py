"""Every reader of user and plugin files answers hostile input with a HermesError, never a traceback.

Two hundred inputs per reader on every run; `bench/fuzz_readers.py` runs 20,000 each.
"""

from __future__ import annotations

import pytest

from tests.fuzzing import READERS, run


@pytest.mark.parametrize("reader", sorted(READERS))
def test_no_exception_escapes_a_reader(reader: str) -> None:
    escapes = run(reader, 200, seed_value=1)
    assert escapes == [], escapes[:5]
