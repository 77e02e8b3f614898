"""What counts as a secret: by the name it is stored under, or by what the value looks like.

The redactor hides what is secret and nothing else, so every rule here has two sides: it must
catch real credentials (tokens, keys, passwords, signed URLs) and it must leave ordinary content
alone (`info`, `true`, `README.md`, `Basic Usage`, a package name, a file path, a version, a hash
used as a cache key, an expression in a code sample). The questions, answered without any I/O:

- `name_says_secret(name)`: does a setting's *name* say it holds a secret (`GITHUB_TOKEN`,
  `api-key`, `Authorization`, `DB_PASSWORD`), and how sure is it (`CERTAIN` names hold nothing
  else; `LIKELY` names such as `session` or `key` also hold ordinary values)?
- `credential_like(value)`: does a value look like a machine-made credential wherever it appears
  (a known prefix, a JWT, a long high-entropy string whose characters switch classes the way
  generated tokens do)?
- `token_like(value)`: in a place that promises a credential (after `Bearer`, or `token=`), is
  this one, rather than a word, an identifier, a number or a documentation example?
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter
from enum import IntEnum
from typing import NamedTuple


class Sureness(IntEnum):
    NO = 0
    LIKELY = 1  # the name often holds a secret, and sometimes an ordinary value (session, key, auth)
    CERTAIN = 2  # the name holds nothing but secrets (password, secret, api_key, authorization)


_CERTAIN_PARTS = {"password", "passwd", "pwd", "secret", "secrets", "apikey", "passphrase", "authorization",
                  "privatekey", "clientsecret", "accesstoken", "refreshtoken", "authtoken", "secretkey",
                  "accesskey", "bearer"}
_LIKELY_PARTS = {"token", "tokens", "key", "keys", "credential", "credentials", "creds", "auth", "pat", "pass",
                 "cookie", "cookies", "session", "sessionid", "private", "sig", "signature", "jwt", "otp"}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# Machine-made credentials by their well-known shapes (GitHub, OpenAI/Anthropic-style, Stripe, Slack,
# AWS, Google, JWT), each keyed by the literal it starts with: a text without the literal is never
# searched with the pattern (a substring test is fast on megabytes, a regex scan is not).
_NOT_AFTER_WORD = r"(?<![A-Za-z0-9_])"
_SHAPES: dict[str, str] = dict((
    ("gh", r"(?<![A-Za-z0-9_]gh)(?<=gh)[pousr]_[A-Za-z0-9]{20,}"),
    ("github_pat_", r"(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{20,}"),
    ("sk-", r"(?<![A-Za-z0-9_]sk-)[A-Za-z0-9_\-]{16,}"),
    # Keys that name their kind right after the prefix are keys even when short (`sk-live_abcdefghij`).
    ("sk-live", r"(?<![A-Za-z0-9_]sk-live)[_\-][A-Za-z0-9_\-]{8,}"),
    ("sk-test", r"(?<![A-Za-z0-9_]sk-test)[_\-][A-Za-z0-9_\-]{8,}"),
    ("sk-proj-", r"(?<![A-Za-z0-9_]sk-proj-)[A-Za-z0-9_\-]{8,}"),
    ("sk-ant-", r"(?<![A-Za-z0-9_]sk-ant-)[A-Za-z0-9_\-]{8,}"),
    ("sk_live_", r"(?<![A-Za-z0-9_]sk_live_)[A-Za-z0-9]{16,}"),
    ("rk_live_", r"(?<![A-Za-z0-9_]rk_live_)[A-Za-z0-9]{16,}"),
    ("sk_test_", r"(?<![A-Za-z0-9_]sk_test_)[A-Za-z0-9]{16,}"),
    ("xox", r"(?<![A-Za-z0-9_]xox)[abeoprs]-[A-Za-z0-9\-]{10,}"),
    ("AKIA", r"(?<![A-Za-z0-9_]AKIA)[0-9A-Z]{16}\b"),
    ("ASIA", r"(?<![A-Za-z0-9_]ASIA)[0-9A-Z]{16}\b"),
    ("AIza", r"(?<![A-Za-z0-9_]AIza)[0-9A-Za-z_\-]{35}"),
    ("eyJ", r"(?<![A-Za-z0-9_]eyJ)[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
))
SHAPE_PREFIXES = tuple(_SHAPES)


# Compiled at their first use: compiling the twenty-odd patterns took about 1.3 ms of every command's
# start, and most texts never hold a prefix.
@functools.cache
def shape_pattern(prefix: str) -> re.Pattern[str]:
    """The credential that starts with `prefix` (one of SHAPE_PREFIXES)."""
    return re.compile(re.escape(prefix) + _SHAPES[prefix])


@functools.cache
def known_shapes_pattern() -> re.Pattern[str]:
    """Any well-known credential, as one alternation."""
    return re.compile("|".join(f"{_NOT_AFTER_WORD}{re.escape(prefix)}{rest}" for prefix, rest in _SHAPES.items()))


def known_shapes(text: str) -> list[tuple[int, int]]:
    """(start, end) of every well-known credential in `text`."""
    spans = []
    for prefix in SHAPE_PREFIXES:
        if prefix in text:
            spans += [match.span() for match in shape_pattern(prefix).finditer(text)]
    return spans


_PATHLIKE = re.compile(r"^(?:[~.]?/|[A-Za-z]:[\\/]|[\w.\-]+/[\w.\-]+/)|\.[A-Za-z][A-Za-z0-9]{0,4}$")
# A scheme is ASCII letters, digits, "+", "." and "-" (RFC 3986); spelt out, not by IGNORECASE, whose
# Unicode case tables cost 0.2 ms to compile (and would take "ſ" for an "s").
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
# Matched against the lowercased value: an IGNORECASE group took 0.3 ms to compile, at every start.
_PLACEHOLDER = re.compile(r"^(?:[*x.•#_\-]+|<[^<>]*>|\$\{[^}]*\}|\{\{[^}]*\}\}|\.\.\.|…|changeme|your[_\- ]\w+|"
                          r"redacted|\[redacted\]|none|null|true|false|password|secret|token|example|pass|"
                          r"passwd|pwd|pw)$")
_EXAMPLE_WORDS = ("token", "secret", "password", "passwd", "example", "your", "dummy", "placeholder", "changeme",
                  "xxxx", "sample", "redacted", "fake", "api key", "my ")
# Words that are settings' ordinary values far more often than anyone's secret.
PLAIN_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null", "info", "debug", "warn",
                         "warning", "error", "trace", "fatal", "critical", "notice", "verbose", "quiet", "auto",
                         "enabled", "disabled", "enable", "disable", "default", "production", "development",
                         "staging", "test", "local", "localhost", "stdio", "http", "https", "json", "text",
                         "oauth", "basic", "bearer", "required", "optional"})


class _Looks(NamedTuple):
    dotted: re.Pattern[str]  # `os.environ.get`
    identifier: re.Pattern[str]  # `get_custom_token`, `myToken`
    version: re.Pattern[str]  # `1.2.3`, `^4.0.0-beta`


@functools.cache
def _looks() -> _Looks:
    """Compiled at their first use, as the shapes are: a value judged by its name alone never needs them."""
    return _Looks(dotted=re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+"),
                  identifier=re.compile(r"[a-z][a-z0-9]*(?:[_\-][a-z][a-z0-9]*)+|[a-z]+(?:[A-Z][a-z]+)+"),
                  version=re.compile(r"[\^~<>=v]*\d+(?:\.\d+)*(?:[-+][\w.]+)?"))


def _parts(name: str) -> list[str]:
    words = [w.lower() for w in re.split(r"[^A-Za-z0-9]+", _CAMEL.sub("_", name)) if w]
    # Adjacent words joined too: `API_KEY` -> "apikey", `client-secret` -> "clientsecret".
    return words + [a + b for a, b in itertools.pairwise(words)]


@functools.lru_cache(maxsize=4096)  # the same few names come back in every line of a listing
def name_says_secret(name: str) -> Sureness:
    parts = _parts(name)
    if any(p in _CERTAIN_PARTS for p in parts):
        return Sureness.CERTAIN
    if any(p in _LIKELY_PARTS for p in parts):
        return Sureness.LIKELY
    return Sureness.NO


def placeholder(value: str) -> bool:
    """`********`, `<your token>`, `${TOKEN}`, `changeme`: what documentation writes instead of a secret."""
    return bool(_PLACEHOLDER.match(value.strip().lower()))


def example_value(value: str) -> bool:
    """A made-up credential of the kind documentation shows (`personal-access-token123`,
    `secret123`, `myToken`): it spells out what it stands for."""
    lowered = value.lower()
    return placeholder(value) or any(word in lowered for word in _EXAMPLE_WORDS)


def plain_value(value: str) -> bool:
    """A number, a version, a plain word: never anyone's password, whatever it is called."""
    return value.lower() in PLAIN_WORDS or bool(_looks().version.fullmatch(value))


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _class(char: str) -> int:
    return 0 if char.islower() else 1 if char.isupper() else 2


