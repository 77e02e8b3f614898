"""`hermes team …` as an administrator uses it: clear answers, secrets never echoed, bad input refused."""

from __future__ import annotations

import json

from hermes.home import Home
from hermes.team.sealing import new_key
from tests.support import hermes, write_config

SECRET = "xoxb-CANARYteamCommands-0123456789"


def _team_config(home: Home, **settings: object) -> None:
    write_config(home, {"team": {"secret_key": "${HERMES_TEAM_KEY}", **settings},
                        "mcp_servers": {"github": {"url": "https://api.githubcopilot.com/mcp/"}}})


def test_users_policy_and_credentials_round_trip_without_showing_a_secret(home: Home) -> None:
    _team_config(home)
    env = {"HERMES_TEAM_KEY": new_key()}
    added = hermes("team", "user", "add", "alice", "--group", "dev", home=home, env=env)
    assert added.returncode == 0 and "alice" in added.stdout
    key = added.stdout.strip().splitlines()[-1]
    assert key.startswith("hmk_")
    assert hermes("team", "user", "add", "bob", "--no-key", "--subject", "bob@example.org", home=home,
                  env=env).returncode == 0
    users = json.loads(hermes("team", "user", "list", "--json", home=home, env=env).stdout)
    assert users == [{"name": "alice", "groups": ["dev"], "subject": None},
                     {"name": "bob", "groups": [], "subject": "bob@example.org"}]

    assert hermes("team", "policy", "set", "group:dev", "--servers", "github", "--deny", "mcp__github__delete_*",
                  "--calls-per-minute", "30", home=home, env=env).returncode == 0
    moved = hermes("team", "user", "groups", "alice", "--group", "dev", "--group", "ops", home=home, env=env)
    assert moved.returncode == 0 and "dev, ops" in moved.stdout
    assert hermes("team", "user", "groups", "nobody", home=home, env=env).returncode == 2
    typo = hermes("team", "policy", "set", "group:ops", "--servers", "gihtub", home=home, env=env)
    assert typo.returncode == 0 and "'gihtub' matches no server" in typo.stderr
    whois = json.loads(hermes("team", "whois", "alice", "--json", home=home, env=env).stdout)
    assert whois["servers"] == ["github", "gihtub"] and whois["deny"] == ["mcp__github__delete_*"]
    assert whois["calls_per_minute"] == 30 and whois["rules"] == ["group:dev", "group:ops"]
    wrong = hermes("team", "policy", "set", "dev", "--servers", "x", home=home, env=env)
    assert wrong.returncode == 2 and "group:<name>" in wrong.stderr
    escape = hermes("team", "policy", "set", "user:\x1b[2Jx", "--servers", "*", home=home, env=env)
    assert escape.returncode == 2 and "\x1b" not in escape.stderr
    taken = hermes("team", "user", "add", "alice", home=home, env=env)
    assert taken.returncode == 2 and "already a user 'alice'" in taken.stderr

    stored = hermes("team", "credential", "set", "alice", "GITHUB_TOKEN", home=home, env=env, input=SECRET + "\n")
    assert stored.returncode == 0, stored.stderr
    assert hermes("team", "credential", "list", "alice", home=home, env=env).stdout.split() == ["GITHUB_TOKEN"]
    nobody = hermes("team", "credential", "set", "zed", "X", home=home, env=env, input=SECRET)
    assert nobody.returncode == 2 and "no user 'zed'" in nobody.stderr
    assert hermes("team", "credential", "set", "alice", "1BAD", home=home, env=env, input=SECRET).returncode == 2
    assert hermes("team", "credential", "set", "alice", "EMPTY", home=home, env=env, input="").returncode == 2
    assert hermes("team", "credential", "set", "alice", "NUL", home=home, env=env, input="ab\0cd").returncode == 2

    assert hermes("team", "user", "remove", "alice", home=home, env=env).returncode == 0
    assert hermes("team", "credential", "list", "alice", home=home, env=env).stdout == ""
    assert hermes("team", "user", "remove", "alice", home=home, env=env).returncode == 2
    audit = hermes("team", "audit", "--json", home=home, env=env)
    assert audit.returncode == 0 and json.loads(audit.stdout) == []
    database = b"".join(p.read_bytes() for p in home.root.glob("team.db*"))
    assert SECRET.encode() not in database and key.encode() not in database


def test_a_credential_without_the_team_key_is_refused_naming_the_setting(home: Home) -> None:
    write_config(home, {"team": {}})
    assert hermes("team", "user", "add", "alice", home=home).returncode == 0
    refused = hermes("team", "credential", "set", "alice", "X", home=home, input=SECRET)
    assert refused.returncode == 2 and "team.secret_key" in refused.stderr and SECRET not in refused.stderr


def test_bad_team_settings_name_the_file_the_key_and_the_rule(home: Home) -> None:
    cases = [
        ({"team": {"idle_minutes": 0}}, "team.idle_minutes"),
        ({"team": {"databse": "x"}}, "team"),
        ({"team": {"public_url": "https://mcp.example.org/mcp", "oauth": {"audience": "a"}}}, "team.oauth.issuer"),
        ({"team": {"oauth": {"issuer": "https://id.example.org", "audience": "a"}}}, "team.public_url"),
        ({"team": {"database": "postgresql://u:pw@[::1/db"}}, "team.database"),
        ({"team": {"secret_key": "${NOT_SET_ANYWHERE}"}}, "NOT_SET_ANYWHERE"),
        ({"team": {"database": "mysql://db/x"}}, "team.database"),
    ]
    for config, said in cases:
        write_config(home, config)
        ran = hermes("team", "user", "list", home=home)
        assert ran.returncode == 2, (config, ran.stdout, ran.stderr)
        assert said in ran.stderr and "Traceback" not in ran.stderr, (config, ran.stderr)
        assert len(ran.stderr.strip().splitlines()) == 1, ran.stderr
