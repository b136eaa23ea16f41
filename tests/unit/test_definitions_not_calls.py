"""A call is never a definition: callbacks, closures, lambdas and IIFEs belong to the definition they sit in.

Per language, a small file of the patterns a newcomer meets (a callback passed at file level, an IIFE,
``const x = f(() => ...)``, Go / Rust closures, Java lambdas and anonymous classes, Python lambdas and
nested functions): which definitions the parser finds and which definition each call is made from. Then, on
a real index without vectors, what the symbol graph answers about them: where a name is defined, who calls
a function defined in a file of the same name, and which text a caller's snippet is cut from.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from textwrap import dedent

import pytest
from grepgraph.retrievers.codegraph.symbols import SymbolGraph
from grepgraph.retrievers.core.model import ParsedFile
from grepgraph.retrievers.parse.chunking import parse_file
from grepgraph.retrievers.store.index import CodeIndex


def parse(path: str, text: str, language: str) -> ParsedFile:
    parsed = parse_file(path, dedent(text), language)
    assert parsed.error == ""
    return parsed


def definitions(parsed: ParsedFile) -> dict[str, str]:
    return {chunk.symbol: chunk.kind for chunk in parsed.chunks if chunk.kind != "module"}


def call_sources(parsed: ParsedFile) -> dict[tuple[str, int], str]:
    """(call target, line) -> the definition the call is made from ("" for file level)."""
    return {(edge.target, edge.line): edge.source for edge in parsed.edges if edge.kind == "calls"}


def assert_every_call_sits_in_its_source(parsed: ParsedFile) -> None:
    """A call's source is a definition of the file whose lines hold the call."""
    spans = {chunk.symbol: (chunk.start_line, chunk.end_line) for chunk in parsed.chunks
             if chunk.kind != "module" and chunk.part == 0}
    for edge in parsed.edges:
        if edge.kind == "calls" and edge.source:
            start, end = spans[edge.source]
            assert start <= edge.line <= end, edge


# --------------------------------------------------------------------------- TypeScript / JavaScript

TS_PROXY = """\
    import { each } from "./common";

    const objectTraps: any = {};
    const arrayTraps: any = {};

    each(objectTraps, (key, fn) => {
      arrayTraps[key] = function () {
        arguments[0] = arguments[0][0];
        return fn.apply(this, arguments);
      };
    });

    export class Immer {
      produce(base: any, recipe?: any): any {
        return recipe(base);
      }

      produceWithPatches(base: any, recipe?: any): any {
        let patches: any;
        const result = this.produce(base, recipe, (p: any) => {
          patches = p;
          record(p);
          return p;
        });
        return [result, patches];
      }
    }
    """


def test_a_callback_passed_at_file_level_is_named_after_the_call_never_the_callee():
    parsed = parse("src/proxy.ts", TS_PROXY, "typescript")

    assert definitions(parsed) == {
        "each(objectTraps, …) callback": "function",
        "Immer": "class",
        "Immer.produce": "method",
        "Immer.produceWithPatches": "method",
    }
    calls = call_sources(parsed)
    assert calls[("each", 6)] == ""  # the module calls each; the callback's calls are the callback's
    assert calls[("fn.apply", 9)] == "each(objectTraps, …) callback"
    assert_every_call_sits_in_its_source(parsed)


def test_a_const_holding_a_calls_result_inside_a_method_is_no_definition():
    parsed = parse("src/proxy.ts", TS_PROXY, "typescript")

    assert not any(symbol.endswith(".result") for symbol in definitions(parsed))
    calls = call_sources(parsed)
    assert calls[("this.produce", 20)] == "Immer.produceWithPatches"
    assert calls[("record", 22)] == "Immer.produceWithPatches"  # inside the callback: the method's call


JS_INLINE_MEMBERS = """\
    Object.defineProperty(exports, "lt", { enumerable: true, get: function () { return load(); } });
    export function normalize(params) {
      if (typeof params === "string") return { error: () => format(params) };
      return {
        error: () => params.error,
      };
    }
    """


