"""Tree-sitter chunking of JavaScript, TypeScript, TSX, Go, Rust and Java sources."""

from __future__ import annotations

from textwrap import dedent

import pytest
from grepgraph.retrievers.core.model import Chunk, ParsedFile
from grepgraph.retrievers.parse.treesitter.walk import parse_with_tree_sitter


def chunks_by_symbol(parsed: ParsedFile) -> dict[str, Chunk]:
    return {chunk.symbol: chunk for chunk in parsed.chunks if chunk.kind != "module"}


def kinds(parsed: ParsedFile) -> dict[str, str]:
    return {chunk.symbol: chunk.kind for chunk in parsed.chunks if chunk.kind != "module"}


def spans(parsed: ParsedFile) -> dict[str, tuple[int, int]]:
    return {chunk.symbol: (chunk.start_line, chunk.end_line) for chunk in parsed.chunks if chunk.kind != "module"}


def edges(parsed: ParsedFile, kind: str) -> set[tuple[str, str]]:
    return {(edge.source, edge.target) for edge in parsed.edges if edge.kind == kind}


def module_chunk(parsed: ParsedFile) -> Chunk:
    (module,) = [chunk for chunk in parsed.chunks if chunk.kind == "module"]
    return module


# --------------------------------------------------------------------------- TypeScript

TS_ROUTER = dedent(
    """\
    import { Request, Response } from "./http";
    import express = require("express");

    /**
     * Routes requests to handlers.
     */
    export class Router extends Base implements Handler {
      private routes = new Map();

      /** Handles one request. */
      handle(req: Request): Response {
        const route = this.find(req.path);
        return route.run(req);
      }
    }

    export const makeRouter = (base: string): Router => {
      return new Router(base);
    };

    export interface Handler extends Callable {
      handle(req: Request): Response;
    }
    export type Path = string;
    export enum Method { Get, Post }
    abstract class Shape {
      abstract area(): number;
    }
    namespace Routes {
      export function all() {}
    }
    """
)


def test_typescript_definitions_have_qualified_symbols_kinds_and_lines():
    parsed = parse_with_tree_sitter("src/router.ts", TS_ROUTER, "typescript")

    assert parsed.error == ""
    assert kinds(parsed) == {
        "Router": "class",
        "Router.handle": "method",
        "makeRouter": "function",
        "Handler": "interface",
        "Path": "type",
        "Method": "enum",
        "Shape": "class",
        "Routes.all": "function",
    }
    # a definition's chunk starts at its doc comment: the comment is part of what it says
    assert spans(parsed) == {
        "Router": (4, 15),
        "Router.handle": (10, 14),
        "makeRouter": (17, 19),
        "Handler": (21, 23),
        "Path": (24, 24),
        "Method": (25, 25),
        "Shape": (26, 28),
        "Routes.all": (30, 30),
    }
    chunks = chunks_by_symbol(parsed)
    assert chunks["Router.handle"].parent == "Router"
    assert chunks["Router"].parent == ""
    assert chunks["Router.handle"].text.splitlines()[:2] == ["  /** Handles one request. */",
                                                             "  handle(req: Request): Response {"]
    assert all(chunk.language == "typescript" and chunk.path == "src/router.ts" for chunk in parsed.chunks)


def test_typescript_docstrings_and_signatures():
    chunks = chunks_by_symbol(parse_with_tree_sitter("src/router.ts", TS_ROUTER, "typescript"))

    assert chunks["Router"].docstring == "Routes requests to handlers."
    assert chunks["Router.handle"].docstring == "Handles one request."
    assert chunks["makeRouter"].docstring == ""
    assert chunks["Router"].signature == "export class Router extends Base implements Handler"
    assert chunks["Router.handle"].signature == "handle(req: Request): Response"
    assert chunks["makeRouter"].signature == "export const makeRouter = (base: string): Router =>"
    assert chunks["Path"].signature == "export type Path = string"


