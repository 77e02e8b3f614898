"""Real OAuth 2.1 flows on loopback: an SDK-built authorization server + protected MCP server.

The 'browser' is a script Python's webbrowser module starts through $BROWSER; it follows the
authorization redirect back to hermes's callback, or tampers with it, or only prints it.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes.home import Home
from tests.support import PYTHON, browser_env, free_port, hermes, wait_for, write_config


def _browser(tmp_path: Path, mode: str = "follow") -> dict[str, str]:
    return browser_env(tmp_path, mode)


def _browser_starts(tmp_path: Path) -> int:
    log = tmp_path / "browser.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _tokens(home: Home, name: str = "prot") -> dict[str, Any]:
    return dict(json.loads((home.tokens / f"{name}.json").read_text()))


def _configure(home: Home, url: str, **oauth: Any) -> None:
    entry: dict[str, Any] = {"url": url, "auth": "oauth"}
    if oauth:
        entry["oauth"] = oauth
    write_config(home, {"mcp_servers": {"prot": entry}})


def test_session_never_opens_a_browser_and_names_the_command(home: Home, tmp_path: Path,
                                                             oauth_server: Callable[..., str]) -> None:
    _configure(home, oauth_server())
    result = hermes("mcp", "test", "prot", home=home, env=_browser(tmp_path))
    assert result.returncode == 1
    assert "needs OAuth authorization: run `hermes mcp login prot`" in result.stdout
    call = hermes("tools", "call", "mcp__prot__whoami", "--json", home=home, env=_browser(tmp_path))
    assert "hermes mcp login prot" in json.loads(call.stdout)["reason"]
    assert _browser_starts(tmp_path) == 0


def test_login_with_dynamic_registration_then_refresh_with_rotation_without_browser(
        home: Home, tmp_path: Path, oauth_server: Callable[..., str]) -> None:
    _configure(home, oauth_server())
    login = hermes("mcp", "login", "prot", "--timeout", "30", home=home, env=_browser(tmp_path))
    assert login.returncode == 0, login.stdout + login.stderr
    assert "Authorized 'prot': token stored (2 tools offered)." in login.stdout
    assert _browser_starts(tmp_path) == 1
    assert stat.S_IMODE(home.tokens.stat().st_mode) == 0o700
    for path in home.tokens.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    client = json.loads((home.tokens / "prot.client.json").read_text())
    assert client["client_id"] and "client_secret" not in client
    first = _tokens(home)
    secrets = [first["token"]["access_token"], first["token"]["refresh_token"]]
    # A stored, valid token: the next session uses it, no browser.
    assert hermes("mcp", "test", "prot", home=home, env=_browser(tmp_path)).returncode == 0
    # Expire it: the next session refreshes first (rotating the refresh token) and saves at once.
    first["expires_at"] = time.time() - 10
    (home.tokens / "prot.json").write_text(json.dumps(first))
    test = hermes("mcp", "test", "prot", home=home, env=_browser(tmp_path))
    assert test.returncode == 0, test.stdout
    second = _tokens(home)
    assert second["token"]["refresh_token"] != first["token"]["refresh_token"]
    assert second["token"]["access_token"] != first["token"]["access_token"]
    assert second["expires_at"] > time.time()
    secrets += [second["token"]["access_token"], second["token"]["refresh_token"]]
    # The rotated-away refresh token is dead at the server; the saved one keeps working.
    second["expires_at"] = time.time() - 10
    (home.tokens / "prot.json").write_text(json.dumps(second))
    assert hermes("mcp", "test", "prot", home=home, env=_browser(tmp_path)).returncode == 0
    assert _browser_starts(tmp_path) == 1
    outputs = login.stdout + login.stderr + test.stdout + test.stderr
    outputs += hermes("mcp", "status", "--json", home=home).stdout + hermes("mcp", "list", "--json", home=home).stdout
    for path in home.root.rglob("*"):
        if path.is_file() and path.parent != home.tokens:
            outputs += path.read_text(errors="replace")
    assert not any(secret in outputs for secret in secrets)


def test_preregistered_client(home: Home, tmp_path: Path, oauth_server: Callable[..., str]) -> None:
    port = free_port()
    _configure(home, oauth_server("--client", "hermes-test:s3cret-value", "--redirect-port", str(port)),
               client_id="hermes-test", client_secret="s3cret-value", redirect_port=port)
    login = hermes("mcp", "login", "prot", "--timeout", "30", home=home, env=_browser(tmp_path))
    assert login.returncode == 0, login.stdout + login.stderr
    assert not (home.tokens / "prot.client.json").exists()  # nothing was registered dynamically
    assert "s3cret-value" not in login.stdout + login.stderr
    assert hermes("mcp", "test", "prot", home=home).returncode == 0


@pytest.mark.parametrize("method", ["basic", "post"])
def test_a_preregistered_secret_goes_where_the_metadata_says(home: Home, tmp_path: Path, method: str,
                                                            oauth_server: Callable[..., str]) -> None:
    # The server accepts the secret only one way and advertises only that way.
    port = free_port()
    url = oauth_server("--client", "hermes-test:s3cret-value", "--client-auth", method, "--redirect-port", str(port))
    _configure(home, url, client_id="hermes-test", client_secret="s3cret-value", redirect_port=port)
    login = hermes("mcp", "login", "prot", "--timeout", "30", home=home, env=_browser(tmp_path))
    assert login.returncode == 0, login.stdout + login.stderr
    # The refresh grant authenticates the same way.
    record = _tokens(home)
    record["expires_at"] = time.time() - 10
    (home.tokens / "prot.json").write_text(json.dumps(record))
    assert hermes("mcp", "test", "prot", home=home).returncode == 0
    assert _tokens(home)["token"]["access_token"] != record["token"]["access_token"]


@pytest.mark.parametrize(("advertised", "has_secret", "chosen"), [
    (None, True, "client_secret_basic"),  # RFC 8414: no list means basic
    (["client_secret_post", "client_secret_basic"], True, "client_secret_basic"),
    (["client_secret_post"], True, "client_secret_post"),
    (["none"], True, "none"),
    (["client_secret_basic"], False, "none"),
])
def test_token_endpoint_method_choice(advertised: list[str] | None, has_secret: bool, chosen: str) -> None:
    from hermes.mcp.oauth.provider import token_auth_method

    assert token_auth_method(advertised, has_secret) == chosen


def test_a_call_refused_for_scope_asks_for_one_broader_login(home: Home, tmp_path: Path,
                                                             oauth_server: Callable[..., str]) -> None:
    _configure(home, oauth_server("--step-up", "files:write"))
    assert hermes("mcp", "login", "prot", "--timeout", "30", home=home, env=_browser(tmp_path)).returncode == 0
    assert _tokens(home)["token"]["scope"] == "mcp"
    refused = hermes("tools", "call", "mcp__prot__write", "--json", home=home, env=_browser(tmp_path))
    assert refused.returncode == 1
    assert "needs a broader OAuth authorization (scope 'mcp files:write')" in refused.stdout
    assert "hermes mcp login prot" in refused.stdout and _browser_starts(tmp_path) == 1
    # The narrower token still serves what it covers.
    assert hermes("tools", "call", "mcp__prot__whoami", home=home).returncode == 0
    login = hermes("mcp", "login", "prot", "--timeout", "30", home=home, env=_browser(tmp_path))
    assert login.returncode == 0, login.stdout + login.stderr
    last_authorize = (tmp_path / "browser.log").read_text().splitlines()[-1]
    assert "scope=mcp+files%3Awrite" in last_authorize
    assert _tokens(home)["token"]["scope"] == "mcp files:write" and "wanted_scope" not in _tokens(home)
    written = hermes("tools", "call", "mcp__prot__write", home=home)
    assert written.returncode == 0 and "written" in written.stdout


def test_a_2025_03_26_server_without_resource_metadata(home: Home, tmp_path: Path,
                                                       oauth_server: Callable[..., str]) -> None:
    _configure(home, oauth_server("--legacy"))
    login = hermes("mcp", "login", "prot", "--timeout", "30", home=home, env=_browser(tmp_path))
    assert login.returncode == 0, login.stdout + login.stderr
    assert hermes("tools", "call", "mcp__prot__whoami", home=home).returncode == 0


def test_login_that_times_out_stores_nothing(home: Home, tmp_path: Path, oauth_server: Callable[..., str]) -> None:
    _configure(home, oauth_server(), redirect_port=free_port())
    result = hermes("mcp", "login", "prot", "--timeout", "2", home=home, env=_browser(tmp_path, "never"))
    assert result.returncode == 1 and "No authorization arrived within 2 s" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (home.tokens / "prot.json").exists()


def test_callback_with_a_wrong_state_is_refused(home: Home, tmp_path: Path, oauth_server: Callable[..., str]) -> None:
    _configure(home, oauth_server(), redirect_port=free_port())
    result = hermes("mcp", "login", "prot", "--timeout", "30", home=home, env=_browser(tmp_path, "tamper"))
    assert result.returncode == 1 and "State parameter mismatch" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (home.tokens / "prot.json").exists()


def test_pasted_redirect_url_completes_the_login(home: Home, tmp_path: Path, oauth_server: Callable[..., str]) -> None:
    _configure(home, oauth_server(), redirect_port=free_port())
    env = {**os.environ, "HERMES_HOME": str(home.root), **_browser(tmp_path, "print")}
    process = subprocess.Popen([PYTHON, "-m", "hermes", "mcp", "login", "prot", "--timeout", "30"], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    redirect = tmp_path / "redirect.txt"
    assert wait_for(redirect.exists, timeout=30)
    out, err = process.communicate(redirect.read_text() + "\n", timeout=60)
    assert process.returncode == 0, out + err
    assert "token stored" in out and (home.tokens / "prot.json").exists()


def test_login_refuses_servers_without_oauth(home: Home) -> None:
    write_config(home, {"mcp_servers": {"plain": {"url": "http://127.0.0.1:9/mcp"}}})
    result = hermes("mcp", "login", "plain", home=home)
    assert result.returncode == 2 and "does not use OAuth" in result.stderr
    assert hermes("mcp", "login", "nope", home=home).returncode == 3


def test_catalog_install_of_an_oauth_entry_runs_the_login(home: Home, tmp_path: Path,
                                                          oauth_server: Callable[..., str]) -> None:
    import pexpect

    url = oauth_server()
    home.mcp_catalog.mkdir()
    (home.mcp_catalog / "prot.json").write_text(json.dumps({
        "schema": 1, "name": "prot", "title": "Protected", "description": "An OAuth server.",
        "transport": {"type": "http", "url": url}, "auth": {"type": "oauth"}, "post_install": "Ready."}))
    child = pexpect.spawn(PYTHON, ["-m", "hermes", "mcp", "install", "prot"], encoding="utf-8", timeout=60,
                          env={**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm", **_browser(tmp_path)},
                          dimensions=(40, 200))
    child.expect("uses OAuth")
    child.expect("Tools to offer")
    child.send("\r")
    child.expect("Installed 'prot' with all tools")
    child.expect(pexpect.EOF)
    assert (home.tokens / "prot.json").exists() and _browser_starts(tmp_path) == 1
    states = {r["name"]: r["state"] for r in json.loads(hermes("mcp", "catalog", "--json", home=home).stdout)[
        "catalog"]}
    assert states["prot"] == "enabled"


def test_login_returns_once_authorized_whatever_stdin_is(home: Home, tmp_path: Path,
                                                         oauth_server: Callable[..., str]) -> None:
    """A real browser's launcher returns at once; stdin may be a pipe nobody writes to."""
    _configure(home, oauth_server(), redirect_port=free_port())
    env = {**os.environ, "HERMES_HOME": str(home.root), **_browser(tmp_path, "detach")}
    process = subprocess.Popen([PYTHON, "-m", "hermes", "mcp", "login", "prot", "--timeout", "120"], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Never written to, never closed: the login must not wait for a line from it.
        assert wait_for(lambda: process.poll() is not None), "login still waits after the authorization"
        assert process.returncode == 0, process.stderr.read() if process.stderr else ""
        assert (home.tokens / "prot.json").exists()
    finally:
        process.kill()
        process.communicate()


def test_login_in_a_terminal_returns_once_authorized(home: Home, tmp_path: Path,
                                                     oauth_server: Callable[..., str]) -> None:
    import pexpect

    _configure(home, oauth_server(), redirect_port=free_port())
    child = pexpect.spawn(PYTHON, ["-m", "hermes", "mcp", "login", "prot", "--timeout", "120"], encoding="utf-8",
                          timeout=60, env={**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm",
                                           **_browser(tmp_path, "detach")})
    child.expect("token stored")
    child.expect(pexpect.EOF)  # no Enter needed
    child.wait()
    child.close()
    assert child.exitstatus == 0 and (home.tokens / "prot.json").exists()


def test_a_token_is_bound_to_the_server_url_it_was_issued_for(home: Home, tmp_path: Path,
                                                              oauth_server: Callable[..., str]) -> None:
    """A server of the same name at another URL (another project's config, an edited entry) never
    receives the token: it is asked to sign in instead."""
    first = oauth_server()
    _configure(home, first, redirect_port=free_port())
    assert hermes("mcp", "login", "prot", home=home, env=_browser(tmp_path)).returncode == 0
    assert hermes("tools", "call", "mcp__prot__whoami", home=home).returncode == 0
    second = oauth_server(fresh=True)
    from hermes.mcp.oauth.storage import FileTokenStorage

    # What the provider would send: nothing for the other URL, the token for the one it came from.
    assert anyio.run(FileTokenStorage(home, "prot", second).get_tokens) is None
    assert anyio.run(FileTokenStorage(home, "prot", second).get_client_info) is None
    assert anyio.run(FileTokenStorage(home, "prot", first).get_tokens) is not None
    _configure(home, second, redirect_port=free_port())  # same name, another server
    moved = hermes("tools", "call", "mcp__prot__whoami", home=home)
    assert moved.returncode != 0 and "hermes mcp login prot" in moved.stdout + moved.stderr
    _configure(home, first + "/", redirect_port=free_port())  # the first URL again, spelled with a slash
    assert hermes("tools", "call", "mcp__prot__whoami", home=home).returncode == 0


def test_token_records_name_their_resource() -> None:
    from hermes.mcp.oauth.storage import resource_of

    assert resource_of("HTTPS://Example.COM:8443/mcp/?x=1#f") == "https://example.com:8443/mcp"
    assert resource_of("https://example.com") == resource_of("https://example.com/")
    assert resource_of("https://example.com/a") != resource_of("https://example.com/b")


def test_an_unreachable_oauth_server_is_one_sentence_without_asyncio_noise(home: Home) -> None:
    from tests.support import hermes_process

    _configure(home, f"http://127.0.0.1:{free_port()}/mcp")
    # A process of its own, as a user runs it: the SDK's auth flow is finalised by the garbage
    # collector in another task, and asyncio reports that on stderr unless hermes routes it.
    tested = hermes_process("mcp", "test", "prot", home=home)
    out = tested.stdout + tested.stderr
    assert tested.returncode == 1 and "nothing answered at" in out
    assert "Task exception was never retrieved" not in out and "Traceback" not in out, out


def test_a_client_registration_belongs_to_its_authorization_server(home: Home) -> None:
    """SEP-2352: the same resource behind another issuer gets a registration of its own."""
    from types import SimpleNamespace

    from mcp.shared.auth import OAuthClientInformationFull

    from hermes.mcp.oauth.storage import FileTokenStorage

    url = "https://mcp.example.com/mcp"
    storage = FileTokenStorage(home, "prot", url)
    storage.context = SimpleNamespace(oauth_metadata=SimpleNamespace(issuer="https://auth.one.example/"))
    anyio.run(storage.set_client_info, OAuthClientInformationFull(client_id="one", redirect_uris=["http://127.0.0.1:1/cb"]))
    again = FileTokenStorage(home, "prot", url)
    again.context = SimpleNamespace(oauth_metadata=SimpleNamespace(issuer="https://auth.one.example/"))
    assert anyio.run(again.get_client_info).client_id == "one"
    moved = FileTokenStorage(home, "prot", url)
    moved.context = SimpleNamespace(oauth_metadata=SimpleNamespace(issuer="https://auth.two.example/"))
    assert anyio.run(moved.get_client_info) is None


def test_a_token_is_presented_only_to_the_issuer_that_gave_it(home: Home) -> None:
    """SEP-2352: after the resource moves to another authorization server, the old token stays home."""
    from types import SimpleNamespace

    from mcp.shared.auth import OAuthMetadata, OAuthToken

    from hermes.mcp.oauth.storage import FileTokenStorage

    url = "https://mcp.example.com/mcp"
    one = OAuthMetadata(issuer="https://auth.one.example/", authorization_endpoint="https://auth.one.example/a",
                        token_endpoint="https://auth.one.example/t")
    storage = FileTokenStorage(home, "prot", url)
    storage.context = SimpleNamespace(oauth_metadata=one)
    anyio.run(storage.set_tokens, OAuthToken(access_token="canary-token-one", token_type="Bearer"))
    for issuer, kept in ((None, True), ("https://auth.one.example/", True), ("https://auth.two.example/", False)):
        later = FileTokenStorage(home, "prot", url)
        later.context = SimpleNamespace(oauth_metadata=SimpleNamespace(issuer=issuer) if issuer else None)
        token = anyio.run(later.get_tokens)
        assert (token is not None and token.access_token == "canary-token-one") is kept, (issuer, token)


def test_login_to_a_server_that_is_not_there_says_so_in_words(home: Home, tmp_path: Path) -> None:
    _configure(home, f"http://127.0.0.1:{free_port()}/mcp", redirect_port=free_port())
    result = hermes("mcp", "login", "prot", "--timeout", "5", home=home, env=_browser(tmp_path, "never"))
    assert result.returncode == 1 and "Authorization for 'prot' failed: nothing answered at http://127.0.0.1:" \
        in result.stderr
    assert "ConnectError" not in result.stderr and "Errno" not in result.stderr