def test_a_one_line_member_of_an_unnamed_object_is_part_of_its_statement():
    parsed = parse("lib/index.js", JS_INLINE_MEMBERS, "javascript")

    # no method ``get`` at a call, no ``normalize.error`` at an ``if``; a member on a line of its own stays
    assert definitions(parsed) == {"normalize": "function", "normalize.error": "method"}
    assert [chunk.start_line for chunk in parsed.chunks if chunk.symbol == "normalize.error"] == [5]
    calls = call_sources(parsed)
    assert calls[("load", 1)] == ""
    assert calls[("format", 3)] == "normalize"
    assert_every_call_sits_in_its_source(parsed)


JS_PATTERNS = """\
    (function () {
      setup();
      function helper() {
        return compute();
      }
      helper();
    })();

    export function boot() {
      (() => {
        warm();
      })();
      return ready();
    }

    export const store = create((set) => {
      init(set);
      return { count: 0 };
    });

    each(plugins, function register(plugin) {
      plugin.install();
      announce(plugin);
      return plugin;
    });

    app.get("/users", (req, res) => {
      const users = loadUsers();
      res.send(users);
      return users;
    });
    """


def test_iifes_file_level_consts_and_named_callbacks_in_javascript():
    parsed = parse("lib/patterns.js", JS_PATTERNS, "javascript")

    assert definitions(parsed) == {
        "helper": "function",
        "boot": "function",
        "store": "function",  # a file-level const made by a call: the callback is its body
        "register": "function",  # a named function expression keeps its own name
        'app.get("/users", …) callback': "function",
    }
    calls = call_sources(parsed)
    assert calls[("setup", 2)] == "" and calls[("helper", 6)] == ""  # a file-level IIFE runs at file level
    assert calls[("compute", 4)] == "helper"
    assert calls[("warm", 11)] == "boot"  # an IIFE inside a function is the function's
    assert calls[("init", 17)] == "store"
    assert calls[("plugin.install", 22)] == "register" and calls[("announce", 23)] == "register"
    assert calls[("loadUsers", 28)] == 'app.get("/users", …) callback'
    assert_every_call_sits_in_its_source(parsed)


def test_a_short_callback_at_file_level_stays_in_the_module_and_names_nothing():
    parsed = parse("lib/short.js", "each(items, (item) => show(item));\n", "javascript")

    assert definitions(parsed) == {}
    assert call_sources(parsed) == {("each", 1): "", ("show", 1): ""}


# --------------------------------------------------------------------------- Go, Rust, Java, Python

GO_WORKER = """\
    package worker

    import "sync"

    var ready = func() bool {
    \treturn probe()
    }()

    func worker(jobs []int) {
    \tvar wg sync.WaitGroup
    \tdefer func() {
    \t\tcleanup()
    \t}()
    \tgo func() {
    \t\tprocess(jobs)
    \t\twg.Done()
    \t}()
    \tfunc() {
    \t\tinline()
    \t}()
    \teach(jobs, func(j int) {
    \t\thandle(j)
    \t})
    }

    func each(items []int, fn func(int)) {
    \tfor _, item := range items {
    \t\tfn(item)
    \t}
    }
    """


def test_go_closures_belong_to_the_function_they_are_written_in():
    parsed = parse("worker/worker.go", GO_WORKER, "go")

    assert definitions(parsed) == {"ready": "variable", "worker": "function", "each": "function"}
    calls = call_sources(parsed)
    assert calls[("probe", 6)] == "ready"
    for target, line in (("cleanup", 12), ("process", 15), ("wg.Done", 16), ("inline", 19), ("each", 21),
                         ("handle", 22)):
        assert calls[(target, line)] == "worker"
    assert calls[("fn", 28)] == "each"
    assert_every_call_sits_in_its_source(parsed)


RUST_WORKER = """\
    pub fn worker(items: Vec<i32>) -> Vec<i32> {
        let doubled: Vec<i32> = items.iter().map(|x| double(*x)).collect();
        each(&doubled, |x| {
            report(x);
        });
        let run = move || {
            finish();
        };
        run();
        doubled
    }

    pub fn each(items: &[i32], f: impl Fn(&i32)) {
        for item in items {
            f(item);
        }
    }
    """


def test_rust_closures_belong_to_the_function_they_are_written_in():
    parsed = parse("src/worker.rs", RUST_WORKER, "rust")

    assert definitions(parsed) == {"worker": "function", "each": "function"}
    calls = call_sources(parsed)
    for target, line in (("double", 2), ("each", 3), ("report", 4), ("finish", 7), ("run", 9)):
        assert calls[(target, line)] == "worker"
    assert calls[("f", 15)] == "each"
    assert_every_call_sits_in_its_source(parsed)


