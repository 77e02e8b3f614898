"""A Ctrl-C is never lost between a command's steps and its event loop.

Python's own KeyboardInterrupt fires at whatever line runs when the signal comes; one that lands
in a weak reference's callback (the event loop's sets of tasks are weak) is printed and dropped,
and the command went on as if no key had been pressed (seen in CI: `hermes mcp install` kept
waiting on a server it had been told to stop probing). Each test runs a small program in its own
process, since signal handlers belong to a process's main thread.
"""

from __future__ import annotations

import signal
import subprocess
import textwrap
from pathlib import Path

from tests.support import PYTHON

# A signal arrives while a weak reference's callback runs, just before the event loop is built.
PROGRAM = textwrap.dedent("""
    import signal, sys, weakref
    import anyio
    from hermes import interrupts

    # As at a terminal (a test runner's worker may have been started with SIGINT ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    real_run = anyio.run

    def run_after_a_signal(*args, **kwargs):
        class Thing:
            pass
        thing = Thing()
        keep = weakref.ref(thing, lambda _ref: signal.raise_signal(signal.{signal}))
        del thing
        return real_run(*args, **kwargs)

    anyio.run = run_after_a_signal

    async def work():
        await anyio.sleep(0)
        return "finished"

    try:
        print(interrupts.run(work{stop}))
    except interrupts.Interrupted as interrupted:
        print("interrupted", interrupted.exit_code)
    # Python's own handlers are back once the command's async work is over.
    print(signal.getsignal(signal.SIGINT) is signal.default_int_handler,
          signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
""")


