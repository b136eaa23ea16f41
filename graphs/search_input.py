"""The search input, defined once: each field's type, description, default and limits.

Everything that takes a search is derived from :data:`SEARCH_FIELDS`: ``validate_input``'s limits and
messages (:func:`field_problem`, :func:`limit_problem`), serve's request model (:func:`request_model`,
which serve extends with ``repo``), the MCP tool's parameters (:func:`with_search_parameters`), the
LangChain retriever's fields (:func:`pydantic_field`) and the command line's help. The graph's
``SearchInput`` stays a ``TypedDict`` for LangGraph and Studio (``graphs/state.py``); a unit test holds
its keys and types to these fields.

Every caller refuses a text over its limit with the same message, naming the limit; nothing is cut.
The query's limit is :data:`retrievers.query.limits.MAX_QUERY_CHARS`, kept there because the
``Searcher`` below this layer enforces it too.

No pydantic at import: the command line reads this module on its fast path, and :func:`pydantic_field`
imports it when asked.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, NamedTuple, TypeVar, get_args, get_origin

from grepgraph.retrievers.core.results import DEFAULT_LIMIT
from grepgraph.retrievers.query.limits import (
    MAX_GLOB_CHARS,
    MAX_GLOBS,
    MAX_PATTERN_CHARS,
    MAX_QUERY_CHARS,
    too_long,
)

Mode = Literal["auto", "literal", "regex"]
Focus = Literal["implementation", "tests", "all"]
MODES: tuple[str, ...] = get_args(Mode)
FOCUS_VALUES: tuple[str, ...] = get_args(Focus)
# Ranked results; literal and regex searches list matching lines, of which a caller may want many more.
MAX_LIMIT = 100
MAX_MATCH_LIMIT = 1_000
MAX_INTENT_CHARS = 4_000
MAX_TERMS = 64
MAX_TERM_CHARS = 200

Decorated = TypeVar("Decorated", bound=Callable[..., Any])


class InputField(NamedTuple):
    """One field of the search input (a named tuple: a dataclass costs the command line 5 ms to define).

    Attributes:
        name: Its key in the graph's input, serve's JSON and the MCP tool's arguments.
        annotation: Its type; a field whose default is ``None`` also takes ``None`` (absent: the graph decides).
        description: What it means, the same for every caller (serve's schema, the MCP tool, the retriever).
        default: Its value when absent.
        required: Whether every search gives it (only ``query``).
        max_chars: The longest text; for a list, the longest item.
        max_items: The most items of a list.
        item: What one item of a list is called in messages (``path filter``).
        minimum: The smallest number.
        maximum: The largest number in any mode (:func:`limit_range` has the range per mode).
    """

    name: str
    annotation: Any
    description: str
    default: Any = None
    required: bool = False
    max_chars: int | None = None
    max_items: int | None = None
    item: str = ""
    minimum: int | None = None
    maximum: int | None = None

    @property
    def is_list(self) -> bool:
        """Whether the field holds a list (its limits are ``max_items``, and ``max_chars`` per item)."""
        return get_origin(self.annotation) is list


SEARCH_FIELDS: tuple[InputField, ...] = (
    InputField(
        "query", str, required=True, max_chars=MAX_QUERY_CHARS,
        description="What to find: a question (`how are edges inserted into the graph?`), a symbol name, an error "
                    "message or a whole issue report; with mode `literal` / `regex`, the text or RE2 pattern to "
                    f"match line by line. At most {MAX_QUERY_CHARS:,} characters (a pattern: {MAX_PATTERN_CHARS:,})."),
    InputField(
        "mode", Mode, default="auto",
        description="`auto` (default): ranked search. `literal`: every line containing `query` exactly "
                    "(case-sensitive). `regex`: every line matching `query` as an RE2 regex. Line matches come "
                    "with their enclosing definition, definitions before uses, and `total_matches`."),
    InputField(
        "paths", list[str], max_items=MAX_GLOBS, max_chars=MAX_GLOB_CHARS, item="path filter",
        description="Only files matching these gitignore-style globs, e.g. [\"src/**\", \"*.go\", "
                    f"\"!**/vendor/**\"], in every mode (at most {MAX_GLOBS}, each at most {MAX_GLOB_CHARS} "
                    "characters)."),
    InputField(
        "languages", list[str], max_items=MAX_GLOBS, max_chars=MAX_GLOB_CHARS, item="language",
        description="Only files in these languages: python, javascript, typescript, go, rust, java, text."),
    InputField(
        "limit", int, default=DEFAULT_LIMIT, minimum=1, maximum=MAX_MATCH_LIMIT,
        description=f"How many results to return (1-{MAX_LIMIT}; literal and regex mode: 1-{MAX_MATCH_LIMIT}). "
                    f"Default: {DEFAULT_LIMIT}."),
    InputField(
        "intent", str, max_chars=MAX_INTENT_CHARS,
        description="Optional background that disambiguates the query (what you are trying to do): shown to the "
                    f"LLM rewrite and rerank, never searched. At most {MAX_INTENT_CHARS:,} characters."),
    InputField(
        "focus", Focus,
        description="`implementation` demotes test files, `tests` demotes everything else, `all` neither. "
                    "Default: `all` if the query asks about tests, else `implementation`."),
    InputField(
        "rewrite", bool,
        description="Force (true) or forbid (false) the local-LLM query rewrite. Default: decided per query."),
    InputField(
        "rerank", bool,
        description="Force (true) or forbid (false) the local-LLM rerank. Default: decided per query."),
    InputField(
        "keywords", list[str], max_items=MAX_TERMS, max_chars=MAX_TERM_CHARS, item="keyword",
        description="Exact identifiers or terms to match lexically, searched with the query "
                    f"(at most {MAX_TERMS}, each at most {MAX_TERM_CHARS} characters)."),
    InputField(
        "concepts", list[str], max_items=MAX_TERMS, max_chars=MAX_TERM_CHARS, item="concept",
        description="Ideas to match semantically, embedded instead of the query "
                    f"(at most {MAX_TERMS}, each at most {MAX_TERM_CHARS} characters)."),
    InputField(
        "passage", str, max_chars=MAX_QUERY_CHARS,
        description="A hypothetical code passage, embedded instead of the query (and the concepts). "
                    f"At most {MAX_QUERY_CHARS:,} characters."),
)
FIELDS = {spec.name: spec for spec in SEARCH_FIELDS}


# --------------------------------------------------------------------------- checks (one message each)
def limit_range(mode: str) -> tuple[int, int]:
    """The smallest and largest ``limit`` in ``mode``."""
    return FIELDS["limit"].minimum or 1, MAX_LIMIT if mode == "auto" else MAX_MATCH_LIMIT


def limit_problem(limit: Any, mode: str) -> str:
    """Why ``limit`` can't be used in ``mode`` (empty when it can)."""
    low, high = limit_range(mode)
    if isinstance(limit, bool) or not isinstance(limit, int) or not low <= limit <= high:
        return f"limit must be an integer from {low} to {high}, got {limit!r}"
    return ""


def field_problem(name: str, value: Any) -> str:
    """Why ``value`` is over the limits of field ``name`` (empty when it is not, or is no text or list).

    The type of a value is checked where it is used; this only measures: ``query is 120,000 characters;
    the limit is 100,000``, ``65 keywords; the limit is 64``, ``a path filter is 600 characters; ...``.
    """
    spec = FIELDS.get(name)
    if spec is None:
        return ""
    if isinstance(value, str) and spec.max_chars is not None and len(value) > spec.max_chars:
        return too_long(name, len(value), spec.max_chars)
    if isinstance(value, list):
        if spec.max_items is not None and len(value) > spec.max_items:
            return f"{len(value):,} {spec.item}s; the limit is {spec.max_items:,}"
        longest = max((len(item) for item in value if isinstance(item, str)), default=0)
        if spec.max_chars is not None and longest > spec.max_chars:
            return too_long(f"a {spec.item}", longest, spec.max_chars)
    return ""


# --------------------------------------------------------------------------- derived types
def field_type(spec: InputField) -> Any:
    """The field's type as a pydantic model or a signature states it (``T | None`` when the default is None)."""
    return spec.annotation if spec.required or spec.default is not None else spec.annotation | None


def pydantic_field(name: str, *, constraints: bool = True, with_default: bool = True, **overrides: Any) -> Any:
    """A pydantic ``Field`` for field ``name``: its description, default and (``constraints``) limits.

    A number's range goes into the schema (``minimum``, ``maximum``) unchecked by pydantic: it depends on
    the mode, which :func:`limit_problem` reads.

    Args:
        name: The field.
        constraints: State the lengths as pydantic constraints (``maxLength``, ``maxItems`` in the schema,
            checked by pydantic after :func:`field_problem` has had its say). False: only in the description;
            the caller checks with :func:`field_problem` (the MCP tool, whose schema has no lengths).
        with_default: Carry the default (False: in ``Annotated``, where the signature holds the default).
        **overrides: Other ``Field`` arguments (``default_factory``...), replacing the definition's.
    """
    from pydantic import Field

    spec = FIELDS[name]
    arguments: dict[str, Any] = {"description": spec.description}
    if with_default and not spec.required:
        arguments["default"] = spec.default
    if constraints:
        arguments.update({key: value for key, value in (
            ("min_length", 1 if spec.required else None),
            ("max_length", spec.max_items if spec.is_list else spec.max_chars)) if value is not None})
    if spec.minimum is not None:
        arguments["json_schema_extra"] = {"minimum": spec.minimum, "maximum": spec.maximum}
    arguments.update(overrides)
    if "default_factory" in arguments:
        arguments.pop("default", None)
    return Field(**arguments)


@functools.cache
def request_model() -> type[Any]:
    """A pydantic model of the whole search input: serve extends it with ``repo`` (and its own checks).

    Unknown keys are refused. Each limited field is measured by :func:`field_problem` before pydantic's
    own constraints run, so a 422 says what the graph would say; ``limit`` is checked per mode.
    """
    from pydantic import ConfigDict, create_model, field_validator, model_validator

    def within_limits(cls: type, value: Any, info: Any) -> Any:
        problem = field_problem(info.field_name, value)
        if problem:
            raise ValueError(problem)
        return value

    def query_has_text(cls: type, value: str) -> str:
        if not value.strip():
            raise ValueError("query is empty")
        return value

    def limit_for_mode(self: Any) -> Any:
        problem = limit_problem(self.limit, self.mode)
        if problem:
            raise ValueError(problem)
        return self

    limited = [spec.name for spec in SEARCH_FIELDS if spec.max_chars or spec.max_items]
    return create_model(  # type: ignore[call-overload]  # field definitions built from SEARCH_FIELDS
        "SearchInputModel", __config__=ConfigDict(extra="forbid"), __doc__="One code search.",
        __validators__={"within_limits": field_validator(*limited, mode="before")(within_limits),
                        "query_has_text": field_validator("query")(query_has_text),
                        "limit_for_mode": model_validator(mode="after")(limit_for_mode)},
        **{spec.name: (field_type(spec), pydantic_field(spec.name)) for spec in SEARCH_FIELDS},
    )


def with_search_parameters(names: Sequence[str]) -> Callable[[Decorated], Decorated]:
    """Give a function ``f(..., **search)`` these fields as its parameters, for tools that read signatures.

    The fields come first, each ``Annotated[type, Field(description=...)]`` with its default (FastMCP
    builds the tool's input schema from ``inspect.signature``); the function's own parameters follow.
    Limits are stated in the descriptions, not checked by the schema: the function checks them with
    :func:`field_problem` / :func:`limit_problem` (or the graph's ``validate_input``) for their messages.
    """
    def apply(function: Decorated) -> Decorated:
        own = inspect.signature(function, eval_str=True)
        fields = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                    default=inspect.Parameter.empty if FIELDS[name].required else FIELDS[name].default,
                                    annotation=Annotated[field_type(FIELDS[name]),
                                                         pydantic_field(name, constraints=False, with_default=False)])
                  for name in names]
        rest = [parameter for parameter in own.parameters.values() if parameter.kind != parameter.VAR_KEYWORD]
        function.__signature__ = own.replace(parameters=[*fields, *rest])  # type: ignore[attr-defined]
        return function

    return apply
