"""The layout's rules, read from every module's imports (with `ast`, so nothing is imported):
app/'s root holds only the doors and the wiring, app/'s packages import each other in one
direction only (app.core imports none of them), and grader/ never imports app/."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOORS_AND_WIRING = {"__init__", "main", "assembly", "starting", "cli", "service_commands"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(top: str) -> dict[str, Path]:
    return {_module_name(path): path for path in sorted((ROOT / top).rglob("*.py"))}


def _imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """Every module `name` imports, wherever the import stands (functions and TYPE_CHECKING
    blocks included): a lazy import is a dependency all the same."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                yield submodule if submodule in known else base


def _room(module: str) -> str:
    """The package a module of app/ lives in; `app` for the modules at its root."""
    parts = module.split(".")
    if len(parts) > 2 or (ROOT / "app" / parts[-1]).is_dir():
        return ".".join(parts[:2])
    return "app"


def _package_graph() -> dict[str, set[str]]:
    modules = _modules("app")
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        room = _room(name)
        graph.setdefault(room, set())
        for imported in _imports(name, path, modules):
            if imported.split(".")[0] == "app" and imported != "app":
                target = _room(imported)
                if target != room:
                    graph[room].add(target)
    return graph


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        room = todo.pop()
        if room not in seen:
            seen.add(room)
            todo.extend(graph.get(room, ()))
    return seen


def test_apps_root_holds_only_the_doors_and_the_wiring() -> None:
    loose = {path.stem for path in (ROOT / "app").glob("*.py")} - DOORS_AND_WIRING
    assert not loose, f"modules at app/'s root that belong in a package: {sorted(loose)}"


def test_app_core_imports_no_other_package_of_app() -> None:
    assert _package_graph().get("app.core", set()) <= set()


def test_no_package_of_app_imports_one_that_imports_it_back() -> None:
    graph = _package_graph()
    loops = sorted(
        f"{room} -> {target}"
        for room, targets in graph.items()
        for target in targets
        if room in _reaches(graph, target)
    )
    assert not loops, "imports that come back round:\n" + "\n".join(loops)


def test_grader_imports_nothing_from_app() -> None:
    modules = _modules("grader")
    into_app = sorted(
        f"{name} -> {imported}"
        for name, path in modules.items()
        for imported in _imports(name, path, modules)
        if imported.split(".")[0] == "app"
    )
    assert not into_app