def _ran(program: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-c", program], capture_output=True, text=True, timeout=120, check=False)


def _run(signal_name: str, stop: str = "") -> list[str]:
    done = _ran(PROGRAM.format(signal=signal_name, stop=stop))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    return done.stdout.splitlines()


def test_a_ctrl_c_before_the_loop_listens_interrupts_the_work() -> None:
    assert _run("SIGINT") == ["interrupted 130", "True True"]


def test_a_sigterm_before_the_loop_listens_interrupts_the_work() -> None:
    assert _run("SIGTERM") == ["interrupted 143", "True True"]


def test_a_server_told_to_stop_before_its_loop_listens_ends_normally() -> None:
    assert _run("SIGTERM", ", stop_on_signal=True") == ["None", "True True"]


def test_without_a_signal_the_work_finishes() -> None:
    done = _ran(PROGRAM.format(signal="SIGINT", stop="").replace("anyio.run = run_after_a_signal", ""))
    assert done.stdout.splitlines() == ["finished", "True True"], done.stderr


# The user asks to stop once, and the loop's close then waits on a thread nobody can cancel (a name
# lookup in the loop's pool); their second signal must get through as it would without hermes.
STUCK_CLOSE = textwrap.dedent("""
    import asyncio, os, signal, threading
    import anyio
    from hermes import interrupts

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    closing, freed = threading.Event(), threading.Event()
    real_shutdown = asyncio.BaseEventLoop.shutdown_default_executor

    async def shutdown_default_executor(self, *args):
        closing.set()
        return await real_shutdown(self, *args)

    asyncio.BaseEventLoop.shutdown_default_executor = shutdown_default_executor

    def lookup():
        closing.wait()
        os.kill(os.getpid(), signal.{second})
        freed.wait()

    async def work():
        asyncio.get_running_loop().run_in_executor(None, lookup)
        signal.raise_signal(signal.SIGINT)  # the first Ctrl-C, which the work's own stop handles
        await anyio.sleep_forever()

    try:
        interrupts.run(work)
    except KeyboardInterrupt:
        print("the second Ctrl-C got through")
    finally:
        freed.set()
""")


def test_a_second_ctrl_c_while_the_loop_s_close_is_stuck_gets_through() -> None:
    done = _ran(STUCK_CLOSE.format(second="SIGINT"))
    assert done.stdout.splitlines() == ["the second Ctrl-C got through"], done.stderr


def test_a_sigterm_while_the_loop_s_close_is_stuck_ends_the_process() -> None:
    done = _ran(STUCK_CLOSE.format(second="SIGTERM"))
    assert done.returncode == -signal.SIGTERM, (done.returncode, done.stderr)


# The end of the programs below: work that would finish, run under the signal policy.
RUN_THE_WORK = """
    async def work():{before}
        await anyio.sleep(0)
        return "finished"

    try:
        print(interrupts.run(work))
    except interrupts.Interrupted as interrupted:
        print("interrupted", interrupted.exit_code)
"""


# A Ctrl-C in the command's synchronous steps (loading its probe, say) that lands in a weak
# reference's callback: Python drops the KeyboardInterrupt, and the command used to go on into its
# event loop as if no key had been pressed (seen in CI: `hermes mcp install` kept probing).
DROPPED_BEFORE_THE_LOOP = textwrap.dedent("""
    import signal, sys, weakref
    import anyio
    from hermes import interrupts, sigint
    from hermes.cli.main import _quiet_unraisable

    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.unraisablehook = _quiet_unraisable  # as the command line sets it
    {watch}

    class Thing:
        pass
    thing = Thing()
    keep = weakref.ref(thing, lambda _ref: signal.raise_signal(signal.SIGINT))
    del thing
    print("went on")

""" + RUN_THE_WORK.format(before="") + """
    print(signal.getsignal(signal.SIGINT) is not signal.default_int_handler)
""")


def test_a_ctrl_c_dropped_before_the_loop_interrupts_the_work() -> None:
    done = _ran(DROPPED_BEFORE_THE_LOOP.format(watch="sigint.watch()"))
    assert done.stdout.splitlines() == ["went on", "interrupted 130", "True"], done.stderr
    assert "KeyboardInterrupt" not in done.stderr, done.stderr


def test_without_hermes_s_handler_python_drops_it() -> None:
    # What the test above guards against, shown on Python's own handler.
    done = _ran(DROPPED_BEFORE_THE_LOOP.format(watch=""))
    assert done.stdout.splitlines() == ["went on", "finished", "False"], done.stderr
    assert "KeyboardInterrupt" in done.stderr


# Garbage the loop left behind, whose finalizer meets a Ctrl-C: collected after the loop under
# Python's raising handler, the KeyboardInterrupt was dropped and the command went on (seen in a
# helper's attack: the install's checklist then waited for an answer after the Ctrl-C).
GARBAGE_AFTER_THE_LOOP = textwrap.dedent("""
    import signal
    import anyio
    from hermes import interrupts, sigint

    signal.signal(signal.SIGINT, signal.default_int_handler)
    sigint.watch()

    class Cycle:
        def __del__(self):
            signal.raise_signal(signal.SIGINT)

""" + RUN_THE_WORK.format(before="""
        left = Cycle()
        left.itself = left  # only the collector frees it"""))


def test_a_ctrl_c_in_the_loop_s_garbage_interrupts_the_command() -> None:
    done = _ran(GARBAGE_AFTER_THE_LOOP)
    assert done.stdout.splitlines() == ["interrupted 130"], done.stderr


# Putting files back after a Ctrl-C must not be cut short by another one (or by SIGTERM).
UNDO_INTERRUPTED = textwrap.dedent("""
    import signal, sys
    from pathlib import Path
    from hermes import files, sigint
    from hermes.config.transaction import edit_transaction
    from hermes.home import Home

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sigint.watch()
    home = Home(Path(sys.argv[1]))
    home.ensure()
    home.config.write_text("kept: 1\\n")
    home.dotenv.write_text("KEPT=1\\n")
    real_write = files.atomic_write

    def write_after_a_signal(path, text, **kwargs):
        signal.raise_signal(signal.{signal})  # pressed again while the undo runs
        return real_write(path, text, **kwargs)

    try:
        with edit_transaction(home):
            home.config.write_text("changed: 1\\n")
            home.dotenv.write_text("SECRET=canary\\n")
            files.atomic_write = write_after_a_signal
            raise KeyboardInterrupt  # the first Ctrl-C
    except KeyboardInterrupt as stop:
        print(type(stop).__name__, sigint.exit_code(stop))
    print(home.config.read_text() == "kept: 1\\n", home.dotenv.read_text() == "KEPT=1\\n")
""")


def test_a_second_ctrl_c_or_a_sigterm_waits_for_the_undo(tmp_path: Path) -> None:
    for signal_name, stopped in (("SIGINT", "KeyboardInterrupt 130"), ("SIGTERM", "Terminated 143")):
        done = subprocess.run([PYTHON, "-c", UNDO_INTERRUPTED.format(signal=signal_name), str(tmp_path / signal_name)],
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.stdout.splitlines() == [stopped, "True True"], (signal_name, done.stderr)