def test_typescript_edges():
    parsed = parse_with_tree_sitter("src/router.ts", TS_ROUTER, "typescript")

    assert edges(parsed, "imports") == {("", "./http"), ("", "express")}
    assert ("Router.handle", "this.find") in edges(parsed, "calls")
    assert ("Router.handle", "route.run") in edges(parsed, "calls")
    assert ("makeRouter", "Router") in edges(parsed, "calls")  # new Router(...)
    assert ("Router", "Map") in edges(parsed, "calls")  # field initialiser belongs to the class
    assert edges(parsed, "inherits") == {("Router", "Base"), ("Router", "Handler"), ("Handler", "Callable")}
    find = next(edge for edge in parsed.edges if edge.target == "this.find")
    assert find.line == 12 and find.path == "src/router.ts"


def test_typescript_module_chunk_holds_the_top_level_remainder():
    module = module_chunk(parse_with_tree_sitter("src/router.ts", TS_ROUTER, "typescript"))

    assert module.symbol == "router"
    assert (module.start_line, module.end_line) == (1, 31)
    assert module.text.startswith(
        'import { Request, Response } from "./http";\nimport express = require("express");'
    )
    assert module.text.endswith("namespace Routes {\n}")  # the namespace's own lines, not its function
    assert "Routes requests" not in module.text  # a definition's docstring is part of the definition
    assert "handle(" not in module.text


def test_typescript_spec_file_is_test_and_skips_definitions_inside_describe_blocks():
    source = dedent(
        """\
        import { Router } from "./router";

        function makeRequest() { return {}; }

        describe("Router", () => {
          it("routes", () => {
            function localHelper() {}
            expect(new Router().handle(makeRequest())).toBeTruthy();
          });
        });
        """
    )
    parsed = parse_with_tree_sitter("src/router.spec.ts", source, "typescript")

    assert kinds(parsed) == {"makeRequest": "function"}
    assert all(chunk.is_test for chunk in parsed.chunks)
    assert ("", "makeRequest") in edges(parsed, "calls")


def test_typescript_regular_file_is_not_test():
    parsed = parse_with_tree_sitter("src/router.ts", TS_ROUTER, "typescript")

    assert not any(chunk.is_test for chunk in parsed.chunks)


# --------------------------------------------------------------------------- JavaScript

JS_UTIL = dedent(
    """\
    const path = require("path");
    import { readFile } from "fs/promises";

    // Joins parts into a path.
    function join(...parts) {
      return path.join(...parts);
    }

    function* ids() { yield 1; }

    class Cache extends Map {
      get(key) { return super.get(normalize(key)); }
    }

    const normalize = (key) => key.trim();

    const helpers = {
      twice(x) { return x * 2; },
      half: function (x) { return x / 2; },
    };

    Cache.prototype.clearAll = function () { this.clear(); };
    module.exports.join = join;
    """
)


def test_javascript_definitions():
    parsed = parse_with_tree_sitter("lib/util.js", JS_UTIL, "javascript")

    assert parsed.error == ""
    assert kinds(parsed) == {
        "join": "function",
        "ids": "function",
        "Cache": "class",
        "Cache.get": "method",
        "normalize": "function",
        "helpers.twice": "method",
        "helpers.half": "method",
        "Cache.clearAll": "method",
    }
    assert spans(parsed)["join"] == (4, 7)
    assert spans(parsed)["Cache"] == (11, 13)
    assert spans(parsed)["normalize"] == (15, 15)
    chunks = chunks_by_symbol(parsed)
    assert chunks["join"].docstring == "Joins parts into a path."
    assert chunks["join"].signature == "function join(...parts)"
    assert chunks["normalize"].signature == "const normalize = (key) =>"
    assert chunks["helpers.twice"].parent == "helpers"


def test_javascript_edges():
    parsed = parse_with_tree_sitter("lib/util.js", JS_UTIL, "javascript")

    assert edges(parsed, "imports") == {("", "path"), ("", "fs/promises")}
    calls = edges(parsed, "calls")
    assert ("join", "path.join") in calls
    assert ("Cache.get", "super.get") in calls
    assert ("Cache.get", "normalize") in calls
    assert ("normalize", "key.trim") in calls
    assert ("Cache.clearAll", "this.clear") in calls
    assert not any(target == "require" for _, target in calls)  # require() is an import
    assert edges(parsed, "inherits") == {("Cache", "Map")}


