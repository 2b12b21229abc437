"""The architecture's import rules (docs/architecture.md), read from the source itself.

Every ``import`` statement of every module is resolved, module-level or inside a function:

* the method (``libre_lib`` outside ``libre_lib.ops``) never imports its operation, Prefect or
  the pipeline packages;
* the operation (``libre_lib.ops``) never imports Prefect or the pipeline packages;
* tasks never import flows;
* no module of the package imports its package root (``from . import X`` of a name defined in
  ``__init__``), and the package has no import circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"libre_lib": ROOT / "libre_lib", "libre_flows.tasks": ROOT / "tasks",
            "libre_flows.flows": ROOT / "flows"}  # fmt: skip


def _modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def imports_of(name: str) -> set[str]:
    """Absolute names of every module ``name`` imports (a ``from X import y`` counts as X.y
    when X.y is a module of ours, else X)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    base = name if _is_package(name) else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                source = f"{anchor}.{node.module}" if node.module else anchor
            else:
                source = node.module
            for alias in node.names:
                child = f"{source}.{alias.name}"
                out.add(child if child in MODULES else source)
    return out


def _inside(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


METHOD = sorted(m for m in MODULES if _inside(m, "libre_lib") and not _inside(m, "libre_lib.ops"))
OPERATION = sorted(m for m in MODULES if _inside(m, "libre_lib.ops"))
TASKS = sorted(m for m in MODULES if _inside(m, "libre_flows.tasks"))


@pytest.mark.parametrize("module", METHOD)
def test_the_method_imports_neither_its_operation_nor_an_orchestrator(module):
    banned = ("libre_lib.ops", "prefect", "prefect_dask", "libre_flows", "great_expectations")
    assert not [m for m in imports_of(module) if any(_inside(m, b) for b in banned)]


@pytest.mark.parametrize("module", OPERATION)
def test_the_operation_imports_no_orchestrator(module):
    banned = ("prefect", "prefect_dask", "libre_flows")
    assert not [m for m in imports_of(module) if any(_inside(m, b) for b in banned)]


@pytest.mark.parametrize("module", TASKS)
def test_tasks_never_import_flows(module):
    assert not [m for m in imports_of(module) if _inside(m, "libre_flows.flows")]


@pytest.mark.parametrize("module", [m for m in METHOD + OPERATION if m != "libre_lib"])
def test_no_module_imports_the_package_root(module):
    assert "libre_lib" not in imports_of(module)


def find_circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle of the graph (module -> modules it imports), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                return [*stack[stack.index(n) :], n]
            if n not in state and (circle := visit(n)):
                return circle
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state and (circle := visit(m)):
            return circle
    return None


def test_the_package_has_no_import_circle():
    ours = {m: {i for i in imports_of(m) if i in MODULES and i != m} for m in MODULES}
    # a package's __init__ importing its own submodules is how re-exports work: not a circle
    edges = {m: {i for i in targets if not (_is_package(m) and _inside(i, m))}
             for m, targets in ours.items()}  # fmt: skip
    assert find_circle(edges) is None


def test_find_circle_finds_circles():
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"x": {"y"}, "y": {"y2"}, "y2": {"y"}}) == ["y", "y2", "y"]


def test_the_method_keeps_a_small_top_level():
    top = sorted(p.name for p in (ROOT / "libre_lib").glob("*.py"))
    assert len(top) <= 14, top


def test_imports_inside_functions_count(tmp_path, monkeypatch):
    """A lazy import back up (as rules.py once did with render.py) is an import too."""
    module = tmp_path / "lazy.py"
    module.write_text("def f():\n    from .render import rule_text\n    return rule_text\n")
    monkeypatch.setitem(MODULES, "libre_lib.lazy", module)
    assert "libre_lib.render" in imports_of("libre_lib.lazy")
