"""Imports point down the layer order written in `hermes.layers`, and no module imports itself back."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import hermes
from hermes.layers import LAYERS, STANDALONE, layer_of

PACKAGE = Path(hermes.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _parse(source: str) -> ast.Module:
    # CPython 3.11.7 keeps the AST builder's recursion depth in shared state, so another thread of
    # the worker using `ast` at the same moment can fail a sound parse with "AST constructor
    # recursion depth mismatch" (a CPython bug, fixed in later releases); that, and only that,
    # is parsed again.
    for _ in range(4):
        try:
            return ast.parse(source)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc):
                raise
    return ast.parse(source)


def _imports(module: str, path: Path) -> set[str]:
    """Every hermes module `module` imports, at top level or inside functions (lazy imports count)."""
    tree = _parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "hermes"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base.split(".")[0] != "hermes":
                continue
            found.add(base)
            # `from hermes.x import y` may import the module hermes.x.y.
            found |= {f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES}
    return found


MODULES = _modules()


def test_every_module_has_a_layer() -> None:
    unplaced = [m for m in MODULES if layer_of(m) is None and not m.startswith(STANDALONE)]
    assert unplaced == [], f"add these to hermes.layers.LAYERS: {unplaced}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module: str) -> None:
    if module.startswith(STANDALONE):
        assert {i for i in _imports(module, MODULES[module])} == set(), "standalone programs import no hermes code"
        return
    own = layer_of(module)
    assert own is not None
    upward = [(target, LAYERS[layer][0]) for target in _imports(module, MODULES[module])
              if (layer := layer_of(target)) is not None and layer > own]
    assert upward == [], f"{module} (layer {LAYERS[own][0]}) imports from a higher layer: {upward}"


def test_no_import_cycles() -> None:
    graph = {m: {t for t in _imports(m, p) if t in MODULES and t != m} for m, p in MODULES.items()}
    done: set[str] = set()
    stack: list[str] = []

    def visit(node: str) -> None:
        if node in stack:
            cycle = [*stack[stack.index(node):], node]
            raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
        if node in done:
            return
        stack.append(node)
        for target in sorted(graph[node]):
            visit(target)
        stack.pop()
        done.add(node)

    for module in sorted(graph):
        visit(module)


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    """The rule can fail: an apps module that imported the session would be reported."""
    fake = tmp_path / "fake.py"
    fake.write_text("from hermes.session.core import Session\n")
    targets = _imports("hermes.apps.fake", fake)
    assert "hermes.session.core" in targets
    assert layer_of("hermes.session.core") > layer_of("hermes.apps.fake")  # type: ignore[operator]
