"""A question is never put to a user who already pressed Ctrl-C.

The garbage of the steps before a question (an event loop's, a probe's) may hold finalizers; one
that runs while a Ctrl-C comes drops it (Python prints and forgets a KeyboardInterrupt raised in a
finalizer). Collected before the question, while the signal is only written down, the Ctrl-C acts
there instead, and no question waits for an answer after it. Run as a small program: signal
handlers belong to a process's main thread.
"""

from __future__ import annotations

import subprocess
import textwrap

from tests.support import PYTHON

PROGRAM = textwrap.dedent("""
    import signal
    from hermes import sigint
    from hermes.cli.asking import answer_to

    signal.signal(signal.SIGINT, signal.default_int_handler)
    sigint.watch()

    class Left:  # garbage from an earlier step, in a cycle: only the collector frees it
        def __del__(self):
            signal.raise_signal(signal.SIGINT)  # the Ctrl-C comes while it is finalized

    left = Left()
    left.itself = left
    del left

    class Question:
        def ask(self):
            print("asked")
            return "an answer"

    try:
        print(answer_to(Question()))
    except KeyboardInterrupt:
        print("interrupted before the question")
""")


def test_a_ctrl_c_in_the_earlier_steps_garbage_stops_the_question() -> None:
    done = subprocess.run([PYTHON, "-c", PROGRAM], capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.splitlines() == ["interrupted before the question"], done.stderr


def test_without_a_ctrl_c_the_question_is_asked() -> None:
    program = PROGRAM.replace("signal.raise_signal(signal.SIGINT)", "pass")
    done = subprocess.run([PYTHON, "-c", program], capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.splitlines() == ["asked", "an answer"], done.stderr
