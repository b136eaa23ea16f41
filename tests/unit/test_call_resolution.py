"""Precise call graph: each resolution rule on a small real index (Python and TypeScript), as a user asks it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from textwrap import dedent

import pytest
from grepgraph.retrievers.codegraph.call_resolution import CallResolver
from grepgraph.retrievers.codegraph.symbols import SymbolGraph
from grepgraph.retrievers.store.index import CodeIndex

PYTHON_FILES = {
    "shop/__init__.py": "from .store import Store\n",
    "shop/base.py": """\
        class Base:
            def save(self):
                return 1

            def run(self):
                return self.save()
        """,
    "shop/store.py": """\
        from typing import Generic, TypeVar

        from .base import Base

        T = TypeVar("T")


        class Store(Base, Generic[T]):
            def save(self):
                return 2

            def flush(self):
                self.save()
                return super().save()


        class Jar:
            def extract(self, response):
                return self.cookiejar.extract(response)
        """,
    "shop/client.py": """\
        import os
        import shop.base
        from shop import Store as Shelf


        def make():
            shelf = Shelf()
            return shelf


        def persist(thing):
            return thing.save()


        def report():
            path = os.path.join("a", "b")
            if not path:
                raise RuntimeError("no path")
            make()
            return shop.base.Base().run()
        """,
}

TYPESCRIPT_FILES = {
    "web/client.ts": """\
        export class Client {
          send(request: number): number {
            return request;
          }

          request(): number {
            return this.send(1);
          }
        }
        """,
    "web/api.ts": """\
        import { Client } from './client';

        export function get(): number {
          const client = new Client();
          return client.send(2);
        }

        export function pump(stream: Generator): void {
          stream.send(3);
        }
        """,
}


def build_index(root: Path, files: dict[str, str]) -> sqlite3.Connection:
    repo = root / "repo"
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text))
    CodeIndex(repo, root / "index").update(embed=False)
    return sqlite3.connect(root / "index" / "index.sqlite")


@pytest.fixture(scope="module")
def python_graph(tmp_path_factory) -> SymbolGraph:
    return SymbolGraph(build_index(tmp_path_factory.mktemp("python_calls"), PYTHON_FILES))


@pytest.fixture(scope="module")
def typescript_graph(tmp_path_factory) -> SymbolGraph:
    return SymbolGraph(build_index(tmp_path_factory.mktemp("typescript_calls"), TYPESCRIPT_FILES))


def answer(refs) -> list[tuple[str, str]]:
    return [(ref.symbol, ref.resolution) for ref in refs]


def test_self_call_reaches_the_inherited_method_and_super_reaches_the_base(python_graph):
    callers = answer(python_graph.callers("Base.save"))
    # Store.flush's super().save() and Base.run's self.save() run Base.save; persist's thing.save() might.
    assert callers == [("Base.run", "resolved"), ("Store.flush", "resolved"), ("persist", "by name only")]


def test_self_call_in_a_base_class_reaches_a_subclass_override(python_graph):
    callers = answer(python_graph.callers("Store.save"))
    assert ("Base.run", "resolved") in callers and ("Store.flush", "resolved") in callers
    assert callers[-1] == ("persist", "by name only")


def test_constructor_call_through_an_alias_and_a_package_re_export_reaches_the_class(python_graph):
    callers = python_graph.callers("Store")
    assert [(ref.path, ref.symbol, ref.resolution, ref.via) for ref in callers] == [
        ("shop/client.py", "make", "resolved", "Shelf")]


def test_a_method_of_an_object_built_through_an_imported_module_path_resolves(python_graph):
    assert answer(python_graph.callers("Base.run")) == [("report", "resolved")]


def test_a_wrapper_calling_another_objects_same_named_method_is_not_its_own_caller(python_graph):
    assert python_graph.callers("Jar.extract") == []


def test_callees_list_the_repository_first_and_built_ins_last(python_graph):
    callees = [(ref.symbol, ref.kind, ref.resolution) for ref in python_graph.callees("report")]
    assert callees[0] == ("make", "function", "resolved")
    assert set(callees[1:3]) == {("Base", "class", "resolved"), ("Base.run", "method", "resolved")}  # one line
    assert callees[3:] == [("os.path.join", "external", "external"), ("RuntimeError", "external", "built-in")]


def test_the_old_bare_name_answer_stays_available(python_graph):
    by_name = {ref.symbol for ref in python_graph.callers_by_name("Base.save")}
    assert by_name == {"Base.run", "Store.flush", "persist"}


def test_typescript_this_call_and_a_constructed_objects_call_resolve(typescript_graph):
    callers = answer(typescript_graph.callers("Client.send"))
    assert sorted(callers[:2]) == [("Client.request", "resolved"), ("get", "resolved")]  # client = new Client()
    assert callers[2:] == [("pump", "by name only")]  # a Generator is no class of the repository


def test_typescript_new_of_an_imported_class_resolves_to_it(typescript_graph):
    callers = typescript_graph.callers("Client")
    assert [(ref.path, ref.symbol, ref.resolution) for ref in callers] == [("web/api.ts", "get", "resolved")]


# --------------------------------------------------------------------------- what a name holds
TYPED_FILES = {
    "lab/models.py": """\
        class Sample:
            def measure(self):
                return 1


        class Report:
            def measure(self):
                return 2
        """,
    "lab/bench.py": """\
        from typing import Optional

        from .models import Report, Sample


        def fresh() -> "Sample":
            return Sample()


        class Bench:
            current: Optional[Sample]

            def __init__(self, report: Report):
                self.sample = Sample()
                self.report = report

            @property
            def latest(self) -> Sample:
                return self.sample

            def run(self, given: Sample, raw: bytes):
                self.sample.measure()
                self.report.measure()
                self.latest.measure()
                self.current.measure()
                given.measure()
                made = fresh()
                made.measure()
                raw.measure()
        """,
    "lab/tools.py": """\
        def probe(thing):
            return thing.measure()
        """,
}


@pytest.fixture(scope="module")
def typed_calls(tmp_path_factory) -> dict[str, tuple[str, tuple]]:
    """Each call written in ``Bench.run``, as the resolver answers it: target -> (status, definitions)."""
    connection = build_index(tmp_path_factory.mktemp("typed_calls"), TYPED_FILES)
    resolver = CallResolver(connection)
    answers = {}
    for target, line in connection.execute(
            "SELECT target, line FROM edges WHERE kind = 'calls' AND source = 'Bench.run' ORDER BY line"):
        resolution = resolver.resolve("lab/bench.py", "Bench.run", target)
        answers[target] = (resolution.status, tuple(symbol for _, symbol in resolution.targets))
    return answers


@pytest.mark.parametrize(("call", "how"), [
    ("self.sample.measure", "an attribute assigned a constructed object"),
    ("self.latest.measure", "a property's return type"),
    ("self.current.measure", "a class-level annotation (Optional[...])"),
    ("given.measure", "an annotated parameter"),
    ("made.measure", "assigned the result of a function with a return annotation"),
])
def test_a_names_stated_class_resolves_its_method_call(typed_calls, call, how):
    assert typed_calls[call] == ("resolved", ("Sample.measure",)), how


def test_an_annotated_parameter_picks_its_own_class(typed_calls):
    assert typed_calls["self.report.measure"] == ("resolved", ("Report.measure",))


def test_a_name_typed_outside_the_repository_calls_nothing_here(typed_calls, tmp_path):
    assert typed_calls["raw.measure"][0] == "external"  # raw: bytes
    graph = SymbolGraph(build_index(tmp_path, TYPED_FILES))
    callers = {(ref.symbol, ref.resolution) for ref in graph.callers("Sample.measure")}
    assert ("Bench.run", "resolved") in callers
    assert ("probe", "by name only") in callers  # no type stated: listed by name only, as before


# --------------------------------------------------------------------------- JS/TS imports, exactly
MODULES_FILES = {
    "app/net/client.ts": """\
        export class Client {
          send(): number {
            return 1;
          }
        }

        export function format(): string {
          return "net";
        }

        export function unrelated(): void {}
        """,
    "app/text/format.ts": """\
        export function format(): string {
          return "text";
        }
        """,
    "app/store.ts": """\
        class Store {
          save(): void {}
        }
        export default Store;
        """,
    "app/util/index.ts": """\
        export { slugify as slug } from "./slug";
        export * from "./more";
        """,
    "app/util/slug.ts": """\
        export function slugify(text: string): string {
          return text;
        }
        """,
    "app/util/more.ts": """\
        export function trim(text: string): string {
          return text;
        }
        """,
    "app/main.ts": """\
        import { Client as C, format } from "./net/client.js";
        import Shelf from "./store";
        import * as util from "./util";
        import { useThing } from "some-library";

        export function run(): void {
          const client = new C();
          client.send();
          format();
          new Shelf().save();
          util.slug("a");
          util.trim("b");
          useThing();
          unrelated();
          build().send();
        }

        function build(): C {
          return new C();
        }
        """,
    "app/legacy/scan.js": """\
        function scan(input) {
          return input;
        }
        module.exports = scan;
        """,
    "app/legacy/parse.js": """\
        exports.parse = function parse(input) {
          return input;
        };
        """,
    "app/legacy/use.js": """\
        const { parse: read } = require("./parse");
        const scanner = require("./scan");

        function load(input) {
          return scanner(read(input));
        }
        """,
}


@pytest.fixture(scope="module")
def modules_index(tmp_path_factory) -> sqlite3.Connection:
    return build_index(tmp_path_factory.mktemp("js_imports"), MODULES_FILES)


def resolved_targets(connection: sqlite3.Connection, path: str, source: str, target: str) -> tuple:
    resolution = CallResolver(connection).resolve(path, source, target)
    return resolution.status, resolution.targets or resolution.name


def test_an_aliased_named_import_resolves_to_the_class_in_the_module_it_names(modules_index):
    graph = SymbolGraph(modules_index)
    assert answer(graph.callers("Client")) == [("run", "resolved"), ("build", "resolved")]
    assert resolved_targets(modules_index, "app/main.ts", "run", "C") == (
        "resolved", (("app/net/client.ts", "Client"),))


def test_a_named_import_picks_the_module_it_names_among_same_named_definitions(modules_index):
    # ``.js`` in a TypeScript import names the ``.ts`` file; the other ``format`` is not imported here
    assert resolved_targets(modules_index, "app/main.ts", "run", "format") == (
        "resolved", (("app/net/client.ts", "format"),))


def test_a_default_import_under_another_name_reaches_the_default_export(modules_index):
    graph = SymbolGraph(modules_index)
    assert answer(graph.callers("Store")) == [("run", "resolved")]
    assert answer(graph.callers("Store.save")) == [("run", "resolved")]


def test_a_namespace_import_of_a_directory_follows_its_index_re_exports(modules_index):
    assert resolved_targets(modules_index, "app/main.ts", "run", "util.slug") == (
        "resolved", (("app/util/slug.ts", "slugify"),))
    assert resolved_targets(modules_index, "app/main.ts", "run", "util.trim") == (
        "resolved", (("app/util/more.ts", "trim"),))
    assert answer(SymbolGraph(modules_index).callers("slugify")) == [("run", "resolved")]


def test_a_package_import_is_external_and_a_name_not_imported_stays_unresolved(modules_index):
    assert resolved_targets(modules_index, "app/main.ts", "run", "useThing") == ("external", "some-library.useThing")
    # the module defining ``unrelated`` is imported, but not that name: no guess
    assert resolved_targets(modules_index, "app/main.ts", "run", "unrelated") == ("unresolved", "")


def test_require_destructuring_and_a_required_default_export_resolve(modules_index):
    graph = SymbolGraph(modules_index)
    assert answer(graph.callers("parse")) == [("load", "resolved")]
    assert answer(graph.callers("scan")) == [("load", "resolved")]


def test_a_constructed_objects_method_resolves_and_a_call_results_method_is_by_name_only(modules_index):
    # ``client = new C()`` states client's class; ``build().send()`` leaves its receiver unnamed
    assert resolved_targets(modules_index, "app/main.ts", "run", "client.send") == (
        "resolved", (("app/net/client.ts", "Client.send"),))
    # one result per call site: ``client.send()`` resolved, ``build().send()`` by name only
    callers = SymbolGraph(modules_index).callers("Client.send")
    assert [(ref.symbol, ref.line, ref.resolution) for ref in callers] == [
        ("run", 8, "resolved"), ("run", 15, "by name only")]
    targets = {row[0] for row in modules_index.execute(
        "SELECT target FROM edges WHERE kind = 'calls' AND path = 'app/main.ts' AND source = 'run'")}
    assert {"client.send", ".send", "Shelf().save"} <= targets
    assert resolved_targets(modules_index, "app/main.ts", "run", ".send") == ("unresolved", "")


# --------------------------------------------------------------------------- Go packages
GO_FILES = {
    "client/client.go": """\
        package client

        type base struct{}

        func (b *base) reset() {}

        type Client struct {
            base
        }

        func New() *Client {
            return &Client{}
        }

        func (c *Client) Do() {
            c.send()
            c.reset()
            helper()
        }
        """,
    "client/send.go": """\
        package client

        func (c *Client) send() {}

        func helper() {}
        """,
    "internal/log/log.go": """\
        package log

        func Info() {}
        """,
    "tools/log/log.go": """\
        package log

        func Info() {}
        """,
    "cmd/app/main.go": """\
        package main

        import (
            "fmt"

            cl "example.com/shop/client"
            "example.com/shop/internal/log"
        )

        func main() {
            c := cl.New()
            c.Do()
            log.Info()
            fmt.Println("done")
        }
        """,
}


@pytest.fixture(scope="module")
def go_index(tmp_path_factory) -> sqlite3.Connection:
    return build_index(tmp_path_factory.mktemp("go_imports"), GO_FILES)


def test_go_an_aliased_import_resolves_to_the_packages_file(go_index):
    assert resolved_targets(go_index, "cmd/app/main.go", "main", "cl.New") == (
        "resolved", (("client/client.go", "New"),))
    assert answer(SymbolGraph(go_index).callers("New")) == [("main", "resolved")]


def test_go_an_import_path_names_its_own_directory_not_a_same_named_package(go_index):
    assert resolved_targets(go_index, "cmd/app/main.go", "main", "log.Info") == (
        "resolved", (("internal/log/log.go", "Info"),))
    assert resolved_targets(go_index, "cmd/app/main.go", "main", "fmt.Println") == ("external", "fmt.Println")


def test_go_receiver_calls_reach_methods_in_other_files_and_embedded_types(go_index):
    graph = SymbolGraph(go_index)
    assert answer(graph.callers("Client.send")) == [("Client.Do", "resolved")]
    assert answer(graph.callers("base.reset")) == [("Client.Do", "resolved")]
    assert answer(graph.callers("helper")) == [("Client.Do", "resolved")]
    callees = [(ref.path, ref.symbol, ref.resolution) for ref in graph.callees("main")]
    assert callees[0] == ("client/client.go", "New", "resolved")
    assert ("", "fmt.Println", "external") in callees


def test_names_assigned_to_each_other_in_a_cycle_stay_unknown(tmp_path):
    files = {"loop.py": """\
        def spin():
            a = b
            b = a
            a.measure()
        """}
    resolver = CallResolver(build_index(tmp_path, files))
    assert resolver.resolve("loop.py", "spin", "a.measure").status == "unresolved"
