"""The scoping rules of each language that call resolution follows.

What ``self`` is called, which names a method or a package sees without an import, how JavaScript modules
export and import, and each language's built-ins (a call to one is *built-in*, never unresolved).
"""

from __future__ import annotations

import builtins

CONSTRUCTOR_NAMES = frozenset({"__init__", "__new__", "constructor"})
SELF_NAMES = {"python": ("self", "cls"), "rust": ("self", "Self")}
DEFAULT_SELF_NAMES = ("this",)
# Java calls a method of the enclosing class without ``this.``; Python, JavaScript and Rust never do.
IMPLICIT_THIS_LANGUAGES = frozenset({"java"})
# Same-package names are visible without an import in Go and Java.
PACKAGE_SCOPED_LANGUAGES = frozenset({"go", "java"})
JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
JS_DEFAULT_EXPORT = "default"
JS_NAMESPACE = "*"  # ``import * as ns`` / ``require`` bind the whole module; ``export *`` passes all names on
GO_DOT_IMPORT = "."
JS_MODULE_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts", "/index.ts",
                      "/index.tsx", "/index.js", "/index.jsx", "/index.mjs")
BUILTINS = {
    "python": frozenset(dir(builtins)),
    "javascript": frozenset(
        "Array Boolean Date Error EvalError JSON Map Math Number Object Promise Proxy RangeError Reflect RegExp Set "
        "String Symbol TypeError URL URLSearchParams WeakMap WeakSet BigInt console clearInterval clearTimeout "
        "decodeURIComponent encodeURIComponent fetch isFinite isNaN parseFloat parseInt queueMicrotask require "
        "setImmediate setInterval setTimeout structuredClone".split()),
    "go": frozenset("append cap clear close complex copy delete imag len make max min new panic print println "
                    "real recover".split()),
    "java": frozenset("String Object Integer Long Double Boolean Character Math System Thread StringBuilder "
                      "RuntimeException IllegalArgumentException IllegalStateException NullPointerException "
                      "UnsupportedOperationException Exception Error ArrayList HashMap HashSet".split()),
    "rust": frozenset("Some None Ok Err Box Vec String Option Result drop".split()),
}
BUILTINS["typescript"] = BUILTINS["tsx"] = BUILTINS["javascript"]
