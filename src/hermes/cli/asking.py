"""A question at the terminal (questionary), with no Ctrl-C lost around it.

A Ctrl-C that Python dropped (it landed in a finalizer: `hermes.sigint`) while the question was
being built must not leave the question on the screen: the user already said stop. And the garbage
of the steps before (an event loop's, a probe's) is collected before the question is drawn, while a
Ctrl-C is only written down: its finalizers would otherwise run while the prompt starts, and drop
one there. A full collection costs about 50 ms, nothing beside a person reading a question.
"""

from __future__ import annotations

import gc
from typing import Any, Protocol

from hermes import sigint


class Question(Protocol):
    def ask(self) -> Any: ...


def answer_to(question: Question) -> Any:
    """`question.ask()`: None when the user cancelled it, as questionary answers."""
    with sigint.held():  # a Ctrl-C meanwhile acts right after, here
        gc.collect()
    sigint.raise_if_dropped()
    given = question.ask()
    sigint.raise_if_dropped()
    return given
