"""A doc comment's first sentence as a search query: markers, tags and markup removed.

The query is what the package's authors wrote first about a definition: the first paragraph, cut at the
first sentence end, with comment markers (``///``, `` * ``), inline tags (``{@link X}``), HTML, and markdown
links, backticks and emphasis removed. A leading copy of the definition's own name ("Foo returns ...") is
dropped, as Go and Rust doc comments start that way and a user would not type it.
"""

from __future__ import annotations

import html
import re

MIN_WORDS, MAX_WORDS = 5, 40
_HTML_TAG = re.compile(
    r"</?(?:p|code|em|i|b|strong|a|tt|pre|br|ul|ol|li|var|sup|sub|blockquote|h[1-6]|table|tr|td|th|dl|dt|dd|span|"
    r"div|cite|dfn|kbd|samp|u|s|small|big|hr|img)(?:\s[^<>]*)?/?>", re.I)
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)\.(\s|$)", re.I)
_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Raises|Example|Examples):")  # Google-style sections
_ARTICLES = {"a", "an", "the"}
# After a name used as an imperative verb ("Filter the rows ..."), the name is the verb, not the subject.
_VERB_OBJECT = {"the", "a", "an", "all", "any", "each", "every", "this", "these", "those", "that", "it", "its",
                "one", "some", "no", "and", "or"}


def comment_lines(raw: str, language: str) -> list[str]:
    """A doc comment's lines without comment markers (a Python docstring is returned as is)."""
    raw = raw.replace("\r\n", "\n")
    if language == "python":
        return raw.split("\n")
    if raw.lstrip().startswith("/*"):
        body = re.sub(r"\*+/$", "", re.sub(r"^/\*\*+", "", raw.strip()))
        out = []
        for line in body.split("\n"):
            line = re.sub(r"^\s*\*(?!\*)", "", line)
            out.append(line[1:] if line.startswith(" ") else line)
        return out
    out = []
    for line in raw.split("\n"):
        line = line.strip()
        line = line[3:] if line.startswith("///") else line[2:] if line.startswith("//") else line
        if language == "go" and re.match(r"([a-z0-9]+:\S|nolint\b)", line):
            continue  # //go:generate, //nolint: directives, not documentation
        out.append(line[1:] if line.startswith(" ") else line)
    return out


def _link(match: re.Match) -> str:
    tag, body = match.group(1).lower(), match.group(2).strip()
    if tag.startswith("link"):
        if "|" in body:
            return body.split("|", 1)[1].strip()
        parts = re.match(r"([^\s(]*(?:\([^)]*\))?)\s*(.*)$", body, re.S)
        reference, label = (parts.group(1), parts.group(2).strip()) if parts else (body, "")
        return label or re.sub(r"\(.*\)$", "", reference).lstrip("#").replace("#", ".")
    return body


def plain_text(text: str, language: str) -> str:
    """Markup removed: inline tags, HTML, reStructuredText roles, markdown links, code and emphasis."""
    text = re.sub(r"\{@(linkplain|linkcode|link|code|literal|value)\b\s*([^{}]*)\}", _link, text)
    if language == "python":
        text = re.sub(r":[\w:.-]+:`~?([^`<]+?)(?:\s*<[^>]*>)?`", r"\1", text)  # :class:`~x.Y` -> x.Y
    if language in ("java", "javascript", "typescript"):
        text = html.unescape(_HTML_TAG.sub("", text))
    text = re.sub(r"\[([^\]\n]+)\]\((?:[^()\s]|\([^()\s]*\))*\)", r"\1", text)  # [label](url)
    if language in ("rust", "go"):
        text = re.sub(r"\[([^\]\n]+)\]\[[^\]\n]*\]", r"\1", text)
        text = re.sub(r"(?<![\w\]])\[(`?[A-Za-z_][\w:.!<>&*,()-]*`?)\]", r"\1", text)
    text = re.sub(r"\\([\[\]*_`#<>|\\])", r"\1", text)  # markdown escapes: \[Generic\]
    text = re.sub(r"``([^`]+)``", r"\1", text)
    text = re.sub(r"`([^`\n]+)`", r"\1", text)
    text = re.sub(r"(?<![\w*])\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*(?![\w*])", r"\1", text)
    text = re.sub(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])", r"\1", text)
    text = re.sub(r"(?<!\w)__(?=\S)([^_\n]+?)(?<=\S)__(?!\w)", r"\1", text)
    return text


def first_sentence(raw: str, language: str) -> str:
    """The first sentence of a doc comment's first paragraph, cleaned; '' when it has no leading prose."""
    paragraph = []
    for line in comment_lines(raw, language):
        stripped = line.strip()
        if language in ("javascript", "typescript", "java") and stripped.startswith("@"):
            break  # block tags end the description
        if not stripped:
            if paragraph:
                break
            continue
        if language == "java" and re.match(r"<p\b", stripped, re.I) and paragraph:
            break
        if stripped.startswith(("```", "~~~", "# ", ">>>", "..")) or (language == "rust" and stripped.startswith("#")):
            break
        if language == "python" and _SECTION.match(stripped):
            break
        paragraph.append(stripped)
    text = " ".join(paragraph)
    if language == "java":
        text = re.split(r"<p\b[^>]*>", text, maxsplit=1, flags=re.I)[0]
    text = " ".join(plain_text(text, language).split())
    match = _SENTENCE_END.search(text)
    return text[: match.start() + 1] if match else text


def drop_leading_name(sentence: str, name: str, symbol: str) -> str:
    """'Foo returns x.' -> 'Returns x.' when Foo is the definition's own name (kept when Foo is the verb)."""
    tokens = sentence.split()
    names = {name, symbol}

    def same(token: str) -> bool:
        return token.strip("`*'\"") in names

    cut = 0
    if tokens and same(tokens[0]) and not (len(tokens) > 1 and tokens[1].lower() in _VERB_OBJECT):
        cut = 1
    elif len(tokens) > 1 and tokens[0].lower() in _ARTICLES and same(tokens[1]):
        cut = 2
    if not cut or cut >= len(tokens):
        return sentence
    rest = " ".join(tokens[cut:])
    return rest[:1].upper() + rest[1:]


def restates_signature(sentence: str, name: str) -> bool:
    """Doc text like ``foo(a, b) -> int`` that only repeats the signature."""
    return bool(re.match(rf"^[\w.:]*\b{re.escape(name)}\s*[(<]", sentence)
                or re.match(r"^[\w.:]+\(.*\)\s*((->|:|=>).*)?$", sentence))


def usable(query: str, name: str) -> bool:
    """Whether a first sentence makes a query: 5 to 40 words, prose rather than code or a signature."""
    words = query.split()
    return (MIN_WORDS <= len(words) <= MAX_WORDS and not restates_signature(query, name)
            and not query.startswith(("@", "{@", "```", ">>>")) and "```" not in query
            and sum(w.isalpha() for w in words) >= 3)


def normalised_tokens(text: str) -> str:
    """' a b c ' word form, used to ask whether a query's text still occurs in a corpus."""
    return " " + " ".join(re.findall(r"[a-z0-9]+", text.lower())) + " "
