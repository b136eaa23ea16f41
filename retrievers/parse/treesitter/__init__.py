"""Symbol-level chunks and reference edges for JavaScript, TypeScript, Go, Rust and Java.

One tree-sitter walk per file (``walk``) yields a chunk per definition (function,
method, class, interface, struct, impl, macro, package-level var/const, ...), windows
for the long ones and for the file's top-level remainder (``chunks``), and best-effort
``calls`` / ``imports`` / ``inherits`` edges. Targets are kept as written (``this.save``,
``pkg.Func``, ``Type.new``); resolving them to definitions is the query side's job.
Each grammar's rules live in a module of their own (``javascript``, with its imports and
exports in ``javascript_imports``; ``go``, ``rust``, ``java``).

Grammars are imported lazily, so a missing grammar wheel turns into
``ParsedFile(error=...)`` for that language instead of an import error for the module.
Syntax errors never raise: tree-sitter recovers with ERROR nodes and the walk takes
whatever definitions it still recognises.
"""

from .walk import parse_with_tree_sitter

__all__ = ["parse_with_tree_sitter"]