def test_javascript_test_file_detection():
    parsed = parse_with_tree_sitter("lib/util.test.js", "function helper() {}\n", "javascript")

    assert chunks_by_symbol(parsed)["helper"].is_test


# --------------------------------------------------------------------------- TSX

TSX_APP = dedent(
    """\
    import React from "react";

    interface Props { title: string }

    /** The app shell. */
    export function App({ title }: Props) {
      return <div onClick={() => track("open")}>{format(title)}</div>;
    }

    export const Badge = (props: Props) => <span>{props.title}</span>;
    """
)


def test_tsx_components_and_calls_inside_jsx():
    parsed = parse_with_tree_sitter("web/App.tsx", TSX_APP, "tsx")

    assert parsed.error == ""
    assert kinds(parsed) == {"Props": "interface", "App": "function", "Badge": "function"}
    assert spans(parsed) == {"Props": (3, 3), "App": (5, 8), "Badge": (10, 10)}
    chunks = chunks_by_symbol(parsed)
    assert chunks["App"].docstring == "The app shell."
    assert chunks["App"].signature == "export function App({ title }: Props)"
    assert {("App", "track"), ("App", "format")} <= edges(parsed, "calls")
    assert edges(parsed, "imports") == {("", "react")}


# --------------------------------------------------------------------------- Go

GO_ROUTER = dedent(
    """\
    package server

    import (
    \t"fmt"
    \tnethttp "net/http"
    )

    // Router dispatches requests.
    // It is safe for concurrent use.
    type Router struct {
    \tnethttp.Handler
    \t*Base
    \troutes map[string]Route
    }

    // Route is one endpoint.
    type Route interface {
    \tServe(w Writer) error
    }

    type ID int

    // Handle serves one request.
    func (r *Router) Handle(path string) error {
    \troute := r.lookup(path)
    \tfmt.Println(path)
    \treturn route.Serve(nil)
    }

    func New() *Router { return &Router{} }
    """
)


def test_go_definitions():
    parsed = parse_with_tree_sitter("server/router.go", GO_ROUTER, "go")

    assert parsed.error == ""
    assert kinds(parsed) == {
        "Router": "struct",
        "Route": "interface",
        "ID": "type",
        "Router.Handle": "method",
        "New": "function",
    }
    assert spans(parsed) == {
        "Router": (8, 14),
        "Route": (16, 19),
        "ID": (21, 21),
        "Router.Handle": (23, 28),
        "New": (30, 30),
    }
    chunks = chunks_by_symbol(parsed)
    assert chunks["Router.Handle"].parent == "Router"
    assert chunks["Router"].docstring == "Router dispatches requests.\nIt is safe for concurrent use."
    assert chunks["Router.Handle"].docstring == "Handle serves one request."
    assert chunks["Router.Handle"].signature == "func (r *Router) Handle(path string) error"
    assert chunks["Router"].signature == "type Router struct"
    assert chunks["Route"].signature == "type Route interface"
    assert not any(chunk.is_test for chunk in parsed.chunks)


def test_go_edges():
    parsed = parse_with_tree_sitter("server/router.go", GO_ROUTER, "go")

    assert edges(parsed, "imports") == {("", "fmt"), ("", "net/http")}
    assert {("Router.Handle", "r.lookup"), ("Router.Handle", "fmt.Println"), ("Router.Handle", "route.Serve")} <= (
        edges(parsed, "calls")
    )
    assert edges(parsed, "inherits") == {("Router", "nethttp.Handler"), ("Router", "Base")}


def test_go_module_chunk():
    module = module_chunk(parse_with_tree_sitter("server/router.go", GO_ROUTER, "go"))

    assert module.symbol == "router"
    assert (module.start_line, module.end_line) == (1, 6)
    assert module.text == 'package server\n\nimport (\n\t"fmt"\n\tnethttp "net/http"\n)'


def test_go_tests_are_detected_by_file_name_and_by_signature():
    source = dedent(
        """\
        package server

        import "testing"

        func TestHandle(t *testing.T) { newFixture() }

        func BenchmarkHandle(b *testing.B) {}

        func newFixture() {}
        """
    )
    in_test_file = chunks_by_symbol(parse_with_tree_sitter("server/router_test.go", source, "go"))
    in_plain_file = chunks_by_symbol(parse_with_tree_sitter("server/router.go", source, "go"))

    assert all(chunk.is_test for chunk in in_test_file.values())
    assert in_plain_file["TestHandle"].is_test
    assert in_plain_file["BenchmarkHandle"].is_test
    assert not in_plain_file["newFixture"].is_test


