"""The intended layer order of the package, lowest first; imports may only point down (or sideways).

A module belongs to the layer of the longest prefix listed here. `tests/test_layers.py` reads
this table and fails on any import of a hermes module from a higher layer, and on import cycles.
What a lower layer needs from a higher one (a probe, a login flow, the sampling and elicitation
handlers of whoever owns the model and the user) is passed in as a callable, never imported.
"""

from __future__ import annotations

LAYERS: tuple[tuple[str, ...], ...] = (
    # Vocabulary and plumbing: errors, HERMES_HOME paths, safe file I/O, the validation kit,
    # an ASGI server on a loopback socket, the one signal policy async work runs under, a
    # stdin reader that a cancellation can stop, background work a task group owns, the collector's pace,
    # Ctrl-C outside the loop.
    ("hermes", "hermes.errors", "hermes.home", "hermes.files", "hermes.validation", "hermes.loopback",
     "hermes.interrupts", "hermes.stdin_lines", "hermes.layers", "hermes.background", "hermes.debugging",
     "hermes.collection", "hermes.sigint"),
    # The redactor, the child environment allowlist, redacted library logging.
    ("hermes.security",),
    # config.yaml, .env, ${VAR} interpolation, edits that keep comments.
    ("hermes.config",),
    # Desktop apps: declarations, host facts, versions, availability, runtime files, states.
    # Knows nothing about MCP.
    ("hermes.apps",),
    # Portable plugins and the curated MCP catalog: formats, installers (probe and login injected).
    ("hermes.plugins", "hermes.catalog"),
    # Connections over the official SDK: transports, the supervisor, OAuth, SDK internals.
    ("hermes.mcp",),
    # The surface a model sees: names, filters, toolsets, results, unavailable payloads, deferral.
    ("hermes.tools",),
    # One running host: desired servers -> connections -> surface; reload; status; probe.
    ("hermes.session",),
    # A session other processes reach: control endpoint, `hermes mcp serve`.
    ("hermes.live",),
    # The model side: provider, tool loop, system prompt, skills, sampling and elicitation.
    ("hermes.agent",),
    # The team gateway: many users' sessions behind one `serve --http`, with the storage seam
    # (users, policy, credentials, audit) on SQLite or PostgreSQL.
    ("hermes.team",),
    # The offline demo story and its app.
    ("hermes.demo",),
    # Thin command line on top of everything, and the dashboard: the same actions in a browser
    # (it calls the functions the commands call, so both change config.yaml the same way).
    # The messaging gateway likewise: the agent of `hermes chat`, one conversation per room.
    ("hermes.cli", "hermes.dashboard", "hermes.gateway", "hermes.__main__"),
)

# Standalone programs shipped with hermes; they import the SDK only, never hermes.
STANDALONE: tuple[str, ...] = ("hermes.examples", "hermes.builtin")


def layer_of(module: str) -> int | None:
    """Index in `LAYERS` of the longest listed prefix of `module`; None if not listed."""
    best: tuple[int, int] | None = None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            # The package itself ("hermes") is a module of its own, not a prefix of everything.
            matches = module == prefix or (prefix != "hermes" and module.startswith(prefix + "."))
            if matches and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return best[0] if best else None
