#!/usr/bin/env python3
"""Import cycles among the Rust core's files: the strongly connected components of the
graph whose edges are `use crate::...` / `crate::...` / `super::...` paths outside test
modules. A `pub use` of a child module's item (`pub use child::Item;`) is not an edge: it
would merge every parent with its children.

    python tools/import_cycles.py              # the components with more than one file
    python tools/import_cycles.py --quiet      # exit status 1 if there is any
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "crates" / "shoal-core" / "src"


def module_of(path: Path) -> tuple[str, ...]:
    parts = path.relative_to(SRC).with_suffix("").parts
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def without_tests(text: str) -> str:
    """The text before a `#[cfg(test)]` module (inline tests sit at the end of a file)."""
    cut = re.search(r"^#\[cfg\(test\)\]\s*\n\s*(pub(\(\w+\))?\s+)?mod \w+", text, re.M)
    return text[: cut.start()] if cut else text


def edges(files: dict[tuple[str, ...], Path]) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in files}
    for module, path in files.items():
        text = without_tests(path.read_text())
        # a child's item re-exported by its parent is not a dependency of the parent
        text = re.sub(r"^pub(\(crate\))? use (self::)?(?!crate::|super::)\w+::.*;$", "", text, flags=re.M)
        text = re.sub(r"//.*", "", text)
        is_mod_file = path.name in ("mod.rs", "lib.rs")
        for m in re.finditer(r"\b(crate|super)((?:::\w+)+)", text):
            parts = m.group(2).split("::")[1:]
            if m.group(1) == "crate":
                base: tuple[str, ...] = ()
            else:
                base = module if is_mod_file else module[:-1]
                base = base[:-1]
            target = base + tuple(parts)
            while target and target not in files:
                target = target[:-1]
            if target and target != module:
                graph[module].add(target)
    return graph


def components(graph: dict[tuple[str, ...], set[tuple[str, ...]]]) -> list[list[tuple[str, ...]]]:
    index: dict[tuple[str, ...], int] = {}
    low: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, ...]] = []
    on: set[tuple[str, ...]] = set()
    out: list[list[tuple[str, ...]]] = []
    sys.setrecursionlimit(10_000)

    def visit(v: tuple[str, ...]) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    for v in graph:
        if v not in index:
            visit(v)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing; exit 1 on a cycle")
    args = parser.parse_args()
    files = {module_of(p): p for p in sorted(SRC.rglob("*.rs"))}
    cycles = sorted((c for c in components(edges(files)) if len(c) > 1), key=len, reverse=True)
    if not args.quiet:
        for comp in cycles:
            names = sorted("/".join(m) or "lib" for m in comp)
            print(f"{len(comp)} files: {', '.join(names)}")
        if not cycles:
            print("no import cycle")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