# --------------------------------------------------------------------------- Rust

RUST_SHAPES = dedent(
    """\
    use std::collections::{HashMap, HashSet as Set};
    use crate::geometry::Point;

    /// Something with an area.
    pub trait Shape: Debug {
        fn area(&self) -> f64;
    }

    /// A circle.
    #[derive(Debug)]
    pub struct Circle {
        radius: f64,
    }

    pub enum Kind { Round, Square }

    impl Circle {
        /// Makes a unit circle.
        pub fn unit() -> Self {
            Circle::new(1.0)
        }
    }

    impl Shape for Circle {
        fn area(&self) -> f64 {
            println!("area");
            self.radius * consts::pi()
        }
    }

    mod consts {
        pub fn pi() -> f64 { 3.14 }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn unit_has_area() {
            assert!(Circle::unit().area() > 0.0);
        }
    }
    """
)


def test_rust_definitions():
    parsed = parse_with_tree_sitter("src/shapes.rs", RUST_SHAPES, "rust")

    assert parsed.error == ""
    assert kinds(parsed) == {
        "Shape": "trait",
        "Shape.area": "method",
        "Circle": "struct",
        "Kind": "enum",
        "Circle.unit": "method",
        "impl Circle": "impl",
        "Shape for Circle": "impl",
        "Circle.area": "method",
        "consts.pi": "function",
        "tests.unit_has_area": "function",
    }
    chunk_spans = spans(parsed)
    assert chunk_spans["Shape"] == (4, 7)
    assert chunk_spans["Circle"] == (9, 13)  # from the doc comment above the #[derive] attribute
    assert chunk_spans["impl Circle"] == (17, 22)
    assert chunk_spans["Circle.unit"] == (18, 21)
    assert chunk_spans["Shape for Circle"] == (24, 29)
    assert chunk_spans["Circle.area"] == (25, 28)
    assert chunk_spans["consts.pi"] == (32, 32)
    assert chunk_spans["tests.unit_has_area"] == (39, 42)
    # an inherent impl is named apart from its type, so lookups of the type's symbol find the type
    assert [chunk.kind for chunk in parsed.chunks if chunk.symbol == "Circle"] == ["struct"]


def test_rust_parents_docstrings_and_signatures():
    chunks = chunks_by_symbol(parse_with_tree_sitter("src/shapes.rs", RUST_SHAPES, "rust"))

    assert chunks["Circle.unit"].parent == "Circle"
    assert chunks["Circle.area"].parent == "Circle"
    assert chunks["Shape.area"].parent == "Shape"
    assert chunks["consts.pi"].parent == "consts"
    assert chunks["Circle"].docstring == "A circle."
    assert chunks["Shape"].docstring == "Something with an area."
    assert chunks["Circle.unit"].docstring == "Makes a unit circle."
    assert chunks["Circle.unit"].signature == "pub fn unit() -> Self"
    assert chunks["Shape.area"].signature == "fn area(&self) -> f64"
    assert chunks["Circle"].signature == "pub struct Circle"
    assert chunks["Circle"].text.startswith("/// A circle.\n#[derive(Debug)]\npub struct Circle {")
    assert chunks["impl Circle"].signature == "impl Circle"


def test_rust_edges():
    parsed = parse_with_tree_sitter("src/shapes.rs", RUST_SHAPES, "rust")

    assert edges(parsed, "imports") == {
        ("", "std.collections.HashMap"),
        ("", "std.collections.HashSet"),
        ("", "crate.geometry.Point"),
        ("", "super"),
    }
    calls = edges(parsed, "calls")
    assert ("Circle.unit", "Circle.new") in calls
    assert ("Circle.area", "consts.pi") in calls
    assert not any(target in ("println", "assert") for _, target in calls)  # macros are not calls
    assert edges(parsed, "inherits") == {("Circle", "Shape"), ("Shape", "Debug")}


