"""The restart policy as a pure decision, on a clock the test moves (no process, no sleep)."""

from __future__ import annotations

import random

from hermes.apps.liveness import AppFacts, Finding
from hermes.mcp.outcomes import AppGone, EndpointChanged, Exited, Failed, RestartPolicy, Stopped
from hermes.mcp.restarts import Decision, History, Step, decide, healthy
from hermes.mcp.states import ConnectionState

POLICY = RestartPolicy(attempts=2, base_delay=1.0, max_delay=8.0, healthy_after=60.0)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0


def _crash(history: History, clock: Clock, connected_at: float | None, served: bool = False) -> Decision:
    was_healthy = healthy(served_call=served, connected_at=connected_at, now=clock.now, policy=POLICY)
    return decide(Exited("exit code 1"), history, was_healthy=was_healthy, policy=POLICY, rng=random.Random(7))


def test_crashes_in_a_row_back_off_doubling_then_park_and_a_healthy_period_forgives() -> None:
    clock, history, delays = Clock(), History(ever_connected=True), []
    for _ in range(POLICY.attempts):
        decision = _crash(history, clock, connected_at=clock.now)
        assert decision.step is Step.RESTART and decision.state is ConnectionState.RESTARTING
        assert decision.delay is not None
        delays.append(decision.delay)
        history = decision.history
        clock.now += 5  # up for five seconds each time: not healthy
    assert 0.5 <= delays[0] <= 1.0 and 1.0 <= delays[1] <= 2.0  # doubling, jittered to half
    parked = _crash(history, clock, connected_at=clock.now - 5)
    assert parked.step is Step.WAIT_FOR_REVIVAL and parked.state is ConnectionState.PARKED and parked.delay is None
    assert "crashed 3 times in a row" in parked.reason and parked.history.failures_in_row == 0
    # Up a minute since its handshake: its budget comes back before the crash is counted.
    clock.now += 61
    forgiven = _crash(history, clock, connected_at=clock.now - 61)
    assert forgiven.step is Step.RESTART and forgiven.history.failures_in_row == 1
    served = _crash(history, clock, connected_at=clock.now, served=True)
    assert served.history.failures_in_row == 1  # a served call counts as healthy too


def test_a_server_that_never_connected_waits_for_a_revive_and_restarts_are_counted() -> None:
    failed = decide(Failed("command 'x' was not found"), History(), was_healthy=False, policy=POLICY,
                    rng=random.Random(1))
    assert failed.step is Step.WAIT_FOR_REVIVAL and failed.state is ConnectionState.FAILED
    assert failed.reason == "command 'x' was not found" and failed.history.restarts == 0
    restarted = decide(Exited("gone"), History(0, True, 4), was_healthy=False, policy=POLICY, rng=random.Random(1))
    assert restarted.history.restarts == 5


def test_the_app_is_the_reason_waits_for_the_app_and_an_endpoint_change_reconnects_for_free() -> None:
    facts = AppFacts(Finding.FILE_MISSING, "Blender is not running", app_running=False)
    gone = decide(AppGone(facts), History(2, True, 3), was_healthy=False, policy=POLICY, rng=random.Random(1))
    assert gone.step is Step.WAIT_FOR_APP and gone.state is ConnectionState.FAILED
    assert gone.reason == "Blender is not running" and gone.app == facts and gone.delay == POLICY.max_delay
    assert gone.history == History(0, True, 3)
    moved = decide(EndpointChanged(), History(2, True, 3), was_healthy=False, policy=POLICY, rng=random.Random(1))
    assert moved.step is Step.RECONNECT and moved.history == History(2, True, 4) and moved.state is None
    assert decide(Stopped(), History(), was_healthy=False, policy=POLICY, rng=random.Random(1)).step is Step.STOP
