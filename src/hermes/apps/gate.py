"""The app gate: may a declared server start on this host right now, and if not, why."""

from __future__ import annotations

from dataclasses import dataclass

from hermes.apps.availability import Availability, check_availability
from hermes.apps.declaration import LivenessKind, ServerDeclaration
from hermes.apps.host import Host
from hermes.apps.states import AppState
from hermes.apps.status import AppStatus


@dataclass(frozen=True)
class Gate:
    availability: Availability
    refusal: AppStatus | None  # None: the server may start

    @property
    def open(self) -> bool:
        return self.refusal is None


def app_gate(declaration: ServerDeclaration, host: Host, app_name: str) -> Gate:
    availability = check_availability(declaration, host)
    supported = tuple(declaration.app.blocks) if declaration.app else ()
    status = AppStatus(declaration.server, availability.state, app_name, availability.version, availability.path,
                       declaration.requires.min_version, host.os_name, supported=supported)
    if not availability.ok:
        return Gate(availability, status)
    liveness = declaration.liveness_for(host.os_name)
    if liveness is not None and liveness.kind is LivenessKind.INTERACTIVE_SESSION and not host.interactive_session():
        return Gate(availability, AppStatus(declaration.server, AppState.NO_INTERACTIVE_SESSION, app_name,
                                            availability.version, availability.path, os_name=host.os_name))
    return Gate(availability, None)
