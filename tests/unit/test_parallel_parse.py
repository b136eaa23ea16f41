"""Parsing many files in worker interpreters: same results, same order, whatever happens to the workers."""

import io
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from grepgraph.retrievers.parse import parallel as parallel_parse
from grepgraph.retrievers.parse.cards import code_text
from grepgraph.retrievers.parse.parallel import PARALLEL_PARSE_MIN_FILES, parse_job, parse_many, serve_jobs

PROJECT = Path(__file__).resolve().parents[2]


def many_jobs(count: int = PARALLEL_PARSE_MIN_FILES + 13) -> list[tuple[str, bytes, str]]:
    jobs = []
    for number in range(count):
        if number % 7 == 3:
            source = f"export function handler{number}(request) {{ return route{number}(request); }}\n"
            jobs.append((f"web/handler_{number}.ts", source.encode(), "typescript"))
        else:
            source = f"def function_{number}(value):\n    return helper_{number}(value)\n"
            jobs.append((f"pkg/module_{number}.py", source.encode(), "python"))
    jobs.append(("pkg/broken.py", b"def broken(:\n", "python"))
    jobs.append(("pkg/latin1.py", "NAME = 'caf\u00e9'\n".encode("latin-1"), "python"))
    return jobs


def test_workers_give_what_one_process_gives_in_the_same_order():
    jobs = many_jobs()
    assert list(parse_many(jobs)) == [parse_job(job) for job in jobs]


def test_a_parsed_file_carries_each_chunks_code_view_without_its_docstring():
    parsed = parse_job(("pkg/greet.py", b'def greet(name):\n    """Say hello to someone."""\n    return name\n',
                        "python"))
    assert parsed.codes == [code_text(chunk) for chunk in parsed.chunks]
    assert "return name" in parsed.codes[0] and "Say hello" not in parsed.codes[0]
    assert "Say hello" in parsed.cards[0]  # the docstring's words reach the card instead


def test_dead_workers_leave_the_work_to_the_caller(monkeypatch, caplog):
    monkeypatch.setattr(parallel_parse, "_WORKER_CODE", "import sys; sys.exit(3)")
    jobs = many_jobs()
    with caplog.at_level("WARNING", logger="grepgraph.retrievers.parse.parallel"):
        assert list(parse_many(jobs)) == [parse_job(job) for job in jobs]
    # Each dead worker is named once, not once per file it leaves behind.
    stopped = [record for record in caplog.records if "stopped answering" in record.getMessage()]
    assert 1 <= len(stopped) <= parallel_parse.MAX_WORKERS
    assert all("exit status 3" in record.getMessage() for record in stopped)


def test_a_job_that_fails_in_a_worker_comes_back_empty(monkeypatch):
    def fragile(job):
        if job[0] == "bad.py":
            raise RecursionError("too deep")
        return parse_job(job)

    monkeypatch.setattr(parallel_parse, "parse_job", fragile)
    stream = io.BytesIO()
    for job in [("good.py", b"def f():\n    pass\n", "python"), ("bad.py", b"x = 1\n", "python")]:
        pickle.dump(job, stream)
    stream.seek(0)
    sink = io.BytesIO()
    serve_jobs(stream, sink)
    sink.seek(0)
    good, bad = pickle.load(sink), pickle.load(sink)
    assert [chunk.symbol for chunk in good.chunks if chunk.kind == "function"] == ["f"]
    assert bad is None


def test_workers_never_run_the_callers_script(tmp_path):
    # With multiprocessing's spawn or forkserver, every worker would re-run this unguarded script.
    script = tmp_path / "index_it.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(PROJECT)!r})
        from grepgraph.retrievers.parse.parallel import parse_many
        print("script ran")
        jobs = [(f"m{{n}}.py", f"def f{{n}}():\\n    return {{n}}\\n".encode(), "python") for n in range(250)]
        print(sum(len(parsed.chunks) for parsed in parse_many(jobs)))
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    assert lines.count("ran") == 1 and int(lines[-1]) >= 250


@pytest.mark.parametrize("count", [0, 1, PARALLEL_PARSE_MIN_FILES - 1])
def test_few_files_are_parsed_in_process(count, monkeypatch):
    monkeypatch.setattr(parallel_parse, "_Worker", None)  # would fail if a worker were started
    jobs = many_jobs(count)[:count]
    assert list(parse_many(jobs)) == [parse_job(job) for job in jobs]
