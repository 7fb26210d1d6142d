"""The circles in tcpeval's Python import graph: groups of modules that import one another.

    python bench/import_circles.py [--all]

Counts the imports at a module's top level (those that run when it is imported); `--all` adds
the ones inside functions, which the code uses on purpose to import late (a command's heavy
libraries, a circle broken by hand). Prints each strongly connected group of two or more
modules, and their number; the Rust crates' modules are checked by the compiler instead.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "tcpeval"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, everywhere: bool, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text())
    nodes = ast.walk(tree) if everywhere else iter(tree.body)
    found: set[str] = set()
    for node in nodes:
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        found |= {name for name in names if name in known}
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of two or more nodes."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="count imports inside functions")
    args = parser.parse_args()
    paths = sorted(PACKAGE.rglob("*.py"))
    known = {module_name(path) for path in paths}
    graph = {module_name(path): imports(path, args.all, known) for path in paths}
    for name in graph:  # a package imported for its submodule is not an edge to itself
        graph[name].discard(name)
    found = circles(graph)
    for group in found:
        print(" ⇄ ".join(group))
    print(f"{len(found)} circles among {len(graph)} modules")


if __name__ == "__main__":
    main()
