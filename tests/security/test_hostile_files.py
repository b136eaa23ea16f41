"""A repository of files built to trip an indexer, indexed and searched through the command line.

Symlinks out of the repository and in loops, FIFOs, a socket, /dev/null and /dev/zero linked in, a 50 MB sparse
file, a 1 MB line in a source file, binary and Latin-1 files, file names that are not UTF-8, 100,000 empty files,
a path 200 folders deep and a ``.gitignore`` of pathological patterns. Each file is indexed or skipped with its
reason, nothing hangs (every command runs under a subprocess timeout), no command prints a traceback, and nothing
outside the repository is read or sent anywhere: where strace runs, every file the indexer opens and every socket
it connects are checked.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from grepgraph.retrievers.parse.parallel import PARALLEL_PARSE_MIN_FILES

import grepgraph
from grepgraph import graphs, prompts, retrievers

# The installed command, as a user runs it (``python -m`` would also put the current folder on sys.path).
GREPGRAPH = [str(Path(sys.executable).with_name("grepgraph"))]
CLI_TIMEOUT_S = 600  # the index of 100,000 files under strace on a loaded machine; a hang still fails
MARKER = "quokkazanzibar"  # only outside the repository: never indexed, never found
EMPTY_FILES = 100_000
DEPTH = 200
LONG_LINE_CHARS = 980_000  # the file stays under the 1,000,000-byte limit: the line itself is indexed
WILDCARDS = "*?" * 14
SYSTEM_FOLDERS = ("/proc", "/sys", "/dev", "/etc", "/usr", "/lib", "/lib64")


def build_hostile_repo(root: Path) -> tuple[Path, Path]:
    """The repository and, next to it, the folder its symlinks point out to."""
    repo, outside = root / "repo", root / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.py").write_text(f'def leaked():\n    return "{MARKER}"\n')
    (outside / "folder" / "notes.py").write_text(f"# {MARKER}\ndef {MARKER}_notes():\n    pass\n")

    src = repo / "src"
    src.mkdir(parents=True)
    (src / "shelf.py").write_text(
        'def stack_boxes(boxes):\n    """Stack boxes on the shelf."""\n    return sorted(boxes)\n')
    (src / "payment_processing.py").write_text("def settle_invoice(invoice):\n    return invoice.total\n")

    links = repo / "links"
    links.mkdir()
    os.symlink(outside / "secret.py", links / "secret.py")
    os.symlink(outside / "folder", links / "folder")
    os.symlink(outside / "folder", links / "hidden")  # a gitignored folder's files are counted: not this one's
    os.symlink(outside / "folder", repo / "vendor")  # nor a build or vendor folder's
    os.symlink("loop_b.py", links / "loop_a.py")
    os.symlink("loop_a.py", links / "loop_b.py")
    os.symlink("..", links / "parent")
    os.symlink("/dev/null", links / "null.py")
    os.symlink("/dev/zero", links / "zero.py")

    special = repo / "special"
    special.mkdir()
    os.mkfifo(special / "pipe.py")  # reading it would block forever
    os.mkfifo(special / "pipe")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(special / "sock.py"))

    big = repo / "big"
    big.mkdir()
    with open(big / "huge.py", "wb") as handle:  # sparse: 50 MB that take no space
        handle.write(b"def before_the_hole():\n    return 1\n")
        handle.truncate(50 * 1024 * 1024)
    numbers = ", ".join(str(n) for n in range(200_000))[:LONG_LINE_CHARS]
    line = "TABLE = [" + numbers[: numbers.rfind(",")] + ", 'needle_in_long_line']"
    (big / "long_line.py").write_text(
        "def before_long_line():\n    return 1\n\n\n" + line + "\n\n\ndef after_long_line():\n    return 2\n")

    odd = repo / "odd"
    odd.mkdir()
    (odd / "blob.py").write_bytes(b"\x00\x01\xffbinary\x00" * 100)
    (odd / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    (odd / "latin.py").write_bytes('def caf\xe9_menu():\n    return "cr\xe8me br\xfbl\xe9e"\n'.encode("latin-1"))
    odd_bytes = os.fsencode(odd)
    with open(odd_bytes + b"/caf\xe9.py", "wb") as handle:
        handle.write(b"def named_in_latin_one():\n    return 1\n")
    os.mkdir(odd_bytes + b"/d\xe9j\xe0")
    with open(odd_bytes + b"/d\xe9j\xe0/vu.py", "wb") as handle:
        handle.write(b"def seen_before():\n    return 1\n")

    bottom = repo.joinpath("deep", *["d"] * DEPTH)
    bottom.mkdir(parents=True)
    (bottom / "bottom.py").write_text("def at_the_bottom_of_the_well():\n    return 200\n")

    ignoring = repo / "ignoring"
    ignoring.mkdir()
    (ignoring / ".gitignore").write_text(WILDCARDS + "\n")  # any name of 14 characters or more
    (ignoring / "very_long_file_name.py").write_text("def hidden_by_wildcards():\n    pass\n")
    (ignoring / "short.py").write_text("def kept_short():\n    pass\n")
    storm = ["!", "!!", "!" * 50, "!\\!", "! ", "!/", "!*.nothing", "!!!!*.nothing"] * 100
    pathological = [
        WILDCARDS + "Z",  # backtracks on every long name, where globs run on a backtracking engine
        "**/" * 60 + "*.bak",
        "*a" * 5000,  # 10,000 characters
        "[", "src/[unclosed", "*.[py",
        "ignored_by_rule.py",
        "links/hidden",
    ]
    (repo / ".gitignore").write_text("\n".join(storm + pathological + storm) + "\n")
    (repo / "ignored_by_rule.py").write_text("def ignored():\n    pass\n")

    for folder in range(4):
        base = os.fsencode(repo / "empty" / f"e{folder}")
        os.makedirs(base)
        for number in range(EMPTY_FILES // 4):
            os.close(os.open(base + b"/f%05d.py" % number, os.O_CREAT | os.O_WRONLY, 0o644))
    return repo, outside


# --------------------------------------------------------------------------- strace
def strace_command() -> list[str] | None:
    """strace following every process, or None where it is missing or may not trace here.

    ``--seccomp-bpf`` stops the processes at the traced calls only: a third of the time on 100,000 opens.
    """
    if not shutil.which("strace"):
        return None
    for command in (["strace", "-f", "--seccomp-bpf"], ["strace", "-f"]):
        probe = subprocess.run([*command, "-o", os.devnull, "true"], capture_output=True, timeout=60)
        if probe.returncode == 0:  # ptrace may be forbidden in a container; strace before 5.3 lacks the filter
            return command
    return None


TRACED = "open,openat,openat2,connect,sendto,sendmsg"
OPENED = re.compile(r'^\d+\s+(?:<\.\.\. )?open(?:at2?)?\b.*= \d+<(?P<path>(?:[^>\\]|\\.)*)>')
ADDRESS = re.compile(r"^\d+\s+(?:connect|sendto|sendmsg)\(.*?sa_family=(?P<family>AF_\w+)")


def _unescaped(text: str) -> str:
    """A path as strace printed it (octal escapes for bytes that aren't printable) as this process names it."""
    raw, _ = codecs.escape_decode(text.encode("ascii", "backslashreplace"))
    return os.fsdecode(raw)


def opened_paths(log: Path) -> set[str]:
    """What each successful open opened, as strace -y resolved it (symlinks followed)."""
    opened = set()
    for line in log.read_text(errors="replace").splitlines():
        match = OPENED.match(line)
        if match and not match["path"].startswith(("socket:", "pipe:", "anon_inode:")):
            opened.add(_unescaped(match["path"]))
    return opened


def socket_families(log: Path) -> set[str]:
    families = set()
    for line in log.read_text(errors="replace").splitlines():
        match = ADDRESS.match(line)
        if match:
            families.add(match["family"])
    return families


def allowed_places(hostile: dict) -> tuple[str, ...]:
    """The repository, the user's folders, the Python installation and the system's libraries and settings."""
    python = {Path(folder).resolve() for folder in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    # The folder the packages are installed in (site-packages, or the checkout of an editable install): the
    # parse workers start there.
    installed = {Path(package.__file__).resolve().parents[1] for package in (grepgraph, graphs, prompts, retrievers)}
    own = [hostile["repo"], *(hostile["root"] / folder for folder in ("config", "cache", "home", "tmp"))]
    return tuple(str(place) for place in [*python, *installed, *(path.resolve() for path in own),
                                          *map(Path, SYSTEM_FOLDERS)])


def outside(opened: set[str], places: tuple[str, ...]) -> list[str]:
    """The paths in none of ``places`` (string prefixes: a hundred thousand paths checked in a moment)."""
    return sorted(path for path in opened
                  if not path.startswith(tuple(place + "/" for place in places)) and path not in places)


# --------------------------------------------------------------------------- running the CLI
def _run(hostile: dict, *args: str, trace: Path | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    command = [*GREPGRAPH, *args]
    if trace is not None:
        command = [*hostile["strace"], "-y", "-e", f"trace={TRACED}", "-o", str(trace), *command]
    return subprocess.run(command, capture_output=True, env=hostile["env"], cwd=cwd or hostile["root"],
                          timeout=CLI_TIMEOUT_S)


def _text(stream: bytes) -> str:
    return stream.decode("utf-8", "backslashreplace")


def assert_clean_exit(done: subprocess.CompletedProcess) -> None:
    """Exit 0, or 2 with one line saying why; never a traceback."""
    stderr = _text(done.stderr)
    assert "Traceback" not in stderr, stderr[-4000:]
    assert done.returncode in (0, 2), (done.returncode, stderr[-4000:])
    if done.returncode == 2:
        assert len(stderr.strip().splitlines()) == 1, stderr[-4000:]


def search(hostile: dict, *args: str) -> dict:
    done = _run(hostile, "search", *args, "--repo", str(hostile["repo"]), "--json", "--no-llm")
    assert_clean_exit(done)
    assert done.returncode == 0, _text(done.stderr)
    return json.loads(done.stdout)


def environment(root: Path) -> dict[str, str]:
    """No GREPGRAPH_* settings from outside; the user's folders and the temporary folder under ``root``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GREPGRAPH_")}
    for folder in ("home", "tmp"):
        (root / folder).mkdir()
    env.update(XDG_CONFIG_HOME=str(root / "config"), XDG_CACHE_HOME=str(root / "cache"), HOME=str(root / "home"),
               TMPDIR=str(root / "tmp"), GREPGRAPH_DAEMON="false")
    return env


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The hostile repository indexed once (under strace where it runs), with the summary as JSON.

    100,000 files under strace, with the real embedding model: over a minute, so the tests using it are ``slow``.
    """
    root = tmp_path_factory.mktemp("hostile")
    repo, outside = build_hostile_repo(root)
    hostile = {"root": root, "repo": repo.resolve(), "outside": outside, "env": environment(root)}
    hostile["strace"] = strace_command()
    trace = root / "index.strace" if hostile["strace"] else None
    indexed = _run(hostile, "index", "-v", "--json", str(repo), trace=trace)
    assert_clean_exit(indexed)
    assert indexed.returncode == 0, _text(indexed.stderr)
    hostile.update(summary=json.loads(indexed.stdout), trace=trace)
    return hostile


@pytest.mark.slow
def test_every_file_is_indexed_or_skipped_with_its_reason(hostile):
    summary = hostile["summary"]
    named = {reason: set(paths) for reason, paths in summary["skipped_paths"].items()}
    assert named["symlink outside repository"] == {"links/secret.py", "links/null.py", "links/zero.py"}
    assert named["broken symlink"] == {"links/loop_a.py", "links/loop_b.py"}  # a -> b -> a
    assert named["symlinked folder, not followed"] == {"links/folder/", "links/hidden/", "links/parent/",
                                                         "vendor/"}
    assert named["not a regular file"] == {"special/pipe.py", "special/sock.py"}
    assert {"special/pipe", "odd/image.png"} <= named["unsupported type"]
    assert named["too large"] == {"big/huge.py"}
    assert named["binary"] == {"odd/blob.py"}
    assert named["name not UTF-8"] == {"odd/caf\\xe9.py", "odd/d\\xe9j\\xe0/ (1 file)"}
    assert named["gitignored"] == {"ignored_by_rule.py", "ignoring/very_long_file_name.py"}
    indexed = {"src/shelf.py", "src/payment_processing.py", "big/long_line.py", "odd/latin.py",
               "ignoring/short.py", "/".join(["deep", *["d"] * DEPTH, "bottom.py"])}
    assert summary["files"] == EMPTY_FILES + len(indexed), summary
    assert summary["parse_errors"] == 0, summary


@pytest.mark.slow
def test_the_verbose_summary_names_what_was_skipped(hostile):
    again = _run(hostile, "index", "-v", str(hostile["repo"]))  # nothing changed: a rescan of every file
    assert_clean_exit(again)
    assert again.returncode == 0, _text(again.stderr)
    printed = _text(again.stdout)
    assert "(0 changed, 0 removed, 0 with parse errors)" in printed, printed
    named = dict(line.strip().split(": ", 1) for line in printed.splitlines() if line.startswith("    "))
    assert named["name not UTF-8"] == "odd/d\\xe9j\\xe0/ (1 file), odd/caf\\xe9.py", printed
    assert named["symlinked folder, not followed"] == "vendor/, links/folder/, links/hidden/, links/parent/", printed
    assert named["not a regular file"] == "special/pipe.py, special/sock.py", printed
    assert MARKER not in printed


@pytest.mark.slow
def test_search_answers_from_the_hostile_index(hostile):
    ranked = search(hostile, "at the bottom of the well")
    assert ranked["results"][0]["symbol"] == "at_the_bottom_of_the_well", ranked["results"][:3]

    literal = search(hostile, "--literal", "needle_in_long_line")
    assert {hit["path"] for hit in literal["results"]} == {"big/long_line.py"}, literal

    regex = search(hostile, "--regex", r"caf.?_menu|named_in_latin_one|seen_before")
    assert {hit["path"] for hit in regex["results"]} == {"odd/latin.py"}, regex

    scoped = search(hostile, "settle invoice", "--path", WILDCARDS)
    paths = {hit["path"] for hit in scoped["results"]}
    assert paths == {"src/payment_processing.py"}, paths  # the one name of 14 characters or more

    paths_query = " ".join(["deep/" + "d/" * 40 + "bottom.py", "src/payment_processing.py", "links/secret.py"] * 200)
    assert len(paths_query) > 20_000
    done = _run(hostile, "search", paths_query[:20_000], "--repo", str(hostile["repo"]), "--json", "--no-llm")
    assert_clean_exit(done)


@pytest.mark.slow
def test_nothing_outside_the_repository_is_found(hostile):
    for query in ([MARKER], ["--literal", MARKER], ["--regex", MARKER[:6] + ".*"], ["leaked"]):
        results = search(hostile, *query)["results"]
        assert MARKER not in json.dumps(results), (query, results)
    assert not any(MARKER in path.read_text(errors="replace")
                   for path in (hostile["root"] / "cache").rglob("*") if path.is_file() and path.suffix != ".onnx")


@pytest.mark.slow
def test_the_indexer_opens_nothing_outside_and_connects_nowhere(hostile):
    if hostile["trace"] is None:
        pytest.skip("strace is not installed or may not trace here: the indexer's file opens go unchecked")
    opened = opened_paths(hostile["trace"])
    assert f"{hostile['repo']}/src/shelf.py" in opened, "the trace shows no file of the repository"
    strays = outside(opened, allowed_places(hostile))
    assert not strays, strays[:40]
    assert not [path for path in opened if path.startswith(f"{hostile['outside'].resolve()}/")]
    assert socket_families(hostile["trace"]) <= {"AF_UNIX"}, socket_families(hostile["trace"])


@pytest.mark.slow
def test_a_search_opens_nothing_outside_and_connects_nowhere(hostile):
    if hostile["trace"] is None:
        pytest.skip("strace is not installed or may not trace here: the search's file opens go unchecked")
    trace = hostile["root"] / "search.strace"
    done = _run(hostile, "search", "stack boxes", "--repo", str(hostile["repo"]), "--json", "--no-llm", trace=trace)
    assert_clean_exit(done)
    assert json.loads(done.stdout)["results"][0]["symbol"] == "stack_boxes"
    strays = outside(opened_paths(trace), allowed_places(hostile))
    assert not strays, strays[:40]
    assert socket_families(trace) <= {"AF_UNIX"}, socket_families(trace)


def test_the_parse_workers_never_import_the_repositorys_modules(tmp_path):
    """Indexed from its root, a repository's pickle.py or logging.py does not stand in for the standard library's."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for number in range(PARALLEL_PARSE_MIN_FILES + 10):  # enough files for the parse workers
        (repo / f"m{number}.py").write_text(f"def function_{number}():\n    return {number}\n")
    sentinel = tmp_path / "code-ran"
    for module in ("pickle", "logging", "threading"):
        (repo / f"{module}.py").write_text(f"open({str(sentinel)!r}, 'a').write('{module} ')\n")
    hostile = {"root": tmp_path, "env": environment(tmp_path)}
    done = _run(hostile, "index", "--no-embed", ".", cwd=repo)
    assert_clean_exit(done)
    assert done.returncode == 0, _text(done.stderr)
    assert not sentinel.exists(), sentinel.read_text()


def test_deeply_nested_definitions_cost_no_more_than_their_size(tmp_path):
    """20,000 nested functions, a 20,000-term expression and a 900 KB line 99 functions deep index in bounded time.

    Each nesting level used to repeat its text in one more chunk, and tree-sitter looks a node's parent up from the
    root: the nested functions took many minutes and the Python file alone made 5,212 chunks (a 208 MB index).
    """
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "nested.js").write_text("function f() {\n" * 20_000 + "}\n" * 20_000)  # one line each: not minified
    (repo / "chain.js").write_text("var total =\n" + " +\n".join(f"  part{n}()" for n in range(20_000)) + ";\n")
    (repo / "deep.py").write_text("".join("    " * level + f"def level{level}():\n" for level in range(99))
                                  + "    " * 99 + "TABLE = [" + ", ".join(["1"] * 300_000) + "]\n")
    hostile = {"root": tmp_path, "env": environment(tmp_path)}
    done = _run(hostile, "index", "--no-embed", "--json", str(repo))
    assert_clean_exit(done)
    assert done.returncode == 0, _text(done.stderr)
    summary = json.loads(done.stdout)
    assert summary["files"] == 3 and summary["parse_errors"] == 0, summary
    # Eight levels at most repeat a line: about 2,200 chunks here, where deep.py alone made 5,212 and nested.js
    # would have made millions.
    assert summary["chunks"] < 4_000, summary
