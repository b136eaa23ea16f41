"""Precise call graph: each resolution rule on a small real index (Python and TypeScript), as a user asks it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from textwrap import dedent

import pytest

from retrievers.index import CodeIndex
from retrievers.symbols import SymbolGraph

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


def test_typescript_this_call_resolves_and_a_variables_call_is_by_name_only(typescript_graph):
    assert answer(typescript_graph.callers("Client.send")) == [
        ("Client.request", "resolved"), ("get", "by name only"), ("pump", "by name only")]


def test_typescript_new_of_an_imported_class_resolves_to_it(typescript_graph):
    callers = typescript_graph.callers("Client")
    assert [(ref.path, ref.symbol, ref.resolution) for ref in callers] == [("web/api.ts", "get", "resolved")]
