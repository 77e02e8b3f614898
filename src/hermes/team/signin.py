"""Team users sign in to OAuth servers through the gateway, each as themselves.

A server with `auth: oauth` starts for a user only with that user's own token, never with whoever
signed in on the host. Until they have one, the gateway offers them one tool of its own,
`hermes_sign_in`, naming the servers that wait for them. Calling it asks the user's client to open
the authorization server's page (a URL-mode elicitation; a client that cannot show one gets the
address in the tool's answer). The page sends the user back to the gateway's `/oauth/callback`,
which may land on any replica: the code travels through the team database to the replica running
the sign-in, which finishes it, keeps the token sealed in the database (keyed by user, and bound
to the server's resource and issuer), and starts the server for that user.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import mcp_types as types
from anyio.abc import TaskGroup
from mcp.shared.auth import AuthorizationCodeResult

from hermes.config.model import Auth
from hermes.config.resolve import ResolvedServer, resolve_server
from hermes.errors import HermesError, leaf
from hermes.home import Home
from hermes.live.forwarding import Ask
from hermes.mcp.describe import describe_failure
from hermes.mcp.oauth.login import connect_to_authorize
from hermes.mcp.oauth.provider import HermesOAuthProvider, build_provider
from hermes.security.redact import Redactor, mask_url
from hermes.session.core import Session
from hermes.team.oauth_records import StoreTokenRecords
from hermes.team.sealing import Sealer
from hermes.team.store import TeamStore

SIGN_IN_TOOL = "hermes_sign_in"
CALLBACK_PATH = "/oauth/callback"
# What a user of the gateway does when a server needs their authorization (never `hermes mcp login`).
SIGN_IN_ADVICE = f"call the tool {SIGN_IN_TOOL} with server '{{server}}' to sign in as yourself"
SIGN_IN_WAIT = 300.0  # how long a sign-in waits for the user to come back from the page
_POLL = 0.5  # how often the replica running a sign-in looks for the code another may have received


class UserOAuth:
    """One user's OAuth on this replica: the providers their servers connect with (their own sealed
    records, never a browser), and the sign-in that gets them a token."""

    def __init__(self, home: Home, user: str, store: TeamStore, sealer: Sealer, redactor: Redactor,
                 loaded: dict[str, dict[str, Any]], callback_url: str | None) -> None:
        self._home = home
        self._user = user
        self._store = store
        self._sealer = sealer
        self._redactor = redactor
        self._loaded = loaded
        self._callback_url = callback_url

    def _provider(self, server: ResolvedServer, url: str, **handlers: Any) -> HermesOAuthProvider:
        """A provider on the user's own records, sending them back to the gateway."""
        records = StoreTokenRecords(self._store, self._sealer, self._user, server.name, self._loaded)
        return build_provider(self._home, server.name, url, server.config.oauth, redactor=self._redactor,
                              records=records, redirect_uri=self._callback_url, advice=SIGN_IN_ADVICE, **handlers)

    def provider_for(self, server: ResolvedServer, url: str, told_why: Callable[[Exception], None]) -> httpx2.Auth:
        """A non-interactive provider on the user's records (a Session's `oauth`)."""
        return self._provider(server, url, on_refused=told_why)

    async def sign_in(self, server: ResolvedServer, show: Callable[[str], Awaitable[None]]) -> str | None:
        """Run the authorization for `server` as this user; `show(url)` gets the page to open (and
        returns once the user was told). None when a token was stored; else what went wrong."""
        assert server.url is not None
        if self._callback_url is None:
            return "the gateway has no team.public_url, so an authorization server cannot send the user back to it"
        states: list[str] = []

        async def redirect(url: str) -> None:
            state = (parse_qs(urlsplit(url).query).get("state") or [""])[0]
            if not state:
                raise HermesError("the authorization URL carries no state")
            states.append(state)
            await self._store.start_signin(state, self._user, server.name)
            await show(url)

        async def callback() -> AuthorizationCodeResult:
            state = states[-1]
            with anyio.move_on_after(SIGN_IN_WAIT):
                while (result := await self._store.signin_result(state)) is None:
                    await anyio.sleep(_POLL)
                code, error = result
                if code is None:
                    # Whoever holds the page's address can send an error back: only an OAuth error
                    # code is repeated, never their words.
                    said = error if error and re.fullmatch(r"[a-z_]{1,40}", error) else "with an error"
                    raise HermesError(f"the authorization server answered {said}")
                return AuthorizationCodeResult(code=code, state=state)
            raise HermesError(f"nobody came back from the sign-in page within {SIGN_IN_WAIT:g} s")

        provider = self._provider(server, server.url, redirect=redirect, callback=callback)
        provider.file_storage.fresh_sign_in = True
        try:
            await connect_to_authorize(server.url, server.headers, server.config.protocol, provider)
        except Exception as exc:
            cause = leaf(exc)
            said = str(cause) if isinstance(cause, HermesError) else describe_failure(cause, url=mask_url(server.url))
            return self._redactor(said)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):  # done with, even when stopped
                for state in states:
                    await self._store.end_signin(state)
        return None


