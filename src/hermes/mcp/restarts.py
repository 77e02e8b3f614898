"""What a supervisor does after an attempt ends: a pure decision from how the attempt ended and
what came before, so the restart policy is tested on a clock of the test's own (no process, no sleep).

    Stopped                          -> stop
    EndpointChanged (the app moved)  -> reconnect at once, no budget spent
    the app is why (AppGone, Failed with app facts) -> failed, wait for the app (looked at again
                                        every `max_delay`)
    never connected                  -> failed, wait for a revive
    crashed more than `attempts` times in a row -> parked, wait for a revive
    otherwise                        -> restarting after a doubling, jittered delay

A server that stayed up `healthy_after` seconds after its handshake, or served a call, gets its
budget back before its crash is counted.
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass

from hermes.apps.liveness import AppFacts
from hermes.mcp.outcomes import AppGone, Ended, EndpointChanged, Exited, Failed, RestartPolicy, Stopped
from hermes.mcp.states import ConnectionState


class Step(enum.Enum):
    STOP = "stop"
    RECONNECT = "reconnect"
    WAIT_FOR_APP = "wait for the app"
    WAIT_FOR_REVIVAL = "wait for a revive"
    RESTART = "restart"


@dataclass(frozen=True)
class History:
    """What the supervisor carries from one attempt to the next."""

    failures_in_row: int = 0
    ever_connected: bool = False
    restarts: int = 0


@dataclass(frozen=True)
class Decision:
    step: Step
    history: History  # to carry into the next turn
    state: ConnectionState | None = None  # to publish (None: the state stays)
    reason: str = ""
    delay: float | None = None  # the longest wait before the next attempt; None: until revived or stopped
    app: AppFacts | None = None


def healthy(*, served_call: bool, connected_at: float | None, now: float, policy: RestartPolicy) -> bool:
    """Stayed up `healthy_after` seconds, counted from the handshake (not the spawn), or served a call."""
    return served_call or (connected_at is not None and now - connected_at >= policy.healthy_after)


def decide(outcome: Ended, history: History, *, was_healthy: bool, policy: RestartPolicy,
           rng: random.Random) -> Decision:
    if isinstance(outcome, Stopped):
        return Decision(Step.STOP, history, ConnectionState.STOPPED)
    if isinstance(outcome, EndpointChanged):
        return Decision(Step.RECONNECT, History(history.failures_in_row, history.ever_connected, history.restarts + 1))
    if isinstance(outcome, AppGone) or (isinstance(outcome, Failed) and outcome.app is not None):
        facts = outcome.facts if isinstance(outcome, AppGone) else outcome.app
        reason = outcome.facts.detail if isinstance(outcome, AppGone) else outcome.reason
        return Decision(Step.WAIT_FOR_APP, History(0, history.ever_connected, history.restarts),
                        ConnectionState.FAILED, reason, policy.max_delay, facts)
    connected = isinstance(outcome, Exited)
    ever_connected = history.ever_connected or connected
    failures = (0 if connected and was_healthy else history.failures_in_row) + 1
    if not ever_connected:
        return Decision(Step.WAIT_FOR_REVIVAL, History(0, False, history.restarts), ConnectionState.FAILED,
                        outcome.reason)
    if failures > policy.attempts:
        return Decision(Step.WAIT_FOR_REVIVAL, History(0, True, history.restarts), ConnectionState.PARKED,
                        f"crashed {failures} times in a row; parked until the next reload (last: {outcome.reason})")
    return Decision(Step.RESTART, History(failures, True, history.restarts + 1), ConnectionState.RESTARTING,
                    outcome.reason, policy.delay(failures, rng))
