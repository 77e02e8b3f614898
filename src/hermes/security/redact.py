"""The redactor: registered secret values and credential shapes become `[REDACTED]`; nothing else changes.

One `Redactor` is owned by a session and passed to everything that turns server output, errors or
log lines into text. Registered values are matched literally (longest first, so a secret that
contains another is hidden whole); they are what hermes knows to be secret (tokens it holds,
credentials a server was configured with, see `hermes.config.resolve`). Shapes catch secrets nobody
registered, and only where the value itself agrees: a known prefix or a JWT anywhere, and
`Bearer`/`Basic`/`token=`/`password:` and the like only when what follows is credential-like.
Ordinary content passes byte for byte (`tests/security/test_redaction_corpus.py`).
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Iterable
from typing import Any, NamedTuple
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from hermes.security.credentials import (
    SHAPE_PREFIXES,
    Sureness,
    code_like,
    credential_like,
    example_value,
    known_shapes,
    name_says_secret,
    placeholder,
    plain_value,
    secret_setting,
    token_like,
)

REDACTED = "[REDACTED]"

# Values shorter than this are too likely to be ordinary words ("1", "true") to hide everywhere.
_MIN_SECRET_LENGTH = 4

# `Bearer <token>` / `Basic <base64 user:password>`; the credential decides, never the word alone
# ("a Bearer token", "Basic Usage" are prose).
_SCHEMES = ("bearer", "basic")
# `name = value`, `name: value`, `"name": "value"`, `?name=value`: the name says how sure the value is a
# secret; the value must agree (`"key": "README.md"` is an object key, not a credential). Names are
# found from the words they contain (a plain substring search, fast on megabytes), then read whole.
_TRIGGERS = ("passw", "pwd", "secret", "token", "key", "auth", "credential", "creds", "cookie", "session", "sig",
             "jwt", "otp", "pat", "private", "bearer")
_MAX_NAME = 80
_SEPARATOR_START = frozenset("\"'`=: \t")
_AUTH_SCHEMES = frozenset({"bearer", "basic", "digest", "token", "negotiate", "ntlm"})
Edit = tuple[int, int, str]  # (start, end, replacement)


class _Rules(NamedTuple):
    after_scheme: re.Pattern[str]  # the credential after `Bearer` / `Basic`
    name_tail: re.Pattern[str]  # the rest of a name after its trigger word
    name_head: re.Pattern[str]  # the start of a name before its trigger word
    after_name: re.Pattern[str]  # the separator and the value after a name
    userinfo: re.Pattern[str]  # the password in `scheme://user:password@host` (from just after `://`)
    authorization_before: re.Pattern[str]  # an Authorization header or field just before a scheme
    secret_query: re.Pattern[str]  # a URL's query parameter named for a secret


@functools.cache
def _rules() -> _Rules:
    """Compiled at the first text that needs a rule: a command that shows no such text (a listing of
    stdio servers) never pays their 0.4 ms."""
    return _Rules(
        after_scheme=re.compile(r"(\s+)([A-Za-z0-9._~+/=\-]+)"),
        name_tail=re.compile(r"[A-Za-z0-9_\-]{0,80}"),
        name_head=re.compile(r"[A-Za-z0-9_\-]{0,80}\Z"),
        after_name=re.compile(r"([\"'`]?\s*[=:]\s*)"
                              r"(\"[^\"\n]{1,4096}\"|'[^'\n]{1,4096}'|`[^`\n]{1,4096}`|[^\s&,;\"'`<>()\[\]{}]{1,4096})"),
        userinfo=re.compile(r"[^/\s:@]{1,256}:([^@\s/]{1,1024})@"),
        authorization_before=re.compile(r"(?:proxy-)?authori[sz]ation[\"']?\s{0,8}[:=]\s{0,8}[\"']?\s{0,8}\Z"),
        secret_query=re.compile(r"(?i)^(.*[_-])?(token|key|api[_-]?key|apikey|secret|password|passwd|pass|sig|"
                                r"signature|auth|authorization|credential|credentials|code|session)$"),
    )


def _schemes(text: str, lower: str) -> list[Edit]:
    edits = []
    after_scheme = _rules().after_scheme
    for scheme in _SCHEMES:
        start = lower.find(scheme)
        while start != -1:
            end = start + len(scheme)
            if start == 0 or not text[start - 1].isalnum():
                after = after_scheme.match(text, end)
                if after is not None:
                    credential = after.group(2)
                    if _in_authorization(lower, start):
                        # A header's credential, at any length (`Authorization: Bearer abc.def`).
                        secret = not example_value(credential)
                    elif scheme == "basic":
                        secret = _basic_credential(credential)
                    else:
                        secret = token_like(credential, promised=True)
                    if secret:
                        edits.append((after.start(2), after.end(2), REDACTED))
            start = lower.find(scheme, end)
    return edits


def _in_authorization(lower: str, scheme_start: int) -> bool:
    """Whether the scheme at `scheme_start` is the value of an Authorization header or field."""
    return _rules().authorization_before.search(lower, max(0, scheme_start - 40), scheme_start) is not None


def _basic_credential(value: str) -> bool:
    """Base64 of `user:password`, as HTTP Basic sends it."""
    import base64
    import binascii

    if len(value) < 8:
        return False
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


def _names(text: str, lower: str) -> set[tuple[int, int]]:
    """(start, end) of every name-like word holding a trigger, followed by what could be a separator."""
    spans: set[tuple[int, int]] = set()
    size = len(text)
    rules = _rules()
    for word in _TRIGGERS:
        found = lower.find(word)
        while found != -1:
            tail = rules.name_tail.match(text, found + len(word))
            right = tail.end() if tail else found + len(word)
            if right < size and text[right] in _SEPARATOR_START:
                head = rules.name_head.search(text, max(0, found - _MAX_NAME), found)
                left = head.start() if head else found
                if (left == 0 or not text[left - 1].isalnum()) and text[left].isalpha():
                    spans.add((left, right))
            found = lower.find(word, found + 1)
    return spans


def _assignments(text: str, lower: str) -> list[Edit]:
    edits = []
    after_name = _rules().after_name
    for left, right in _names(text, lower):
        name = text[left:right]
        if name_says_secret(name) is Sureness.NO:
            continue  # `monkey: ...`: the word only looked like one
        after = after_name.match(text, right)
        if after is None:
            continue
        raw = after.group(2)
        quote_char = raw[0] if raw[:1] in ("'", '"', "`") else ""
        value = raw[1:-1] if quote_char else raw
        start, end = after.start(2) + len(quote_char), after.end(2) - len(quote_char)
        if not quote_char and text[end:end + 1] in ("(", "[", "."):
            continue  # `api_key=os.environ.get(...)`: an expression in a code sample
        scheme, space, rest = value.partition(" ")
        if space and scheme.lower() in _AUTH_SCHEMES:
            # `authorization: "token 4f3c..."`: the credential after the scheme decides, and in an
            # Authorization field every Bearer or Basic credential is one, whatever its length.
            authorization = scheme.lower() in _SCHEMES and "authori" in name.lower()
            if (authorization and rest and not example_value(rest)) or token_like(rest, promised=True):
                edits.append((start + len(scheme) + 1, end, REDACTED))
        elif value and _secret_in_place(name, value):
            edits.append((start, end, REDACTED))
    return edits


def _secret_in_place(name: str, value: str) -> bool:
    if value.lower() in _AUTH_SCHEMES or placeholder(value) or code_like(value):
        return False  # `Authorization: Bearer <token>`: the scheme's own rule judges the token
    sureness = name_says_secret(name)
    if sureness is Sureness.CERTAIN:
        return len(value) >= _MIN_SECRET_LENGTH and not plain_value(value) and not example_value(value)
    if sureness is Sureness.LIKELY:
        # A bare `key` names a map key far more often than a credential (`"Key": "README.md"`, a
        # cache key's hash): only a token of mixed case counts there.
        bare = name.lower().replace("-", "_").strip("_")
        if bare in ("key", "keys"):
            return credential_like(value) and any(c.islower() for c in value) and any(c.isupper() for c in value)
        return token_like(value)
    return False


def _userinfos(text: str) -> list[Edit]:
    edits = []
    userinfo = _rules().userinfo
    found = text.find("://")
    while found != -1:
        match = userinfo.match(text, found + 3)
        if match is not None:
            password = match.group(1)
            if not placeholder(password) and not password.startswith("${"):
                edits.append((match.start(1), match.end(1), REDACTED))
        found = text.find("://", found + 3)
    return edits


def _applied(text: str, edits: list[Edit]) -> str:
    """`text` with the edits made; of two that overlap, the first (leftmost) wins."""
    if not edits:
        return text
    pieces, at = [], 0
    for start, end, replacement in sorted(edits):
        if start < at:
            continue
        pieces += [text[at:start], replacement]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


# Every rule below starts from one of these: a known shape's literal, a trigger or a scheme word (in
# the lowercased text), or a "://" (a URL's user info; an "@" alone is a scoped npm package or an
# address). A short text holding none of them (most values in a result: names, numbers, ids, a
# sentence) is returned after two scans instead of thirty-odd substring searches and
# the rules' set-up. On long texts the substring searches are faster than one alternation (measured:
# 0.3 against 2.2 us for a word, 18.5 against 16 us for 900 characters), so those go the usual way.
_QUICK_LOOK = 256
_SHAPE_LITERALS = re.compile("|".join(re.escape(prefix) for prefix in SHAPE_PREFIXES))
_RULE_WORDS = re.compile("|".join(re.escape(word) for word in (*_TRIGGERS, *_SCHEMES)))


def redact_shapes(text: str) -> str:
    """Credentials nobody registered, found by their shape (see `hermes.security.credentials`)."""
    if len(text) <= _QUICK_LOOK and "://" not in text and _SHAPE_LITERALS.search(text) is None \
            and _RULE_WORDS.search(text.lower()) is None:
        return text
    text = _applied(text, [(start, end, REDACTED) for start, end in known_shapes(text)])
    lower = _lowered(text)
    edits = _schemes(text, lower) + _assignments(text, lower)
    if "://" in text:
        edits += _userinfos(text)
    return _applied(text, edits)


def _lowered(text: str) -> str:
    """`text` in lower case, character for character: the rules find words in the lowered text and
    cut `text` at the same places. One character lowers to two ("İ" to "i" and a combining dot),
    which would shift every place after it, and a secret after it would be cut wrongly or not at all."""
    lower = text.lower()
    return lower if len(lower) == len(text) else text.replace("\u0130", "i").lower()


def _escaped_forms(value: str) -> set[str]:
    """The value, and how `repr()`, JSON and URL encoding would print it when it holds odd characters."""
    forms = {value, repr(value)[1:-1], json.dumps(value)[1:-1]}
    if any(not (c.isalnum() or c in "-._~") for c in value):
        forms.add(quote(value, safe="", errors="surrogatepass"))  # a lone surrogate in a secret is still one
    return forms


def mask_url(url: str) -> str:
    """A URL as configuration listings may show it: user info and secret-looking query values hidden."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    def shown(pair: str) -> str:
        name, sep, value = pair.partition("=")
        # A `${VAR}` reference is not the secret itself, and shows where the secret comes from.
        hide = sep and _rules().secret_query.match(unquote(name)) and "${" not in value
        return f"{name}={REDACTED}" if hide else pair

    query = "&".join(shown(pair) for pair in parts.query.split("&") if pair)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def shown_command(command: str, args: list[str] | tuple[str, ...]) -> str:
    """A server's command line as listings show it: credentials among its arguments hidden, also
    the value after an option that names one (`--token VALUE`, `--api-key VALUE`)."""
    shown = []
    for previous, arg in zip(("", *args), args, strict=False):
        option = previous.lstrip("-")
        secret = previous.startswith("-") and "=" not in previous and secret_setting(option, arg)
        shown.append(REDACTED if secret else arg)
    return redact_shapes(" ".join([command, *shown]).strip())


