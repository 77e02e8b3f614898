"""Size rules that keep the code holdable in one's head; they may only get stricter.

No class in the layers every change passes through (`session`, `mcp`, `live`) has more than
`MAX_METHODS` methods, and no module anywhere is longer than `MAX_LINES` lines. A hub that grows
past either is a sign that a job wants its own module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import hermes

PACKAGE = Path(hermes.__file__).parent
MAX_METHODS = 25
MAX_LINES = 450
HUB_LAYERS = ("session", "mcp", "live")
MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_too_long(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE)} has {lines} lines (at most {MAX_LINES})"


def _classes(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.name, sum(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) for item in node.body))
            for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]


@pytest.mark.parametrize("path", [p for p in MODULES if p.relative_to(PACKAGE).parts[0] in HUB_LAYERS],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_hub_class_has_too_many_methods(path: Path) -> None:
    for name, count in _classes(path):
        assert count <= MAX_METHODS, f"{path.relative_to(PACKAGE)}: class {name} has {count} methods " \
                                     f"(at most {MAX_METHODS})"


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
