"""A pasted message finds the code that printed it, whatever values the program printed into it (issue #25).

A new user pastes what a program printed: ``Invalid non-printable ASCII character in URL, '\\x07' at position 12.``
for ``f"... {char!r} at position {idx}."``, ``Cannot apply patch, path doesn't resolve: [object Object]`` for
`` `... doesn't resolve: ${path}` ``. Each language gets a tiny repository with one definition printing the
message among decoys that share its words (docstrings, comments, names); each case is replayed through a real
index (MiniLM vectors, BM25, Chroma) and the Searcher, and one through the command line, as a user runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from grepgraph.retrievers.rank.search import Searcher
from grepgraph.retrievers.store.index import CodeIndex

pytestmark = pytest.mark.slow

PYTHON = {
    "webclient/urls.py": '''"""Parse and check the URLs the client sends."""

MAX_URL_LENGTH = 65536
COMPONENT_LIMITS = {"scheme": 32, "userinfo": 512, "host": 253, "path": 8192, "query": 8192}


class InvalidURL(Exception):
    """A URL the client refuses to send."""


def is_printable_ascii(text):
    """Whether every character of a URL is printable ASCII: no non-printable character at any position."""
    return all(32 <= ord(char) < 127 for char in text)


def check_printable(url):
    for idx, char in enumerate(url):
        if not char.isprintable():
            raise InvalidURL(f"Invalid non-printable ASCII character in URL, {char!r} at position {idx}.")


def check_component_lengths(components):
    for key, value in components.items():
        if value is not None and len(value) > COMPONENT_LIMITS.get(key, MAX_URL_LENGTH):
            raise InvalidURL(f"URL component '{key}' too long")


def quote_component(component, safe="/"):
    """Percent-encode a URL component: each non-printable or non-ASCII character, and any component too long."""
    return "".join(char if char.isalnum() or char in safe else f"%{ord(char):02X}" for char in component)


def component_too_long(key, value):
    """Whether a URL component (the path, the query) is too long to send."""
    return len(value) > COMPONENT_LIMITS.get(key, MAX_URL_LENGTH)
''',
    "webclient/client.py": '''"""The client: sends requests through the transport mounted for their scheme."""

from .urls import check_component_lengths, check_printable


class Client:
    """Sends requests; every URL is checked before it goes out."""

    def __init__(self, transports=None, timeout=5.0):
        self.transports = transports or {}
        self.timeout = timeout

    def build_url(self, url):
        """Check a URL for non-printable characters and components too long before it is sent."""
        check_printable(url)
        return url

    def transport_for(self, request):
        scheme = request.url.split("://")[0]
        if scheme not in self.transports:
            raise LookupError(f"Cannot send {request!r}: no transport mounted for {scheme + '://'!r}")
        return self.transports[scheme]

    def mounted(self, scheme):
        """The transport mounted for a URL scheme (http://, https://, ftp://): without one, no request can be sent."""
        return self.transports.get(scheme)

    def can_send(self, request):
        """Whether a transport is mounted for the request's scheme: cannot send a Request object otherwise."""
        return request.url.split("://")[0] in self.transports

    def set_timeout(self, timeout):
        if not isinstance(timeout, (int, float)):
            raise TypeError(
                "Expected a timeout in seconds, "
                f"got {timeout}"
            )
        self.timeout = timeout

    def describe_timeout(self):
        """The timeout in seconds the client expects, as text (got from the settings)."""
        return f"{self.timeout} seconds"

    def expected_timeout(self, timeout=None):
        """Expected timeout in seconds: the one given, else the client's (got None: the default)."""
        return self.timeout if timeout is None else timeout
''',
}

TYPESCRIPT = {
    "src/errors.ts": """export const errors = {
  0: "Illegal state",
  15(path: unknown) {
    return `Cannot apply patch, path doesn't resolve: ${path}`
  },
  17(op: unknown) {
    return "Unsupported patch operation: " + op
  },
} as const

export function die(code: keyof typeof errors, ...args: unknown[]): never {
  const message = errors[code]
  throw new Error(`[Drafts] ${typeof message === "function" ? (message as Function)(...args) : message}`)
}
""",
    "src/patch.ts": """import { die } from "./errors"

export interface Patch {
  op: "replace" | "add" | "remove"
  path: (string | number)[]
  value?: unknown
}

/** Resolve a patch path in an object; when the path doesn't resolve, the patch cannot be applied. */
export function resolvePath(base: any, path: Patch["path"]): any {
  return path.reduce((target, key) => (target == null ? undefined : target[key]), base)
}

/** Apply a patch to an object: the patch path must resolve, and its operation must be supported. */
export function applyPatch(base: any, patch: Patch): any {
  const parent = resolvePath(base, patch.path.slice(0, -1))
  if (typeof parent !== "object" || parent === null) die(15, patch.path)
  if (!isSupportedOperation(patch.op)) die(17, patch.op)
  parent[patch.path[patch.path.length - 1]] = patch.value
  return base
}

/** Whether a patch operation is supported: an unsupported patch operation (not replace, add, remove) is an error. */
export function isSupportedOperation(op: string): boolean {
  return ["replace", "add", "remove"].includes(op)
}
""",
}

JAVASCRIPT = {
    "lib/draft.js": """/**
 * Whether a thing is draftable: plain objects, arrays, Map, Set. Produce can only be called on things
 * that are draftable.
 */
export function isDraftable(value) {
  return value !== null && typeof value === "object"
}

export function draftOf(base) {
  if (!isDraftable(base)) {
    throw new Error("[Drafts] produce can only be called on things that are draftable: plain objects, arrays, " +
      "Map, Set. Got '" + base + "'")
  }
  return Object.create(base)
}

/** Produce the next state: call the recipe on a draft of the base (which must be draftable). */
export function produce(base, recipe) {
  return recipe(draftOf(base))
}
""",
    "lib/patches.js": """function walk(base, path) {
  let target = base
  for (const key of path) {
    if (target == null) throw new Error('Cannot apply patch, path doesn\\'t resolve: ' + path)
    target = target[key]
  }
  return target
}

/** Apply patches to a draft; a patch whose path doesn't resolve cannot be applied. */
export function applyPatches(base, patches) {
  for (const patch of patches) walk(base, patch.path.slice(0, -1))[patch.path.at(-1)] = patch.value
  return base
}
""",
}

GO = {
    "config/parse.go": '''package config

import (
	"fmt"
	"strings"
)

// ParseLine splits one "key = value" line of a section; an unknown key is reported by the caller.
func ParseLine(line string) (string, string) {
	key, value, _ := strings.Cut(line, "=")
	return strings.TrimSpace(key), strings.TrimSpace(value)
}

// KnownKey reports whether a key may appear at a line of a config section: an unknown key is an error.
func KnownKey(key string) bool {
	switch key {
	case "name", "size", "port":
		return true
	}
	return false
}

func Decode(lines []string, section string) (map[string]string, error) {
	values := map[string]string{}
	for number, line := range lines {
		key, value := ParseLine(line)
		if !KnownKey(key) {
			return nil, fmt.Errorf("config: unknown key %q at line %d (section %s)", key, number+1, section)
		}
		values[key] = value
	}
	return values, nil
}

func wrap(path string, err error) error {
	return fmt.Errorf("cannot open store %s: %v", path, err)
}

// OpenStore opens the store at a path: it cannot open a store another process holds.
func OpenStore(path string) (*strings.Reader, error) {
	return strings.NewReader(path), nil
}
''',
}

RUST = {
    "src/table.rs": '''/// Fields a table may hold.
pub const EXPECTED: [&str; 2] = ["name", "size"];

/// Whether a field is one the table expects (an unknown field is an error).
pub fn is_expected(field: &str) -> bool {
    EXPECTED.contains(&field)
}

/// An unknown field in a table is an error: the table expects one of its known fields.
pub fn unknown_field(table: &str, name: &str) -> bool {
    !table.is_empty() && !is_expected(name)
}

pub fn validate(name: &str, table: &str) -> Result<(), String> {
    if !is_expected(name) {
        return Err(format!("unknown field `{}` in table [{}], expected one of {:?}", name, table, EXPECTED));
    }
    Ok(())
}

/// The size limit of a file in kilobytes, and whether a file of `len` bytes is within it.
pub fn within_limit(len: u64, limit_kb: u64) -> bool {
    len <= limit_kb * 1024
}

pub fn admit(path: &str, len: u64, limit_kb: u64) -> Result<(), String> {
    if !within_limit(len, limit_kb) {
        return Err(format!("file {path} is {len} bytes, the limit is {limit_kb}KB"));
    }
    Ok(())
}
''',
}

JAVA = {
    "src/main/java/org/pool/WorkerPool.java": '''package org.pool;

import java.util.ArrayDeque;
import java.util.Queue;

public class WorkerPool {
    static final int MAX_CAPACITY = 65536;
    private final String name;
    private final Queue<Runnable> tasks = new ArrayDeque<>();
    private int capacity;

    public WorkerPool(String name, int capacity) {
        this.name = name;
        setCapacity(capacity);
    }

    /** Sets the capacity of the pool: how many tasks it holds, between 1 and the maximum capacity. */
    public void resize(int capacity) {
        this.capacity = Math.max(1, Math.min(capacity, MAX_CAPACITY));
    }

    /** Whether a capacity is between 1 and the maximum capacity of a pool. */
    static boolean capacityBetween(int capacity) {
        return capacity >= 1 && capacity <= MAX_CAPACITY;
    }

    void setCapacity(int capacity) {
        if (capacity < 1 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("Capacity must be between 1 and "
                    + MAX_CAPACITY + ", got " + capacity);
        }
        this.capacity = capacity;
    }

    /** Whether a task would be rejected from the pool: it is null or the pool is full. */
    public boolean rejects(Runnable task) {
        return task == null || tasks.size() >= capacity;
    }

    public void offer(Runnable task) {
        if (rejects(task)) {
            throw new IllegalStateException("Task " + task + " was rejected from pool " + name);
        }
        tasks.add(task);
    }
}
''',
}

# (repository, pasted message, the definition that printed it)
CASES = [
    ("python", r"Invalid non-printable ASCII character in URL, '\x07' at position 12.", "check_printable"),
    ("python", "webclient.urls.InvalidURL: Invalid non-printable ASCII character in URL, '\\n' at position 3.",
     "check_printable"),
    ("python", "URL component 'path' too long", "check_component_lengths"),
    ("python", "Cannot send <Request object at 0x7f3a9c2b1d60>: no transport mounted for 'ftp://'",
     "Client.transport_for"),
    ("python", "TypeError: Expected a timeout in seconds, got None", "Client.set_timeout"),
    ("typescript", "Cannot apply patch, path doesn't resolve: [object Object]", "15"),
    ("typescript", "Error: [Drafts] Unsupported patch operation: undefined", "17"),
    ("typescript", "[Drafts] Unsupported patch operation: NaN", "17"),
    ("javascript", "Cannot apply patch, path doesn't resolve: items,0,name", "walk"),
    ("javascript", "Uncaught Error: [Drafts] produce can only be called on things that are draftable: plain objects, "
                   "arrays, Map, Set. Got 'null'", "draftOf"),
    ("go", 'config: unknown key "colour" at line 12 (section [server])', "Decode"),
    ("go", "cannot open store /var/lib/app/store.db: <nil>", "wrap"),
    ("rust", 'unknown field `colour` in table [server], expected one of ["name", "size"]', "validate"),
    ("rust", "Error: file ./data/big.toml is 40960 bytes, the limit is 32KB", "admit"),
    ("java", 'Exception in thread "main" java.lang.IllegalArgumentException: Capacity must be between 1 and 65536, '
             "got -3", "WorkerPool.setCapacity"),
    ("java", "Task null was rejected from pool workers", "WorkerPool.offer"),
]
REPOSITORIES = {"python": PYTHON, "typescript": TYPESCRIPT, "javascript": JAVASCRIPT, "go": GO, "rust": RUST,
                "java": JAVA}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> dict[str, Path]:
    """Each language's repository, indexed with its vectors (as a user's first ``grepgraph index``)."""
    roots = {}
    for name, files in REPOSITORIES.items():
        root = tmp_path_factory.mktemp(name)
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        CodeIndex(root, root / ".grepgraph").update()
        roots[name] = root
    return roots


@pytest.fixture(scope="module")
def searchers(indexed):
    opened = {name: Searcher(CodeIndex(root, root / ".grepgraph")) for name, root in indexed.items()}
    yield opened
    for searcher in opened.values():
        searcher.close()


@pytest.mark.parametrize(("repository", "message", "printer"), CASES, ids=[case[1][:48] for case in CASES])
def test_the_definition_that_printed_the_message_ranks_first(searchers, repository, message, printer):
    hits, _ = searchers[repository].search(message, limit=5)
    assert hits[0].symbol == printer, [(hit.symbol, hit.components) for hit in hits]
    # its template is the evidence, and none of the decoys sharing its words has any
    assert hits[0].components.get("exact", 0) > 0
    assert not any(hit.components.get("exact") for hit in hits[1:])


def test_without_the_values_the_message_reads_as_words(searchers):
    # Nothing was printed into it, so it is no message to look up: the ranking is the words' alone.
    hits, _ = searchers["python"].search("Invalid non-printable ASCII character in URL at position", limit=5)
    assert not any(hit.components.get("exact") for hit in hits)


def test_a_description_sharing_the_messages_words_gets_no_template_evidence(searchers):
    hits, _ = searchers["python"].search("Whether a URL component such as `path` is too long", limit=5)
    assert not any(hit.components.get("exact") for hit in hits)


def test_the_command_line_finds_the_raise_of_a_pasted_message(indexed):
    grepgraph = Path(sys.executable).parent / "grepgraph"
    found = subprocess.run(
        [str(grepgraph), "search", "URL component 'query' too long", "--no-daemon", "--no-llm", "--json",
         "--limit", "3", "--repo", str(indexed["python"]), "--index-dir", str(indexed["python"] / ".grepgraph")],
        capture_output=True, text=True, timeout=240, check=False)
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)
    results = results["results"] if isinstance(results, dict) else results
    assert results[0]["symbol"] == "check_component_lengths"
