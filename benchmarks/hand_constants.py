#!/usr/bin/env python3
"""Count the hand-set numbers, regexes and word lists that decide the ranking, at any commit.

A hand-set number is a numeric literal other than 0 and 1 (and their negatives), outside docstrings and not an
index or a slice bound, in the
modules that rank: the policy, the evidence and message rules, query shape, fusion, the searcher and the
graph's heuristics (at commits before the layout move, the same modules under their old flat names). A regex is
a ``re.compile`` call; a word list is a set, frozenset, tuple or list literal of three or more strings.

    python benchmarks/hand_constants.py                  # the working tree
    python benchmarks/hand_constants.py --rev d0959cf    # another commit
    python benchmarks/hand_constants.py --list           # each number counted, with its line
    python benchmarks/hand_constants.py --since d0959cf  # which of that commit's numbers are still counted

``--since`` matches mechanically: an old number is still here when a counted number of today has its value on a
line that reads the same (spaces aside) or assigns the same name. A renamed constant, or a line edited around
its number, therefore reads as gone; the listing shows every old number with its verdict, to be read.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RANKING_MODULES = ("retrievers/rank/", "retrievers/query/shape.py", "retrievers/query/described.py",
                   "retrievers/query/asked.py", "graphs/heuristics.py")
FLAT_RANKING_MODULES = ("retrievers/ranking.py", "retrievers/evidence.py", "retrievers/messages.py",
                        "retrievers/query_shape.py", "retrievers/fusion.py", "retrievers/search.py",
                        "graphs/heuristics.py")
TRIVIAL = frozenset({0, 1, -1})


def files_at(rev: str | None) -> dict[str, str]:
    """The ranking modules' texts at ``rev`` (the working tree when ``None``)."""
    if rev is None:
        paths = [path for prefix in RANKING_MODULES for path in sorted(ROOT.glob(prefix + ("*.py" if
                 prefix.endswith("/") else "")))]
        return {str(path.relative_to(ROOT)): path.read_text() for path in paths}
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", rev], capture_output=True,
                            text=True, check=True).stdout.split()
    wanted = RANKING_MODULES if any(name.startswith("retrievers/rank/") for name in listed) else FLAT_RANKING_MODULES
    chosen = [name for name in listed if name.endswith(".py") and any(
        name == prefix or (prefix.endswith("/") and name.startswith(prefix)) for prefix in wanted)]
    return {name: subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{name}"], capture_output=True,
                                 text=True, check=True).stdout for name in chosen}


def docstring_nodes(tree: ast.AST) -> set[int]:
    """The ids of every docstring's constant node."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def index_nodes(tree: ast.AST) -> set[int]:
    """The ids of the constants that index or slice (``row[3]``, ``text[:2]``): positions, not choices."""
    return {id(inner) for node in ast.walk(tree) if isinstance(node, ast.Subscript)
            for inner in ast.walk(node.slice) if isinstance(inner, ast.Constant)}


def hand_set_numbers(tree: ast.AST) -> list[ast.Constant]:
    """The numeric literals of a module that count as hand-set (see the module's docstring)."""
    skipped = docstring_nodes(tree) | index_nodes(tree)
    return [node for node in ast.walk(tree) if isinstance(node, ast.Constant) and id(node) not in skipped
            and type(node.value) in (int, float) and node.value not in TRIVIAL]


def numbers_at(rev: str | None) -> list[tuple[str, int, int | float, str]]:
    """Every counted number at ``rev``: (module, line number, value, the line's text)."""
    found = []
    for name, text in files_at(rev).items():
        lines = text.splitlines()
        for node in sorted(hand_set_numbers(ast.parse(text)), key=lambda node: (node.lineno, node.col_offset)):
            found.append((name, node.lineno, node.value, lines[node.lineno - 1].strip()))
    return found


def assigned_name(line: str) -> str | None:
    """``NAME`` of a line ``NAME = ...`` or ``NAME: type = ...`` (a module constant), else None."""
    head = line.split("=", 1)[0].split(":", 1)[0].strip() if "=" in line else ""
    return head if head.isidentifier() and head.isupper() else None


def still_counted(old: list[tuple[str, int, int | float, str]], new: list[tuple[str, int, int | float, str]],
                  ) -> list[bool]:
    """For each old number: whether a new one has its value on a line that reads the same or names it the same."""
    lines = {(value, " ".join(text.split())) for _, _, value, text in new}
    names = {(value, assigned_name(text)) for _, _, value, text in new if assigned_name(text)}
    return [(value, " ".join(text.split())) in lines or (value, assigned_name(text)) in names
            for _, _, value, text in old]


def count(text: str) -> tuple[int, int, int]:
    """(numbers, regexes, word lists) of one module."""
    tree = ast.parse(text)
    numbers = len(hand_set_numbers(tree))
    regexes = word_lists = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compile" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re":
            regexes += 1
        elif isinstance(node, (ast.Set, ast.Tuple, ast.List)) and sum(
                isinstance(item, ast.Constant) and isinstance(item.value, str) for item in node.elts) >= 3:
            word_lists += 1
    return numbers, regexes, word_lists


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", help="a commit (default: the working tree)")
    parser.add_argument("--list", action="store_true", help="print each counted number with its line instead")
    parser.add_argument("--since", help="a commit: which of its counted numbers ``--rev`` still counts")
    args = parser.parse_args()
    if args.list:
        for name, line, value, text in numbers_at(args.rev):
            print(f"{name}:{line}: {value!r:<8} {text[:100]}")
        return
    if args.since:
        old = numbers_at(args.since)
        kept = still_counted(old, numbers_at(args.rev))
        for (name, line, value, text), here in zip(old, kept):
            print(f"{'kept' if here else 'gone'}  {name}:{line}: {value!r:<8} {text[:90]}")
        print(f"{args.since}: {len(old)} numbers; still counted {sum(kept)}, gone {len(old) - sum(kept)}")
        return
    totals = [0, 0, 0]
    print(f"{'module':<40} {'numbers':>8} {'regexes':>8} {'word lists':>10}")
    for name, text in files_at(args.rev).items():
        found = count(text)
        totals = [a + b for a, b in zip(totals, found)]
        if any(found):
            print(f"{name:<40} {found[0]:>8} {found[1]:>8} {found[2]:>10}")
    print(f"{'total':<40} {totals[0]:>8} {totals[1]:>8} {totals[2]:>10}")


if __name__ == "__main__":
    main()
