"""What issue reports paste, made from mined queries: stack traces (what a frame means) and code blocks.

Issue reports paste a traceback; too few mined queries did (a file named in a commit message, now and then) for the
learned blend to weigh a mentioned file or a frame's function, so such queries fell back to the hand-set blend.
An error-message query (a message → the definition that raises it, with the raising line) becomes a traceback as
the language's runtime prints it: the user's own frame (a path outside the package), the chain of callers of the
raising definition the index knows (up to :data:`MAX_CALLERS`, a non-test caller first), then the raising frame,
each with an installed
package's path (``site-packages/``, ``node_modules/``, the Go module cache, the Cargo registry) around the
package's own path. The answer stays the raising definition: the frame that names it is evidence, not the answer
by construction, as its callers are framed too (a real trace has several of the package's frames).

A mined code line (a line → its definition) becomes a pasted block: the lines around it in the definition, long
enough to read as pasted, so the blend learns what a block's exact lines are worth.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# A user's home, as runtimes print absolute paths.
HOME = "/home/dev"
# The package's frames above the raising one, when the index knows that many callers.
MAX_CALLERS = 3


@dataclass(frozen=True)
class Frame:
    """One stack frame: a file of the package (or the user's), the line, and the definition's qualified name."""

    path: str
    line: int
    symbol: str
    source: str = ""  # the frame's source line, as Python prints it

    @property
    def name(self) -> str:
        """The last part of the qualified name (what a Python traceback prints)."""
        return self.symbol.rsplit(".", 1)[-1]


def installed_path(language: str, package: str, path: str) -> str:
    """Where an installed copy of the package's file lives, as a runtime prints it."""
    if language == "python":
        inner = path.removeprefix("src/")
        return f"{HOME}/.venv/lib/python3.11/site-packages/{inner}"
    if language in ("javascript", "typescript"):
        return f"{HOME}/app/node_modules/{package}/{path}"
    if language == "go":
        return f"{HOME}/go/pkg/mod/example.com/{package}@v1.0.0/{path}"
    if language == "rust":
        return f"{HOME}/.cargo/registry/src/index.crates.io-6f17d22bba15001f/{package}-1.0.0/{path}"
    return path


def java_frame(frame: Frame) -> str:
    """``at com.pkg.Type.method(Type.java:12)``: the package from the path under its source root."""
    path = PurePosixPath(frame.path)
    folder = f"/{path.parent}/"
    if "/main/java/" in folder:
        folder = folder.split("/main/java/", 1)[1]  # src/main/java/com/...
    elif "." in path.parts[0]:
        folder = folder.split("/", 2)[2]  # a JDK module's folder: java.base/java/io/...
    elif "/src/" in folder:
        folder = folder.split("/src/", 1)[1]
    parts = [part for part in folder.split("/") if part not in ("", ".")]
    qualified = ".".join([*parts, frame.symbol]) if "." in frame.symbol else ".".join([*parts, path.stem, frame.symbol])
    return f"\tat {qualified}({path.name}:{frame.line})"


def render(language: str, package: str, message: str, frames: list[Frame], entry: bool = True) -> str:
    """The trace as the language's runtime prints it; ``frames`` outermost first, the raising one last.

    ``entry``: the program's own entry frame too (a trace pasted whole; without it, its end was pasted).
    """
    if language == "python":
        entry_frame = [f'  File "{HOME}/project/main.py", line 14, in <module>', "    main()"] if entry else []
        lines = ["Traceback (most recent call last):", *entry_frame]
        for frame in frames:
            where = installed_path(language, package, frame.path)
            lines.append(f'  File "{where}", line {frame.line}, in {frame.name}')
            if frame.source:
                lines.append(f"    {frame.source}")
        return "\n".join([*lines, message if ":" in message.split(" ", 1)[0] else f"ValueError: {message}"])
    if language in ("javascript", "typescript"):
        head = message if ":" in message.split(" ", 1)[0] else f"Error: {message}"
        lines = [head] + [f"    at {frame.symbol} ({installed_path(language, package, frame.path)}:{frame.line}:9)"
                          for frame in reversed(frames)]
        entry_frame = [f"    at Object.<anonymous> ({HOME}/app/index.js:7:3)"] if entry else []
        return "\n".join([*lines, *entry_frame])
    if language == "java":
        head = message if ":" in message.split(" ", 1)[0] else f"java.lang.IllegalStateException: {message}"
        lines = [f'Exception in thread "main" {head}'] + [java_frame(frame) for frame in reversed(frames)]
        entry_frame = ["\tat com.example.app.Main.main(Main.java:21)"] if entry else []
        return "\n".join([*lines, *entry_frame])
    if language == "go":
        lines = [f"panic: {message}", "", "goroutine 1 [running]:"]
        for frame in reversed(frames):
            lines += [f"example.com/{package}.{frame.symbol}(...)",
                      f"\t{installed_path(language, package, frame.path)}:{frame.line} +0x1d"]
        entry_frame = ["main.main()", f"\t{HOME}/app/main.go:12 +0x25"] if entry else []
        return "\n".join([*lines, *entry_frame, "exit status 2"])
    if language == "rust":
        lines = [f"Error: {message}", "", "Stack backtrace:"]
        for number, frame in enumerate(reversed(frames)):
            crate = package.removesuffix("-rs").replace("-", "_")
            lines += [f"   {number}: {crate}::{frame.symbol.replace('.', '::')}",
                      f"             at {installed_path(language, package, frame.path)}:{frame.line}:5"]
        entry_frame = [f"   {len(frames)}: app::main", "             at ./src/main.rs:12:5"] if entry else []
        return "\n".join([*lines, *entry_frame])
    raise ValueError(f"no stack trace format for {language}")


def source_line(corpus_file: str, line: int) -> str:
    """The stripped text of a line of a file (empty when it can't be read)."""
    try:
        with open(corpus_file, encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle, start=1):
                if number == line:
                    return text.strip()
    except OSError:
        return ""
    return ""


def caller_of(connection: sqlite3.Connection, symbol: str, rng: random.Random) -> Frame | None:
    """One definition the index records calling ``symbol`` (by its last part), a non-test one when there is one."""
    name = symbol.rsplit(".", 1)[-1]
    rows = connection.execute(
        "SELECT e.path, e.source, e.line, f.is_test FROM edges e JOIN "
        "(SELECT path, MAX(is_test) AS is_test FROM chunks GROUP BY path) f ON f.path = e.path "
        "WHERE e.kind = 'calls' AND e.target = ? AND e.source != '' AND e.source != ?",
        (name, symbol)).fetchall()
    if not rows:
        return None
    plain = [row for row in rows if not row[3]] or rows
    path, source, line, _ = rng.choice(sorted(plain))
    return Frame(path, int(line), source)


def traceback_query(query: dict, connection: sqlite3.Connection, corpus: str) -> dict | None:
    """An error-message query as a pasted stack trace (``None`` when its gold has no raising line)."""
    gold = query["gold"][0]
    if not gold.get("line"):
        return None
    rng = random.Random(query["id"])
    raising = Frame(gold["path"], int(gold["line"]), gold["symbol"],
                    source_line(f"{corpus}/{gold['path']}", int(gold["line"])))
    frames = [raising]
    while len(frames) <= MAX_CALLERS and (caller := caller_of(connection, frames[0].symbol, rng)) is not None:
        if any(frame.symbol == caller.symbol for frame in frames):
            break  # recursion: the chain would repeat
        frames.insert(0, Frame(caller.path, caller.line, caller.symbol,
                               source_line(f"{corpus}/{caller.path}", caller.line)))
    # Users paste a whole trace or its end: keep the innermost 1..all frames, the entry frame only with all.
    kept = rng.randint(1, len(frames))
    text = render(query["language"], query["package"], query["query"], frames[-kept:], entry=kept == len(frames))
    return {**query, "id": query["id"].replace("error_message", "traceback"), "kind": "traceback", "query": text,
            "gold": [gold]}


# A pasted block: the lines around a mined line, enough of them (and of words) to read as a paste of a body.
BLOCK_LINES = 24
BLOCK_MIN_WORDS = 61


def code_block_query(query: dict, corpus: str) -> dict | None:
    """A mined code line with the lines around it in its definition, as pasted (``None``: too short a block)."""
    gold = query["gold"][0]
    try:
        lines = Path(corpus, gold["path"]).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    start, end = gold["start_line"], min(gold["end_line"], len(lines))
    line = gold.get("line") or start
    first = max(start, min(line - BLOCK_LINES // 2, end - BLOCK_LINES + 1))
    block = lines[first - 1:min(end, first - 1 + BLOCK_LINES)]  # never past the definition's end
    # Pasted from an editor: the block's common indentation goes; blank lines inside stay.
    indent = min((len(text) - len(text.lstrip()) for text in block if text.strip()), default=0)
    text = "\n".join(text[indent:] for text in block).strip("\n")
    if len(text.split()) < BLOCK_MIN_WORDS:
        return None
    return {**query, "id": query["id"].replace("code_line", "code_block"), "kind": "code_block", "query": text,
            "gold": [gold]}