JAVA_FINALIZE = """\
    package app;

    import java.util.List;

    public class Finalize {
        private final Runnable hook = () -> cleanup();

        public void finalize(List<String> items) {
            items.forEach(item -> maybeFreeze(item));
            Runnable later = new Runnable() {
                @Override
                public void run() {
                    maybeFreeze("later");
                }
            };
            each(items, (item) -> {
                process(item);
            });
        }

        static void each(List<String> items, java.util.function.Consumer<String> consumer) {
            items.forEach(consumer);
        }

        static void maybeFreeze(String value) {}
    }
    """


def test_java_lambdas_belong_to_their_method_and_an_anonymous_class_method_is_named_inside_it():
    parsed = parse("src/app/Finalize.java", JAVA_FINALIZE, "java")

    assert definitions(parsed) == {
        "Finalize": "class",
        "Finalize.finalize": "method",
        "Finalize.finalize.run": "method",  # the anonymous Runnable's run, defined inside finalize
        "Finalize.each": "method",
        "Finalize.maybeFreeze": "method",
    }
    calls = call_sources(parsed)
    assert calls[("cleanup", 6)] == "Finalize"  # a field's lambda: the class is what encloses it
    assert calls[("maybeFreeze", 9)] == "Finalize.finalize"
    assert calls[("maybeFreeze", 13)] == "Finalize.finalize.run"
    assert calls[("each", 16)] == "Finalize.finalize" and calls[("process", 17)] == "Finalize.finalize"
    assert_every_call_sits_in_its_source(parsed)


PY_FINALIZE = """\
    import threading

    registry = {}

    each(registry, lambda key, fn: wrap(key, fn))


    def finalize(items):
        def visit(item):
            maybe_freeze(item)

        each(items, visit)
        each(items, lambda item: maybe_freeze(item))
        threading.Thread(target=lambda: flush(items)).start()
        return items


    def each(items, fn):
        for item in items:
            fn(item)


    def maybe_freeze(item):
        return item
    """


def test_python_lambdas_and_nested_functions_passed_to_calls():
    parsed = parse("pkg/finalize.py", PY_FINALIZE, "python")

    assert definitions(parsed) == {"finalize": "function", "finalize.visit": "function", "each": "function",
                                   "maybe_freeze": "function"}
    calls = call_sources(parsed)
    assert calls[("each", 5)] == "" and calls[("wrap", 5)] == ""
    assert calls[("maybe_freeze", 10)] == "finalize.visit"
    assert calls[("maybe_freeze", 13)] == "finalize" and calls[("flush", 14)] == "finalize"
    assert_every_call_sits_in_its_source(parsed)


# --------------------------------------------------------------------------- the symbol graph on a real index

COMMON_TS = """\
    export function each(obj: any, iter: any) {
      Object.keys(obj).forEach((key) => iter(key, obj[key]));
    }

    export function maybeFreeze(scope: any, value: any) {
      return value;
    }
    """

FINALIZE_TS = """\
    import { each, maybeFreeze } from "./common";

    export function finalize(scope: any, value: any) {
      each(value, (key: string, child: any) => {
        finalizeProperty(scope, child);
      });
      maybeFreeze(scope, value);
      if (value.deep) {
        maybeFreeze(scope, value.child);
      }
      return value;
    }

    function finalizeProperty(scope: any, child: any) {
      maybeFreeze(scope, child);
    }
    """

JAVA_OVERLOADS = """\
    class Store {
        void save(String text) {
            flush();
        }

        void save(int number) {
            flush();
        }

        void flush() {}
    }
    """

REGISTRY_FILES = {
    "src/registry.ts": """\
        export class Registry {
          add(name: string): string {
            return name;
          }
        }
        """,
    "src/createRegistry.ts": """\
        import { Registry } from "./registry";

        export function createRegistry(): Registry {
          return new Registry();
        }
        """,
    "src/boot.ts": """\
        import { createRegistry } from "./createRegistry";

        export function boot(): string {
          const registry = createRegistry();
          return registry.add("main");
        }
        """,
}