@dataclass
class _SignIn:
    """A sign-in under way: the page to open, once known, and how it ended."""

    url: str | None = None
    page: anyio.Event = field(default_factory=anyio.Event)
    outcome: str | None = None  # what went wrong; None when it has not ended or went well
    ended: anyio.Event = field(default_factory=anyio.Event)


class SignInTool:
    """The gateway's `hermes_sign_in` for one user (the forwarder's `ExtraTools`).

    The sign-in itself runs in the user's background task group: a client that opens the page
    waits in the call until the user is back and the server connected; one that cannot gets the
    address at once, and the server's tools appear (a tools/list_changed) once the user is back.
    """

    def __init__(self, oauth: UserOAuth, session: Session, variables: dict[str, str], background: TaskGroup) -> None:
        self._oauth = oauth
        self._session = session
        self._variables = variables
        self._background = background
        self._running: dict[str, _SignIn] = {}

    def waiting(self) -> list[str]:
        """The user's OAuth servers that are not connected (most often: no token of theirs yet)."""
        found = []
        for name, snapshot in self._session.snapshots().items():
            config = self._session.server_config(name)
            if config is not None and config.auth is Auth.OAUTH and not snapshot.connected:
                found.append(name)
        return found

    def tools(self) -> list[types.Tool]:
        waiting = self.waiting()
        if not waiting:
            return []
        return [types.Tool(
            name=SIGN_IN_TOOL,
            description="Sign in to an MCP server that needs your own authorization before its tools are offered: "
                        f"{', '.join(waiting)}. Opens the server's sign-in page for you.",
            input_schema={"type": "object", "properties": {"server": {"type": "string", "enum": waiting}},
                          "required": ["server"]})]

    def tool(self, name: str) -> types.Tool | None:
        return next(iter(self.tools()), None) if name == SIGN_IN_TOOL else None

    async def call(self, name: str, arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
        server = str(arguments.get("server", ""))
        if server not in self.waiting():
            return _answer(f"'{server[:80]}' is none of the servers waiting for your sign-in "
                           f"({', '.join(self.waiting()) or 'none'}).", error=True)
        signing = self._running.get(server)
        if signing is None or signing.ended.is_set():
            signing = self._running[server] = _SignIn()
            self._background.start_soon(self._sign_in, server, signing)
        with anyio.move_on_after(SIGN_IN_WAIT):
            async with anyio.create_task_group() as waiting:
                async def page_or_end() -> None:
                    await signing.page.wait()
                    waiting.cancel_scope.cancel()

                waiting.start_soon(page_or_end)
                await signing.ended.wait()
                waiting.cancel_scope.cancel()
        if signing.url is None or signing.ended.is_set():
            return self._result(server, signing)
        question = types.ElicitRequestURLParams(message=f"Sign in to '{server}' to use its tools here. The page "
                                                        f"signs you in: open it yourself, never send it to anyone.",
                                                url=signing.url, elicitation_id=f"hermes-{secrets.token_hex(8)}")
        answer: types.ElicitResult | types.ErrorData | None = None
        with anyio.move_on_after(SIGN_IN_WAIT):  # a client that never answers does not hold the call
            answer = await ask(server, question)
        if not isinstance(answer, types.ElicitResult) or answer.action != "accept":
            return _answer(f"Open this page to sign in to '{server}': {signing.url} - its tools are offered once "
                           f"you are back (within {SIGN_IN_WAIT / 60:g} minutes).")
        with anyio.move_on_after(SIGN_IN_WAIT):
            await signing.ended.wait()
        return self._result(server, signing)

    def _result(self, server: str, signing: _SignIn) -> types.CallToolResult:
        if not signing.ended.is_set():
            return _answer(f"The sign-in to '{server}' has not finished; call {SIGN_IN_TOOL} again once you "
                           f"are back from its page.", error=True)
        if signing.outcome is not None:
            return _answer(f"Signing in to '{server}' did not finish: {signing.outcome}.", error=True)
        tools = len(self._session.snapshots()[server].tools)
        return _answer(f"Signed in to '{server}': its {tools} tools are offered now.")

    async def _sign_in(self, server: str, signing: _SignIn) -> None:
        async def show(url: str) -> None:
            signing.url = url
            signing.page.set()

        try:
            config = self._session.server_config(server)
            assert config is not None
            outcome = await self._oauth.sign_in(resolve_server(server, config, self._variables), show)
            if outcome is None:
                snapshot = await self._session.reconnect(server)
                if not snapshot.connected:
                    outcome = f"it signed in, but the server did not connect: {snapshot.reason.rstrip('.')}"
            signing.outcome = outcome
        except Exception as exc:  # the user's servers stopping under it, say: said, never raised
            signing.outcome = str(exc) if isinstance(exc, HermesError) else describe_failure(exc)
        finally:
            signing.ended.set()


def _answer(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)