def credential_parts(value: str) -> list[str]:
    """A header value and, for `Scheme credential` values, the bare credential too."""
    parts = value.split(None, 1)
    return [value, parts[1]] if len(parts) == 2 else [value]


class Redactor:
    def __init__(self, secrets: Iterable[str] = (), *, also: Redactor | None = None) -> None:
        """`also`: a wider redactor that learns every secret this one does (a team replica's log
        hides all users' secrets, while each user's results hide only their own: hiding another
        user's would tell them it is one)."""
        self._lock = threading.Lock()
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._plain: set[str] = set()  # see `plain_texts`
        self._also = also
        self.register(*secrets)

    def register(self, *values: str) -> None:
        """Hide these values from now on, and the escaped forms a library may print them in."""
        if self._also is not None:
            self._also.register(*values)
        variants = {form for v in values if v for form in _escaped_forms(v)}
        fresh = {v for v in variants if len(v) >= _MIN_SECRET_LENGTH} - self._secrets
        if not fresh:
            return
        with self._lock:
            self._secrets |= fresh
            ordered = sorted(self._secrets, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(s) for s in ordered))
            self._plain = set()  # a text plain before may hold one of these

    def plain_texts(self) -> set[str]:
        """Short texts that `hermes.security.clean` found needing nothing, while this redactor's
        secrets stay as they are: a new set after every registration, so a text found plain
        before it and added after lands in a set nobody asks any more."""
        return self._plain

    def __call__(self, text: str) -> str:
        pattern = self._pattern
        if pattern is not None:
            text = pattern.sub(REDACTED, text)
        return redact_shapes(text)

    def value(self, data: Any) -> Any:
        """A JSON value with every string in it redacted (keys too: servers put anything there)."""
        if isinstance(data, str):
            return self(data)
        if isinstance(data, dict):
            return {self(str(k)): self.value(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.value(item) for item in data]
        return data

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} secrets)"
