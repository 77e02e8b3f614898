"""Structure rules that keep the code holdable in one's head; they may only get stricter. Each
is one test that names every file breaking it.

No class in the layers every change passes through (`session`, `mcp`, `live`) has more than
`MAX_METHODS` methods, and no module anywhere is longer than `MAX_LINES` lines: a hub that grows
past either is a sign that a job wants its own module. No thread or task is started outside a
task group, and no part of the session is handed the whole session.
"""

from __future__ import annotations

import ast
from pathlib import Path

import hermes

PACKAGE = Path(hermes.__file__).parent
MAX_METHODS = 25
MAX_LINES = 450
HUB_LAYERS = ("session", "mcp", "live")
MODULES = sorted(PACKAGE.rglob("*.py"))


def _relative(path: Path) -> str:
    return str(path.relative_to(PACKAGE))


def test_no_module_is_too_long() -> None:
    long = {_relative(p): n for p in MODULES if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}, f"modules over {MAX_LINES} lines: {long}"


def _classes(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.name, sum(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) for item in node.body))
            for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]


def test_no_hub_class_has_too_many_methods() -> None:
    big = [f"{_relative(p)}: class {name} has {count} methods" for p in MODULES
           if p.relative_to(PACKAGE).parts[0] in HUB_LAYERS for name, count in _classes(p) if count > MAX_METHODS]
    assert big == [], f"at most {MAX_METHODS} methods per class: {big}"


# What starts a thread or a task that no task group owns. `relay_inside.py` is a program of its own,
# run inside a server's sandbox (standard library only), not part of the hermes process.
_UNOWNED = {("threading", "Thread"), ("asyncio", "create_task"), ("asyncio", "ensure_future"),
            ("asyncio", "to_thread"), ("loop", "run_in_executor"), ("threading", "Timer")}
_OWN_PROGRAMS = {"mcp/relay_inside.py"}


def test_no_thread_or_task_is_started_outside_a_task_group() -> None:
    found = []
    for path in MODULES:
        if _relative(path) in _OWN_PROGRAMS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and (node.func.value.id, node.func.attr) in _UNOWNED:
                found.append(f"{_relative(path)}:{node.lineno} {node.func.value.id}.{node.func.attr}")
    assert found == [], f"background work outside a task group (use hermes.background or anyio): {found}"


def test_no_part_of_the_session_receives_the_session() -> None:
    """The session's parts are given what they use (a `Roster`, callables), never the whole session."""
    found = []
    for path in MODULES:
        if path.relative_to(PACKAGE).parts[0] not in (*HUB_LAYERS, "tools"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        for arg in item.args.args + item.args.kwonlyargs:
                            if arg.annotation is not None and ast.unparse(arg.annotation) in ("Session", "SessionView"):
                                found.append(f"{_relative(path)}: {node.name}.{item.name}({arg.arg})")
    assert found == [], f"classes that receive the session: {found}"


def test_the_error_tree_in_errors_py_names_every_error_class() -> None:
    import importlib

    from hermes import errors

    for path in MODULES:
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] != "__main__":
            importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))

    def subclasses(cls: type) -> set[type]:
        found = set(cls.__subclasses__())
        return found.union(*(subclasses(c) for c in found)) if found else found

    ours = {c for c in subclasses(errors.HermesError) if c.__module__.startswith("hermes.")}
    missing = sorted(c.__name__ for c in ours if c.__name__ not in (errors.__doc__ or ""))
    assert missing == [], f"add these to the tree in hermes/errors.py: {missing}"


def _wired_later(node: ast.AST) -> str | None:
    """An assignment that hands another object a collaborator after its constructor returned
    (`x.on_denial = …`, `session.handlers.sampling = …`): what it wires, else None."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
        if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
    for target in targets:
        if isinstance(target, ast.Attribute) and not (isinstance(target.value, ast.Name)
                                                      and target.value.id in ("self", "cls")):
            name = target.attr
            if name.startswith("on_") or name.endswith(("_handler", "_for", "_settings")) or \
                    name in ("sampling", "elicitation", "handlers", "session", "redactor"):
                return ast.unparse(target)
    return None


def test_collaborators_are_given_at_construction_never_wired_in_afterwards() -> None:
    """Handlers, listeners and the session's parts go to a constructor: no `attach()` in the hub
    layers, no `x.on_… = …` from outside (an object is whole once its constructor returns)."""
    found = []
    for path in MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            wired = _wired_later(node)
            if wired is not None:
                found.append(f"{_relative(path)}:{getattr(node, 'lineno', 0)} {wired} = …")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "attach" and \
                    path.relative_to(PACKAGE).parts[0] in (*HUB_LAYERS, "tools"):
                found.append(f"{_relative(path)}:{node.lineno} def attach")
    assert found == [], f"collaborators wired in after construction: {found}"
