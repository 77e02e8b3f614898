"""The curated catalog in the dashboard, and its three-step install.

1. Settings: the entry's settings as a form (secrets as password fields; they go to .env), or,
   for a remote server, the OAuth sign-in, which opens the user's browser as `hermes mcp login`
   does and waits for the loopback callback.
2. Probe: the server is started once to list its tools; a server that does not start is kept
   disabled to fix later, with the reason, or nothing is kept (the user's choice on the form).
3. Checklist: the server's page, with every tool checked (what the entry advises against
   unchecked), to narrow with the same tool checklist as any other server.

The install is `hermes mcp install`'s own (`hermes.catalog.install.install_entry`), run off the
event loop as one transaction: config.yaml and .env change together or not at all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from urllib.parse import quote

import anyio
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from hermes.dashboard.forms import Notes, read_form
from hermes.errors import HermesError
from hermes.home import Home
from hermes.session.core import Session
from hermes.session.status import ProbeReport

Render = Callable[..., HTMLResponse]


class CatalogPages:
    def __init__(self, session: Session, notes: Notes, render: Render, reload: Callable[[], Awaitable[None]]) -> None:
        self.session = session
        self.notes = notes
        self.render = render
        self.reload = reload

    def routes(self) -> list[Route]:
        return [Route("/catalog", self.catalog), Route("/catalog/{name}", self.entry),
                Route("/catalog/{name}", self.install, methods=["POST"])]

    async def catalog(self, request: Request) -> Response:
        from hermes.catalog.install import catalog_states

        rows, _, warnings = await anyio.to_thread.run_sync(catalog_states, self.session.home)
        return self.render("catalog.html", request, rows=rows, warnings=warnings, active="catalog")

    async def entry(self, request: Request) -> Response:
        from hermes.catalog.manifest import load_entries

        entries, _ = await anyio.to_thread.run_sync(load_entries, self.session.home.mcp_catalog)
        entry = entries.get(request.path_params["name"])
        if entry is None:
            return self.render("missing.html", request, what=f"The catalog has no entry named "
                                                             f"{request.path_params['name']}.", status_code=404)
        return self.render("catalog_entry.html", request, entry=entry, active="catalog")

    async def install(self, request: Request) -> Response:
        from hermes.catalog.install import install_entry
        from hermes.catalog.manifest import load_entries
        from hermes.session.probe import probe

        name = request.path_params["name"]
        form = await read_form(request)
        if isinstance(form, Response):
            return form
        entries, _ = await anyio.to_thread.run_sync(load_entries, self.session.home.mcp_catalog)
        entry = entries.get(name)
        if entry is None:
            return self.render("missing.html", request, what=f"The catalog has no entry named {name}.",
                               status_code=404)
        given = {s.name: str(form.get(s.name, "")).strip() for s in entry.settings
                 if str(form.get(s.name, "")).strip()}
        keep_failing = form.get("keep_failing") == "yes"

        def everything_checked(tools: list[tuple[str, str]], checked: set[str], _cautions: set[str]) -> list[str]:
            return sorted(checked)  # what the terminal's checklist starts with; the server page narrows it

        def probe_on_the_loop(home: Home, server: str) -> ProbeReport:
            # The install runs in a worker thread; the probe's processes belong to the event loop.
            return anyio.from_thread.run(probe, home, server)

        def sign_in(home: Home, server: str) -> None:
            from hermes.mcp.oauth.login import login

            anyio.from_thread.run(partial(login, self.session.home, server, say=lambda _text: None))

        try:
            outcome = await anyio.to_thread.run_sync(partial(
                install_entry, self.session.home, name, given=given, ask=None, choose=everything_checked,
                confirm_save_disabled=lambda _reason: keep_failing, probe=probe_on_the_loop, login=sign_in))
        except HermesError as exc:
            key = self.notes.add(False, self.session.redactor(str(exc)))
            return RedirectResponse(f"/catalog/{quote(name, safe='')}?note={key}", status_code=303)
        await self.reload()
        if not outcome.saved:
            key = self.notes.add(False, self.session.redactor(
                f"Nothing was installed; config.yaml and .env are as they were. Reason: {outcome.failure}"))
            return RedirectResponse(f"/catalog/{quote(name, safe='')}?note={key}", status_code=303)
        if not outcome.enabled:
            said = f"Saved '{name}' disabled: {outcome.failure}. Fix the cause, then test and enable it."
        else:
            said = " ".join([f"Installed '{name}' with {outcome.selection}; narrow them below.", outcome.post_install,
                             *outcome.warnings]).strip()
        key = self.notes.add(outcome.enabled, self.session.redactor(said))
        return RedirectResponse(f"/servers/{quote(name, safe='')}?note={key}", status_code=303)
