"""Prompt templates, one Markdown file each, loaded by name."""

from __future__ import annotations

from functools import cache
from pathlib import Path

PROMPTS_DIR = Path(__file__).parent


@cache
def load_prompt(name: str) -> str:
    """The text of ``prompts/<name>.md``."""
    path = PROMPTS_DIR / f"{name}.md"
    if not path.is_file():
        raise FileNotFoundError(f"no prompt named {name!r} in {PROMPTS_DIR}")
    return path.read_text(encoding="utf-8")


def render_prompt(name: str, **values: str) -> str:
    """``load_prompt(name)`` with ``{placeholders}`` filled in (other braces left alone)."""
    text = load_prompt(name)
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text