def mixing(value: str) -> float:
    """How often the letters and digits switch between lower case, upper case and digit, per
    character: generated tokens switch all the time (`Zq8Lm2Xw`), words and names rarely
    (`libfontconfig1-dev`, `x86_64-linux-gnu`)."""
    chars = [c for c in value if c.isalnum()]
    if len(chars) < 2:
        return 0.0
    switches = sum(_class(a) != _class(b) for a, b in itertools.pairwise(chars))
    return switches / len(chars)


def code_like(value: str) -> bool:
    """An expression, not a literal: `os.environ.get`, `process.env.TOKEN`, `get_custom_token`."""
    looks = _looks()
    return bool(looks.dotted.fullmatch(value) or looks.identifier.fullmatch(value))


def credential_like(value: str) -> bool:
    """A value that looks like a machine-made credential wherever it appears.

    A known prefix or a JWT; else a long string without spaces that is not a path or a URL, holds
    letters and digits, has high entropy, and mixes character classes the way generated tokens
    do (see `mixing`): a random key, a signed token, a hash.
    """
    value = value.strip()
    if value.startswith(SHAPE_PREFIXES) and known_shapes_pattern().fullmatch(value):
        return True
    if len(value) < 16 or any(c.isspace() for c in value) or _URL.match(value) or _PATHLIKE.search(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_letter = any(c.isalpha() for c in value)
    return has_digit and has_letter and entropy(value) >= 3.0 and mixing(value) >= 0.3


def token_like(value: str, *, promised: bool = False) -> bool:
    """Where a credential is expected (`token=...`, `session: ...`): one, rather than a word, an
    identifier, a number or a documentation example. `promised`: right after `Bearer`, where
    even a token of letters and separators (`abc.def-ghi_jkl`) is one."""
    value = value.strip().rstrip(".,;:)")
    if credential_like(value):
        return True
    if len(value) < 8 or example_value(value) or any(c.isspace() for c in value) or plain_value(value):
        return False
    if _URL.match(value) or _PATHLIKE.search(value) or (code_like(value) and not promised):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_letter = any(c.isalpha() for c in value)
    if has_digit and has_letter and mixing(value) >= 0.2:
        return True
    if len(value) >= 20 and any(c.islower() for c in value) and any(c.isupper() for c in value):
        return True
    return promised and has_letter and len(value) >= 12 and any(c in "._-+/=~" for c in value)


def secret_setting(name: str, value: str) -> bool:
    """Whether a configured value (`env:` entry, header) is a secret: by its name or its looks.

    The user declared it, so the name decides: whatever a name saying key, token, secret, password,
    pass, auth or credential holds is a secret (`BOX_KEY: SECRETVALUE-9876` included, though it
    spells out what it is), unless it is a plain setting (`true`, a number), a placeholder, or
    where the secret lives rather than the secret (a path or a URL: `KEY_FILE: ./key.pem`)."""
    if not value or placeholder(value):
        return False
    if name_says_secret(name) is not Sureness.NO:
        stripped = value.strip()
        where = _URL.match(stripped) or (stripped.startswith(("/", "~/", "./", "../")) and " " not in stripped)
        if len(stripped) >= 4 and not plain_value(stripped) and not where:
            return True
    return credential_like(value)