def test_rust_cfg_test_module_and_test_attribute_mark_tests():
    chunks = chunks_by_symbol(parse_with_tree_sitter("src/shapes.rs", RUST_SHAPES, "rust"))

    assert chunks["tests.unit_has_area"].is_test
    assert not chunks["Circle.unit"].is_test
    assert not chunks["consts.pi"].is_test

    attribute_only = parse_with_tree_sitter("src/lib.rs", "#[test]\nfn checks() {}\n\nfn real() {}\n", "rust")
    assert {chunk.symbol: chunk.is_test for chunk in attribute_only.chunks} == {"checks": True, "real": False}


# --------------------------------------------------------------------------- Java

JAVA_ROUTER = dedent(
    """\
    package com.acme.web;

    import java.util.List;
    import java.util.concurrent.*;

    /**
     * Routes requests.
     *
     * @author someone
     */
    @Component
    public class Router extends BaseRouter implements Handler, java.io.Closeable {
        private final List<Route> routes = new java.util.ArrayList<>();

        public Router(int size) {
            super(size);
        }

        /** Handles one request. */
        @Override
        public Response handle(Request request) throws IOException {
            Route route = this.find(request.path());
            return route.run(new Context(request));
        }

        static class Route {
            Response run(Context context) { return Response.ok(); }
        }

        interface Listener extends EventListener {
            void onRoute(Route route);
        }

        enum Mode { FAST, SAFE; boolean isFast() { return this == FAST; } }

        record Match(String path) {}
    }
    """
)


def test_java_definitions():
    parsed = parse_with_tree_sitter("src/main/java/com/acme/web/Router.java", JAVA_ROUTER, "java")

    assert parsed.error == ""
    assert kinds(parsed) == {
        "Router": "class",
        "Router.Router": "constructor",
        "Router.handle": "method",
        "Router.Route": "class",
        "Router.Route.run": "method",
        "Router.Listener": "interface",
        "Router.Listener.onRoute": "method",
        "Router.Mode": "enum",
        "Router.Mode.isFast": "method",
        "Router.Match": "record",
    }
    chunk_spans = spans(parsed)
    assert chunk_spans["Router"] == (6, 37)  # from the Javadoc above the @Component annotation
    assert chunk_spans["Router.Router"] == (15, 17)
    assert chunk_spans["Router.handle"] == (19, 24)
    assert chunk_spans["Router.Route.run"] == (27, 27)
    chunks = chunks_by_symbol(parsed)
    assert chunks["Router.Route.run"].parent == "Router.Route"
    assert chunks["Router.handle"].parent == "Router"


def test_java_docstrings_and_signatures():
    chunks = chunks_by_symbol(parse_with_tree_sitter("src/main/java/Router.java", JAVA_ROUTER, "java"))

    assert chunks["Router"].docstring == "Routes requests.\n\n@author someone"
    assert chunks["Router.handle"].docstring == "Handles one request."
    assert chunks["Router"].signature == (
        "public class Router extends BaseRouter implements Handler, java.io.Closeable"
    )
    assert chunks["Router.handle"].signature == "public Response handle(Request request) throws IOException"
    assert chunks["Router.Listener.onRoute"].signature == "void onRoute(Route route)"


def test_java_edges():
    parsed = parse_with_tree_sitter("src/main/java/Router.java", JAVA_ROUTER, "java")

    assert edges(parsed, "imports") == {("", "java.util.List"), ("", "java.util.concurrent")}
    calls = edges(parsed, "calls")
    assert {("Router.handle", "this.find"), ("Router.handle", "route.run"), ("Router.handle", "Context")} <= calls
    assert ("Router.Route.run", "Response.ok") in calls
    assert ("Router", "java.util.ArrayList") in calls
    assert edges(parsed, "inherits") == {
        ("Router", "BaseRouter"),
        ("Router", "Handler"),
        ("Router", "java.io.Closeable"),
        ("Router.Listener", "EventListener"),
    }


def test_java_module_chunk_is_package_and_imports():
    module = module_chunk(parse_with_tree_sitter("src/main/java/Router.java", JAVA_ROUTER, "java"))

    assert module.symbol == "Router"
    assert (module.start_line, module.end_line) == (1, 4)
    assert module.text == "package com.acme.web;\n\nimport java.util.List;\nimport java.util.concurrent.*;"