LONG_CALLER_PY = "def process(items):\n" + "    items.sort()\n" * 240 + "    finalize_all(items)\n"

GRAPH_FILES = {
    "src/common.ts": COMMON_TS,
    "src/proxy.ts": TS_PROXY,
    "src/finalize.ts": FINALIZE_TS,
    "worker/worker.go": GO_WORKER,
    "pkg/finalize.py": PY_FINALIZE,
    "pkg/process.py": "def finalize_all(items):\n    return items\n\n\n" + LONG_CALLER_PY,
    "src/app/Finalize.java": JAVA_FINALIZE,
    "src/app/Store.java": JAVA_OVERLOADS,
    **REGISTRY_FILES,
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory) -> SymbolGraph:
    root = tmp_path_factory.mktemp("definitions_not_calls")
    repo = root / "repo"
    for name, text in GRAPH_FILES.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text))
    CodeIndex(repo, root / "index").update(embed=False)
    return SymbolGraph(sqlite3.connect(Path(root / "index" / "index.sqlite")))


def where(refs) -> list[tuple[str, str, str, int]]:
    return [(ref.path, ref.symbol, ref.kind, ref.line) for ref in refs]


def test_where_a_name_is_defined_lists_its_definition_not_the_call_passing_a_callback(graph):
    assert [(ref.path, ref.symbol) for ref in graph.definitions("each") if ref.path.endswith(".ts")] == [
        ("src/common.ts", "each")]


def test_callers_of_a_function_called_from_a_same_named_file_point_at_the_function_at_every_call(graph):
    callers = [ref for ref in graph.callers("maybeFreeze") if ref.path == "src/finalize.ts"]

    assert where(callers) == [
        ("src/finalize.ts", "finalize", "function", 7),
        ("src/finalize.ts", "finalize", "function", 9),
        ("src/finalize.ts", "finalizeProperty", "function", 15),
    ]
    assert {(ref.start_line, ref.end_line) for ref in callers[:2]} == {(3, 12)}  # the function, not the imports
    text, start = graph.text_at(callers[1])
    assert start == 3 and text.splitlines()[9 - start].strip() == "maybeFreeze(scope, value.child);"


def test_what_a_function_calls_reaches_the_real_definition_never_a_call_site(graph):
    each = [ref for ref in graph.callees("finalize") if ref.via == "each" and ref.path.endswith(".ts")]
    assert [(ref.path, ref.symbol, ref.resolution) for ref in each] == [("src/common.ts", "each", "resolved")]


def test_same_named_files_in_go_python_and_java_send_callers_to_the_definition(graph):
    go = [ref for ref in graph.callers("each") if ref.path == "worker/worker.go"]
    assert where(go) == [("worker/worker.go", "worker", "function", 21)]
    python = [ref for ref in graph.callers("maybe_freeze") if ref.path == "pkg/finalize.py"]
    assert where(python) == [("pkg/finalize.py", "finalize.visit", "function", 10),
                             ("pkg/finalize.py", "finalize", "function", 13)]
    java = [ref for ref in graph.callers("cleanup") if ref.path == "src/app/Finalize.java"]
    assert where(java) == [("src/app/Finalize.java", "Finalize", "class", 6)]


def test_each_overload_is_the_caller_of_its_own_calls(graph):
    callers = [ref for ref in graph.callers("Store.flush") if ref.resolution == "resolved"]
    assert [(ref.symbol, ref.start_line, ref.line) for ref in callers] == [("Store.save", 2, 3), ("Store.save", 6, 7)]


def test_the_return_type_of_a_function_named_like_its_file_types_what_it_returns(graph):
    # ``registry = createRegistry()``: the signature read is the function's, not its file's module chunk's
    assert where(graph.callers("Registry.add")) == [("src/boot.ts", "boot", "function", 5)]
    assert graph.callers("Registry.add")[0].resolution == "resolved"


def test_a_callers_snippet_comes_from_the_window_that_holds_the_call(graph):
    (caller,) = graph.callers("finalize_all")
    assert (caller.symbol, caller.line) == ("process", 246)
    text, start = graph.text_at(caller)
    assert start > caller.start_line  # a later window of the long function
    assert text.splitlines()[caller.line - start].strip() == "finalize_all(items)"
