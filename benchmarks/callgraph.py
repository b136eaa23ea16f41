"""Precision and recall of "who calls X" on hand-checked questions over real packages.

    python benchmarks/callgraph.py                      # sources under /work/data/callgraph/<package>
    python benchmarks/callgraph.py --root DIR --show    # another place; list every miss and wrong answer
    python benchmarks/callgraph.py --json

``benchmarks/data/callers_checked.jsonl`` holds one question per line: a package (name and
version), a qualified definition, the callers a person found by reading every line of the
package's source that calls the bare name (``\\bname\\s*\\(``) and deciding from the receiver's
type as the code states it, and a note on how doubtful sites were decided. A caller is
``path::qualified symbol`` (``path::<module>`` for module-level code).

Each package's source is copied from the installed distribution into ``ROOT/<package>/``
when missing (the version must match the data file's) — or, for a question with
``"source": "npm"``, unpacked from ``npm pack <package>@<version>`` — and indexed lexical-only
into ``ROOT/.index/<package>``. Three answers are scored, micro-averaged over (question, caller)
pairs, per package and overall:

- ``by name`` — every call whose last name part matches (the behaviour before resolution);
- ``resolved`` — calls the resolver proved to reach the definition;
- ``resolved + by name only`` — what ``get_callers`` returns: resolved, then unresolved same-named calls.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import shutil
import sqlite3
import subprocess
import sys
import tarfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from grepgraph.retrievers.codegraph.facts import RESOLVED
from grepgraph.retrievers.codegraph.symbols import SymbolGraph, SymbolRef
from grepgraph.retrievers.store.index import CodeIndex

DATA = Path(__file__).resolve().parent / "data" / "callers_checked.jsonl"
DEFAULT_ROOT = Path("/work/data/callgraph")
ANSWERS = ("by name", "resolved", "resolved + by name only")


@dataclass
class Tally:
    """True positives, wrong answers and misses of one answer kind."""

    found: int = 0
    wrong: int = 0
    missed: int = 0
    wrong_examples: list[str] = field(default_factory=list)
    missed_examples: list[str] = field(default_factory=list)

    def add(self, question: str, answer: set[str], expected: set[str]) -> None:
        """Score one question's answer."""
        self.found += len(answer & expected)
        self.wrong += len(answer - expected)
        self.missed += len(expected - answer)
        self.wrong_examples += [f"{question}: {caller}" for caller in sorted(answer - expected)]
        self.missed_examples += [f"{question}: {caller}" for caller in sorted(expected - answer)]

    @property
    def precision(self) -> float:  # noqa: D102
        return self.found / (self.found + self.wrong) if self.found + self.wrong else 1.0

    @property
    def recall(self) -> float:  # noqa: D102
        return self.found / (self.found + self.missed) if self.found + self.missed else 1.0


def caller_key(ref: SymbolRef) -> str:
    """``path::symbol`` as the data file writes callers."""
    return f"{ref.path}::{'<module>' if ref.kind == 'module' else ref.symbol}"


def unpack_npm(package: str, version: str, source: Path) -> None:
    """``npm pack`` the exact version and unpack its ``package/`` folder into ``source``."""
    work = source.parent / ".npm"
    work.mkdir(parents=True, exist_ok=True)
    packed = subprocess.run(["npm", "pack", f"{package}@{version}", "--silent"], cwd=work, check=True,
                            capture_output=True, text=True).stdout.strip().splitlines()[-1]
    with tarfile.open(work / packed) as archive:
        archive.extractall(work / package, filter="data")
    shutil.move(work / package / "package", source)


def prepare(package: str, version: str, root: Path, origin: str = "installed") -> Path:
    """The package's source under ``root`` (copied from the installed distribution if missing), indexed."""
    source = root / package
    if not source.exists() and origin == "npm":
        unpack_npm(package, version, source)
    elif not source.exists():
        installed = importlib.metadata.version(package)
        if installed != version:
            raise SystemExit(f"{package} {installed} is installed; the hand-checked answers are for {version}")
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit(f"{package} is not an installed package")
        shutil.copytree(next(iter(spec.submodule_search_locations)), source / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    index_dir = root / ".index" / package
    CodeIndex(source, index_dir).update(embed=False, rebuild=True)  # the chunker may have changed, the files not
    return index_dir / "index.sqlite"


def score(questions: list[dict], root: Path) -> dict[str, dict[str, Tally]]:
    """Tallies per package (and ``overall``) per answer kind."""
    tallies: dict[str, dict[str, Tally]] = defaultdict(lambda: {answer: Tally() for answer in ANSWERS})
    databases: dict[str, Path] = {}
    for question in questions:
        package = question["package"]
        if package not in databases:
            databases[package] = prepare(package, question["version"], root, question.get("source", "installed"))
        graph = SymbolGraph(sqlite3.connect(databases[package]))
        callers = graph.callers(question["question"])
        answers = {
            "by name": {caller_key(ref) for ref in graph.callers_by_name(question["question"])},
            "resolved": {caller_key(ref) for ref in callers if ref.resolution == RESOLVED},
            "resolved + by name only": {caller_key(ref) for ref in callers},
        }
        expected = set(question["expected"])
        for answer, found in answers.items():
            for group in (package, "overall"):
                tallies[group][answer].add(f"{package} {question['question']}", found, expected)
        graph.connection.close()
    return tallies


def print_table(tallies: dict[str, dict[str, Tally]], counts: dict[str, int], show: bool) -> None:
    """A markdown table: precision / recall per package and answer kind."""
    print("| package | questions | callers | " + " | ".join(f"{a} P / R" for a in ANSWERS) + " |")
    print("|---|---:|---:|" + "---:|" * len(ANSWERS))
    for group in sorted(tallies, key=lambda name: (name == "overall", name)):
        by_answer = tallies[group]
        expected = by_answer["resolved"].found + by_answer["resolved"].missed
        cells = " | ".join(f"{t.precision:.2f} / {t.recall:.2f}" for t in by_answer.values())
        print(f"| {group} | {counts[group]} | {expected} | {cells} |")
    if show:
        for answer in ("resolved", "resolved + by name only"):
            overall = tallies["overall"][answer]
            print(f"\n{answer}: wrong answers")
            print("\n".join(f"  {line}" for line in overall.wrong_examples) or "  none")
            print(f"{answer}: missed callers")
            print("\n".join(f"  {line}" for line in overall.missed_examples) or "  none")


def main() -> int:
    """Score the hand-checked questions and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DATA, help="hand-checked questions (JSON lines)")
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="where package sources and indexes live")
    parser.add_argument("--show", action="store_true", help="list every wrong answer and missed caller")
    parser.add_argument("--json", action="store_true", help="precision and recall as JSON")
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    tallies = score(questions, args.root)
    counts: dict[str, int] = defaultdict(int)
    for question in questions:
        counts[question["package"]] += 1
        counts["overall"] += 1
    if args.json:
        print(json.dumps({group: {answer: {"precision": round(t.precision, 3), "recall": round(t.recall, 3)}
                                  for answer, t in by_answer.items()} for group, by_answer in tallies.items()},
                         indent=2))
    else:
        print_table(tallies, counts, args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