def test_java_test_detection_by_file_name_and_annotation():
    source = dedent(
        """\
        class RouterTest {
            @Test
            void routes() { assertTrue(true); }

            void helper() {}
        }
        """
    )
    in_test_file = parse_with_tree_sitter("app/RouterTest.java", source, "java")
    in_plain_file = chunks_by_symbol(parse_with_tree_sitter("app/Routes.java", source, "java"))

    assert all(chunk.is_test for chunk in in_test_file.chunks)
    assert in_plain_file["RouterTest.routes"].is_test
    assert not in_plain_file["RouterTest.helper"].is_test


# --------------------------------------------------------------------------- broken sources

BROKEN_SOURCES = {
    "javascript": (
        "lib/broken.js",
        "function good() { return 1; }\nfunction broken( {\n  let x = ;\n}\n",
        {"good"},
    ),
    "typescript": (
        "src/broken.ts",
        "export function good(): number { return 1; }\nclass Half {\n  m( {\n}\n",
        {"good"},
    ),
    "tsx": (
        "web/Broken.tsx",
        "export function Good() { return <div />; }\nexport function Bad() { return <div; }\n",
        {"Good"},
    ),
    "go": (
        "pkg/broken.go",
        "package pkg\n\nfunc Good() {}\n\nfunc Bad( {\n\tx := \n}\n\nfunc After() { Good() }\n",
        {"Good", "After"},
    ),
    "rust": (
        "src/broken.rs",
        "fn good() {}\n\nfn bad( {\n    let = ;\n}\n\nstruct After { x: i32 }\n",
        {"good", "After"},
    ),
    "java": (
        "src/Broken.java",
        "class Broken {\n    void good() {}\n    void bad( {\n        int = ;\n    }\n}\n",
        {"Broken", "Broken.good"},
    ),
}


@pytest.mark.parametrize("language", sorted(BROKEN_SOURCES))
def test_syntax_errors_keep_the_valid_definitions(language):
    path, source, expected = BROKEN_SOURCES[language]

    parsed = parse_with_tree_sitter(path, source, language)

    assert parsed.error == ""
    assert expected <= set(chunks_by_symbol(parsed))
    good = next(chunk for chunk in parsed.chunks if chunk.symbol in expected)
    assert good.start_line >= 1 and good.end_line >= good.start_line


def test_garbage_does_not_raise():
    parsed = parse_with_tree_sitter("src/Noise.java", "}}} {{{ ))) ((( ;;", "java")

    assert chunks_by_symbol(parsed) == {}


# --------------------------------------------------------------------------- limits and odd inputs


def test_long_class_keeps_its_own_lines_and_members_have_their_own_chunks():
    body = "\n".join(f"    int f{i}() {{ return {i}; }}" for i in range(250))
    source = f"class Big {{\n{body}\n    int last = 7;\n}}\n"
    parsed = parse_with_tree_sitter("src/Big.java", source, "java")
    chunks = chunks_by_symbol(parsed)

    assert (chunks["Big"].start_line, chunks["Big"].end_line) == (1, 253)
    assert chunks["Big"].text.splitlines() == ["class Big {", "    int last = 7;", "}"]
    assert chunks["Big.f249"].start_line == 251


def test_long_function_becomes_windows_that_keep_its_name_and_signature():
    statements = "\n".join(f"  step{i}();" for i in range(300))
    long_function = parse_with_tree_sitter("lib/long.js", f"function long(a) {{\n{statements}\n}}\n", "javascript")
    windows = long_function.chunks

    assert [chunk.part for chunk in windows] == [0, 1]
    assert (windows[0].start_line, windows[0].end_line) == (1, 302)  # the first chunk spans the definition
    assert (windows[1].start_line, windows[1].end_line) == (191, 302)  # 10 lines of overlap
    assert all(w.symbol == "long" and w.kind == "function" and w.signature == "function long(a)" for w in windows)
    assert "  step299();" in windows[1].text.splitlines()


