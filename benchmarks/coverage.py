"""Coverage of the chunkers: the share of non-blank lines that lie in some chunk, per language.

    python benchmarks/coverage.py CORPUS_DIR [CORPUS_DIR ...]
    python benchmarks/coverage.py --json CORPUS_DIR ...    # one JSON object per corpus
    python benchmarks/coverage.py --show 5 CORPUS_DIR      # also list up to 5 uncovered lines per language

Each directory is walked as ``grepgraph index`` walks a repository (``.gitignore``, skipped
directories, size limit, generated and minified files) and every accepted file is chunked
as the indexer chunks it (in this process, one file at a time). The table has, per
language: files, non-blank lines, the share of them covered (``retrievers.parse.coverage``
defines it; it must be 100.0%), chunks, and windows (continuation chunks, ``part > 0``).
Exits with status 1 when any line is uncovered.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from grepgraph.retrievers.parse.chunking import parse_file
from grepgraph.retrievers.parse.coverage import non_blank_line_count, uncovered_lines
from grepgraph.retrievers.parse.parallel import decode_source
from grepgraph.retrievers.source.walk import generated_reason, walk_repository


@dataclass
class LanguageTally:
    """Coverage figures of one language in one corpus."""

    files: int = 0
    lines: int = 0
    uncovered: int = 0
    chunks: int = 0
    windows: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def covered_share(self) -> float:
        """Percentage of non-blank lines that lie in some chunk."""
        return 100.0 * (self.lines - self.uncovered) / self.lines if self.lines else 100.0


def tally_corpus(root: Path, show: int = 0) -> dict[str, LanguageTally]:
    """Per-language coverage figures of one directory, walked and chunked like the indexer does."""
    tallies: dict[str, LanguageTally] = defaultdict(LanguageTally)
    for source in walk_repository(root).files:
        try:
            data = source.absolute.read_bytes()
        except OSError:
            continue
        if generated_reason(source.absolute.name, data[:8192]):
            continue
        text = decode_source(data)
        parsed = parse_file(source.path, text, source.language)
        missing = uncovered_lines(text, parsed.chunks)
        tally = tallies[source.language]
        tally.files += 1
        tally.lines += non_blank_line_count(text)
        tally.uncovered += len(missing)
        tally.chunks += len(parsed.chunks)
        tally.windows += sum(1 for chunk in parsed.chunks if getattr(chunk, "part", 0) > 0)
        tally.examples.extend(f"{source.path}:{number}" for number in missing[: max(0, show - len(tally.examples))])
    return dict(tallies)


def markdown_table(name: str, tallies: dict[str, LanguageTally]) -> str:
    """One corpus's figures as a Markdown table, with a total row."""
    rows = [f"### {name}", "", "| language | files | non-blank lines | covered | chunks | windows |",
            "|---|---|---|---|---|---|"]
    total = LanguageTally()
    for language in sorted(tallies):
        tally = tallies[language]
        rows.append(f"| {language} | {tally.files} | {tally.lines} | {tally.covered_share:.1f}% "
                    f"| {tally.chunks} | {tally.windows} |")
        for attribute in ("files", "lines", "uncovered", "chunks", "windows"):
            setattr(total, attribute, getattr(total, attribute) + getattr(tally, attribute))
    rows.append(f"| **all** | {total.files} | {total.lines} | {total.covered_share:.1f}% "
                f"| {total.chunks} | {total.windows} |")
    for language in sorted(tallies):
        for example in tallies[language].examples:
            rows.append(f"- uncovered ({language}): {example}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Run the coverage check on every directory given; 1 when a line is uncovered."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="+", type=Path, help="directories to walk (missing ones are skipped)")
    parser.add_argument("--json", action="store_true", help="one JSON object per corpus instead of tables")
    parser.add_argument("--show", type=int, default=0, help="list up to N uncovered lines per language")
    arguments = parser.parse_args(argv)
    any_uncovered = False
    for root in arguments.corpora:
        if not root.is_dir():
            print(f"skipped (not a directory): {root}", file=sys.stderr)
            continue
        started = time.perf_counter()
        tallies = tally_corpus(root, arguments.show)
        any_uncovered = any_uncovered or any(t.uncovered for t in tallies.values())
        if arguments.json:
            print(json.dumps({"corpus": str(root), "seconds": round(time.perf_counter() - started, 2),
                              "languages": {k: {**vars(v), "covered": round(v.covered_share, 3)}
                                            for k, v in sorted(tallies.items())}}))
        else:
            print(markdown_table(root.name, tallies))
            print(f"({time.perf_counter() - started:.1f} s)\n")
    return 1 if any_uncovered else 0


if __name__ == "__main__":
    raise SystemExit(main())
