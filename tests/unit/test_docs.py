"""The documents stay true to the code: the generated settings page, the links between pages, the README's commands."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]
# .ci/run runs the README's test command: the install (pinned by constraints.txt), then the tests.
CI_INSTALL = 'python3 -m venv .venv && .venv/bin/pip install -q -c constraints.txt -e ".[dev,serve,studio,mcp]"'
CI_TESTS = ".venv/bin/python -m pytest"

FENCE = re.compile(r"^```.*?^```", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.M)


def load_generator():
    spec = importlib.util.spec_from_file_location("make_configuration", ROOT / "docs" / "make_configuration.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def prose(text: str) -> str:
    """The text without code blocks and code spans (a `# comment` is no heading, `[a](b)` in code no link)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens, repeats -1."""
    seen: dict[str, int] = {}
    result = set()
    for heading in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def test_configuration_page_matches_the_settings():
    generator = load_generator()
    on_disk = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert on_disk == generator.render(), (
        "docs/configuration.md is out of date: run .venv/bin/python docs/make_configuration.py > docs/configuration.md")


def test_configuration_page_lists_every_setting_with_its_variable():
    generator = load_generator()
    page = generator.render()
    for _title, schema, _table in generator.settings_schemas():
        for field in schema.__dataclass_fields__.values():
            assert f"| `{field.name}` | `GREPGRAPH_{field.name.upper()}` |" in page


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_links_between_documents_lead_somewhere(document):
    broken = []
    for target in LINK.findall(prose(document.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # http(s), mailto: not ours to check offline
            continue
        file_part, _, anchor = target.partition("#")
        linked = (document.parent / file_part).resolve() if file_part else document
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and anchor not in anchors(linked):
            broken.append(f"{target}: no such heading in {linked.relative_to(ROOT)}")
    assert not broken, f"{document.relative_to(ROOT)}: {broken}"


def test_readme_stays_a_front_door():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300, "README.md grew past 300 lines: move the detail to docs/"


def test_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"{CI_INSTALL} && {CI_TESTS}" in readme
    assert CI_INSTALL in ci and CI_TESTS in ci


def test_architecture_names_every_retrievers_module():
    """Each module of retrievers/ has its line in the architecture's table, and every module named there exists."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([\w/]+\.py)` \|", page, re.M))
    package = ROOT / "retrievers"
    modules = {path.relative_to(package).as_posix() for path in package.rglob("*.py") if path.name != "__init__.py"}
    assert not modules - listed, f"docs/architecture.md does not describe {sorted(modules - listed)}"
    assert not listed - modules, f"docs/architecture.md describes modules that are gone: {sorted(listed - modules)}"