def test_minified_code_chunks_hold_their_own_definition_not_the_whole_line():
    source = ";".join(f"function f{i}(a){{return g{i}(a)}}" for i in range(2000))
    parsed = parse_with_tree_sitter("dist/app.min.js", source, "javascript")

    chunks = chunks_by_symbol(parsed)
    assert len(chunks) == 2000
    assert chunks["f7"].text == "function f7(a){return g7(a)}"
    assert ("f7", "g7") in edges(parsed, "calls")


def test_empty_file_yields_nothing_and_no_error():
    assert parse_with_tree_sitter("src/empty.ts", "", "typescript") == ParsedFile()


def test_unsupported_language_is_reported_not_raised():
    parsed = parse_with_tree_sitter("main.py", "def f(): pass\n", "python")

    assert parsed.chunks == [] and "python" in parsed.error


# --------------------------------------------------------------------------- functions as values, per language

FACTORY_TS = dedent(
    """\
    import * as core from "./core";

    /** A checked number. */
    export const $Meter = core.makeKind("$Meter", (inst, def) => {
      inst._state.parse = (payload, ctx) => {
        return payload;
      };
      inst.check = function (value) {
        return value > def.min;
      };
    });

    export const wrapped = memo(forwardRef((props, ref) => {
      return props.label;
    }));

    const api = {
      get() { return fetchIt(); },
      post: (body) => sendIt(body),
      nested: { put(x) { return x; } },
    };

    server.route("/meters", (req, res) => {
      const meters = loadMeters();
      res.send(meters);
      return meters;
    });

    describe("meters", () => {
      const helper = () => 1;
      it("reads", () => {
        expect(helper()).toBe(1);
      });
    });
    """
)


def test_a_const_made_by_a_factory_callback_is_named_after_the_const_and_holds_its_members():
    parsed = parse_with_tree_sitter("src/meter.ts", FACTORY_TS, "typescript")
    chunks = chunks_by_symbol(parsed)

    assert kinds(parsed)["$Meter"] == "class"  # a capitalised name made by a factory is a type
    assert spans(parsed)["$Meter"] == (3, 11)
    assert chunks["$Meter"].docstring == "A checked number."
    assert chunks["$Meter"].signature == 'export const $Meter = core.makeKind("$Meter", (inst, def) =>'
    # members hung on the callback's first parameter are the const's, not ``inst``'s
    assert kinds(parsed)["$Meter._state.parse"] == "method"
    assert kinds(parsed)["$Meter.check"] == "method"
    assert chunks["$Meter.check"].parent == "$Meter"
    assert not any(symbol.startswith("inst") for symbol in kinds(parsed))
    assert ("$Meter", "core.makeKind") in edges(parsed, "calls")


def test_a_factory_made_type_exported_through_commonjs_is_a_class_too():
    source = 'exports.$Meter = core.makeKind("$Meter", (inst, def) => {\n  inst.check = (v) => v > def.min;\n});\n'
    parsed = parse_with_tree_sitter("lib/meter.cjs", source, "javascript")

    assert kinds(parsed) == {"$Meter": "class", "$Meter.check": "method"}  # as ``export const $Meter = ...``


def test_a_callback_wrapped_in_calls_is_named_after_its_const():
    parsed = parse_with_tree_sitter("src/meter.ts", FACTORY_TS, "typescript")

    assert kinds(parsed)["wrapped"] == "function"  # lower-case: a value, not a type
    assert spans(parsed)["wrapped"] == (13, 15)


def test_object_literal_methods_are_qualified_by_the_object():
    parsed = parse_with_tree_sitter("src/meter.ts", FACTORY_TS, "typescript")

    assert {s: k for s, k in kinds(parsed).items() if s.startswith("api.")} == {
        "api.get": "method",
        "api.post": "method",
        "api.nested.put": "method",
    }
    assert ("api.get", "fetchIt") in edges(parsed, "calls")


def test_a_long_callback_passed_at_file_level_is_named_after_the_call_but_test_blocks_are_not():
    parsed = parse_with_tree_sitter("src/meter.ts", FACTORY_TS, "typescript")
    callback = 'server.route("/meters", …) callback'

    assert kinds(parsed)[callback] == "function"
    assert "server.route" not in kinds(parsed)  # the call site is no definition of the callee
    assert spans(parsed)[callback] == (23, 27)
    assert (callback, "loadMeters") in edges(parsed, "calls")
    assert "describe" not in kinds(parsed) and "helper" not in kinds(parsed)


