"""The catalog's three-step install from the dashboard: settings, one start, the checklist."""

from __future__ import annotations

import json
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes.home import Home
from tests.dashboard.conftest import FAST, dashboard
from tests.support import browser_env

pytestmark = pytest.mark.anyio
CANARY = "sk-catalog-canary-0123456789abcdef"


def local_entry(home: Home, command: str = sys.executable) -> None:
    home.mcp_catalog.mkdir(parents=True, exist_ok=True)
    entry = {"schema": 1, "name": "quick", "title": "Quick", "description": "The <b>quick</b> test server.",
             "transport": {"type": "stdio", "command": command, "args": [str(FAST)],
                           "env": {"FAKE_API_KEY": "${QUICK_KEY}"}},
             "auth": {"type": "api_key", "settings": [{"name": "QUICK_KEY", "prompt": "API key", "secret": True}]},
             "tools": {"default_excluded": ["crash"]}, "post_install": "Quick is ready."}
    (home.mcp_catalog / "quick.json").write_text(json.dumps(entry))


async def test_installing_from_the_catalog_keeps_the_secret_in_dotenv_and_lands_on_the_checklist(home: Home) -> None:
    local_entry(home)
    async with dashboard(home) as running:
        catalog = (await running.client.get("/catalog")).text
        assert 'href="/catalog/quick">Install' in catalog and "The &lt;b&gt;quick&lt;/b&gt; test server." in catalog
        form = (await running.client.get("/catalog/quick")).text
        assert 'name="QUICK_KEY" type="password"' in form and "advises against crash" in form

        missing = await running.post("/catalog/quick", {"keep_failing": "yes"})
        assert "needs QUICK_KEY" in missing.text and not home.config.exists()

        installed = await running.post("/catalog/quick", {"QUICK_KEY": CANARY, "keep_failing": "yes"})
        assert "Installed &#39;quick&#39; with all tools" in installed.text and "Quick is ready." in installed.text
        assert 'name="tool" value="crash"' in installed.text  # the checklist, every tool checked
        assert CANARY not in installed.text and CANARY not in home.config.read_text()
        assert "${QUICK_KEY}" in home.config.read_text() and f"QUICK_KEY={CANARY}" in home.dotenv.read_text()
        assert stat.S_IMODE(home.dotenv.stat().st_mode) == 0o600
        menu = (await running.client.get("/fragment/menu")).text
        assert 'data-server="quick"' in menu and "14 of 14 given to the model" in menu  # the running session has it


async def test_a_server_that_does_not_start_is_kept_disabled_or_not_at_all_as_the_user_chose(home: Home) -> None:
    local_entry(home, command="/nonexistent/program")
    async with dashboard(home) as running:
        dropped = await running.post("/catalog/quick", {"QUICK_KEY": CANARY})
        assert "Nothing was installed" in dropped.text and not home.config.exists()
        assert not home.dotenv.exists() or CANARY not in home.dotenv.read_text()
        kept = await running.post("/catalog/quick", {"QUICK_KEY": CANARY, "keep_failing": "yes"})
        assert "Saved &#39;quick&#39; disabled" in kept.text and "enabled: false" in home.config.read_text()


async def test_a_remote_entry_signs_in_with_oauth_in_the_users_browser_then_lists_its_tools(
        home: Home, tmp_path: Path, oauth_server: Callable[..., str], monkeypatch: pytest.MonkeyPatch) -> None:
    home.mcp_catalog.mkdir(parents=True, exist_ok=True)
    (home.mcp_catalog / "remote.json").write_text(json.dumps({
        "schema": 1, "name": "remote", "title": "Remote", "description": "An OAuth-protected server.",
        "transport": {"type": "http", "url": oauth_server()}, "auth": {"type": "oauth"},
        "tools": {"default_excluded": []}, "post_install": "Signed in."}))
    for key, value in browser_env(tmp_path).items():  # the user's browser follows the sign-in and comes back
        monkeypatch.setenv(key, value)
    async with dashboard(home) as running:
        form = (await running.client.get("/catalog/remote")).text
        assert "you sign in with your browser" in form
        installed = await running.post("/catalog/remote", {"keep_failing": "yes"})
        assert "Installed &#39;remote&#39;" in installed.text, installed.text
        assert home.has_tokens("remote") and len((tmp_path / "browser.log").read_text().splitlines()) == 1
        assert 'name="tool" value=' in installed.text
