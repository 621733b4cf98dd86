"""Checks the import graph of the product code: no import circle, and no import that points up
the layers (CI runs it; see CONTRIBUTING.md, "Layers").

Every ``import`` and ``from ... import`` of the four distributions' modules counts, also inside
functions; imports under ``if TYPE_CHECKING:`` do not (they never run). Tests, benchmarks and the
generated protobuf code (``mlagents.envs.communicator_objects``) are not checked.

Usage::

    python tools/check_imports.py            # exit 1 and one line per problem, or "ok ..."
    python tools/check_imports.py --graph    # also print every module's imports
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Where each top package's sources are.
SOURCES = {
    "mlagents.envs": ROOT / "ml-agents-envs" / "mlagents" / "envs",
    "mlagents.trainers": ROOT / "ml-agents" / "mlagents" / "trainers",
    "mlagents.example_envs": ROOT / "example-envs" / "mlagents" / "example_envs",
    "gym_unity": ROOT / "gym-unity" / "gym_unity",
}
GENERATED = "mlagents.envs.communicator_objects"

#: Which top packages a package may import (besides itself). The example environments reach the
#: envs package only for the generated protobuf messages and its leaf modules, which import
#: nothing of mlagents.envs but those messages (checked below).
ALLOWED = {
    "mlagents.envs": set(),
    "mlagents.example_envs": {"mlagents.envs"},
    "mlagents.trainers": {"mlagents.envs", "mlagents.example_envs"},
    "gym_unity": {"mlagents.envs"},
}
#: The only modules of mlagents.example_envs that the trainers may import (its public surface).
EXAMPLE_ENVS_PUBLIC = {"mlagents.example_envs"}
#: Inside mlagents.example_envs the SDK knows nothing of the scenes built on it.
SDK = "mlagents.example_envs.sdk"


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every product module."""
    modules: dict[str, Path] = {}
    for package, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            relative = path.relative_to(folder).with_suffix("")
            parts = [part for part in relative.parts]
            if "tests" in parts:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join([package, *parts])
            if name == GENERATED or name.startswith(GENERATED + "."):
                continue
            modules[name] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, skipping the bodies of ``if TYPE_CHECKING:``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imported_names(name: str, path: Path, known: Iterable[str]) -> set[str]:
    """The product modules that module ``name`` (file ``path``) imports."""
    known = set(known)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def add(candidate: str) -> None:
        # The longest known module that is the candidate or contains it.
        while candidate:
            if candidate in known:
                found.add(candidate)
                return
            if candidate == GENERATED or candidate.startswith(GENERATED + "."):
                found.add(GENERATED)
                return
            candidate = candidate.rpartition(".")[0]

    for node in _import_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
            continue
        if node.level:
            base_parts = package.split(".")
            base_parts = base_parts[: len(base_parts) - (node.level - 1)]
            base = ".".join(base_parts + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        for alias in node.names:
            full = f"{base}.{alias.name}"
            if full in known:
                found.add(full)
            else:
                add(base)
    found.discard(name)
    return found


def _inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def top_package(name: str) -> str:
    return next(package for package in SOURCES if name == package or name.startswith(package + "."))


def layer_problems(graph: dict[str, set[str]]) -> list[str]:
    problems = []
    for module, imports in sorted(graph.items()):
        source = top_package(module)
        for target in sorted(imports):
            if target == GENERATED:
                continue
            destination = top_package(target)
            if destination != source and destination not in ALLOWED[source]:
                problems.append(f"{module} imports {target}: {source} may not import {destination}")
            elif (
                source == "mlagents.example_envs"
                and destination == "mlagents.envs"
                and graph.get(target, set()) - {GENERATED}
            ):
                problems.append(
                    f"{module} imports {target}: the example environments use only the protobuf messages "
                    "and the leaf modules of mlagents.envs (which import nothing of it but those messages)"
                )
            elif (
                source == "mlagents.trainers"
                and destination == "mlagents.example_envs"
                and target not in EXAMPLE_ENVS_PUBLIC
            ):
                problems.append(
                    f"{module} imports {target}: the trainers use only mlagents.example_envs' public functions"
                )
            elif _inside(module, SDK) and destination == "mlagents.example_envs" and not _inside(target, SDK):
                problems.append(f"{module} imports {target}: the SDK may not import the scenes")
    return problems


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        # Iterative depth-first search: (module, iterator over its imports).
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return components


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    return {name: imported_names(name, path, files) for name, path in files.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graph", action="store_true", help="print every module's imports")
    options = parser.parse_args(argv)
    graph = import_graph()
    if options.graph:
        for module, imports in sorted(graph.items()):
            print(f"{module}: {', '.join(sorted(imports)) or '-'}")
    problems = [f"import circle: {' <-> '.join(component)}" for component in circles(graph)]
    problems += layer_problems(graph)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problems in the imports of {len(graph)} modules", file=sys.stderr)
        return 1
    print(f"ok: {len(graph)} modules, no import circle, every import points down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