def test_a_short_file_level_callback_stays_in_the_module_chunk():
    parsed = parse_with_tree_sitter("lib/cli.js", "program.action(() => run());\n", "javascript")

    assert kinds(parsed) == {}
    assert module_chunk(parsed).text == "program.action(() => run());"


GO_VALUES = dedent(
    """\
    package hooks

    import "fmt"

    var (
    \t// preRunHook runs before a command.
    \tpreRunHook = func(name string) error {
    \t\treturn fmt.Errorf("no %s", name)
    \t}
    \tverbose, quiet = false, false
    )

    // MaxDepth bounds recursion.
    const MaxDepth = 8

    const (
    \tModeFast Mode = iota
    \tModeSafe
    )

    func run() {
    \tvar local = 3
    \t_ = local
    }
    """
)


def test_go_package_level_var_and_const_specs_are_symbols():
    parsed = parse_with_tree_sitter("hooks.go", GO_VALUES, "go")
    chunks = chunks_by_symbol(parsed)

    assert kinds(parsed) == {
        "preRunHook": "function",  # a var holding a func literal is a function
        "verbose": "variable",
        "quiet": "variable",
        "MaxDepth": "constant",
        "ModeFast": "constant",
        "ModeSafe": "constant",
        "run": "function",  # ``local`` is no symbol
    }
    assert spans(parsed)["preRunHook"] == (6, 9)
    assert chunks["preRunHook"].docstring == "preRunHook runs before a command."
    assert chunks["preRunHook"].signature == "preRunHook = func(name string) error"
    assert spans(parsed)["MaxDepth"] == (13, 14)
    assert chunks["MaxDepth"].signature == "const MaxDepth = 8"
    assert chunks["quiet"].text == chunks["verbose"].text == "\tverbose, quiet = false, false"
    assert ("preRunHook", "fmt.Errorf") in edges(parsed, "calls")


RUST_ITEMS = dedent(
    """\
    /// Returns early with an error.
    #[macro_export]
    macro_rules! bail {
        ($e:expr) => {
            return Err($e.into())
        };
    }

    pub struct Meter { n: u32 }

    impl Meter {
        pub const ZERO: u32 = 0;
        pub fn read(&self) -> u32 { self.n }
    }

    pub trait Gauge {
        fn level(&self) -> u32;
    }
    """
)


def test_rust_macros_inherent_impls_and_traits_are_chunks():
    parsed = parse_with_tree_sitter("src/lib.rs", RUST_ITEMS, "rust")
    chunks = chunks_by_symbol(parsed)

    assert kinds(parsed) == {
        "bail": "macro",
        "Meter": "struct",
        "impl Meter": "impl",
        "Meter.read": "method",
        "Gauge": "trait",
        "Gauge.level": "method",
    }
    assert spans(parsed)["bail"] == (1, 7)
    assert chunks["bail"].signature == "macro_rules! bail"
    assert chunks["bail"].docstring == "Returns early with an error."
    assert "pub const ZERO: u32 = 0;" in chunks["impl Meter"].text
    assert chunks["Meter.read"].parent == "Meter"


JAVA_TYPES = dedent(
    """\
    package acme;

    /** Hears events. */
    public interface Listener { void on(String event); }

    enum Mode { FAST, SAFE }

    /** A point. */
    record Point(int x, int y) {
        Point { if (x < 0) throw new IllegalArgumentException(); }
        int sum() { return x + y; }
    }
    """
)


def test_java_interfaces_enums_and_records_are_chunks():
    parsed = parse_with_tree_sitter("src/main/java/acme/Listener.java", JAVA_TYPES, "java")
    chunks = chunks_by_symbol(parsed)

    assert kinds(parsed) == {
        "Listener": "interface",
        "Listener.on": "method",
        "Mode": "enum",
        "Point": "record",
        "Point.Point": "constructor",
        "Point.sum": "method",
    }
    assert chunks["Listener"].docstring == "Hears events."
    assert chunks["Point"].signature == "record Point(int x, int y)"
    assert spans(parsed)["Point"] == (8, 12)
