"""A question at the terminal (questionary), with no Ctrl-C lost around it.

A Ctrl-C that Python dropped (it landed in a finalizer: `hermes.sigint`) while the question was
being built must not leave the question on the screen: the user already said stop.
"""

from __future__ import annotations

from typing import Any, Protocol

from hermes import sigint


class Question(Protocol):
    def ask(self) -> Any: ...


def answer_to(question: Question) -> Any:
    """`question.ask()`: None when the user cancelled it, as questionary answers."""
    sigint.raise_if_dropped()
    given = question.ask()
    sigint.raise_if_dropped()
    return given
