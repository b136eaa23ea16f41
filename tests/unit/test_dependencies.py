"""Every third-party package the code imports is declared in pyproject.toml (a dependency or an extra's)."""

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_FOLDERS = ("grepgraph", "graphs", "retrievers", "prompts")


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_modules() -> dict[str, str]:
    """Top-level module -> a file importing it, for every absolute import in the packages."""
    found: dict[str, str] = {}
    for folder in PACKAGE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def declared_distributions() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values()
                                                 for r in extra)]
    return {normalized(re.match(r"[A-Za-z0-9._-]+", requirement).group(0)) for requirement in requirements}


def test_every_imported_third_party_package_is_declared():
    distributions = importlib.metadata.packages_distributions()
    declared = declared_distributions()
    missing = {}
    for module, where in imported_modules().items():
        if module in sys.stdlib_module_names or module == "grepgraph":
            continue
        # A module that isn't installed here (tomli on 3.11) is named as its distribution.
        names = {normalized(name) for name in distributions.get(module, [module])}
        if not names & declared:
            missing[module] = where
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_tomli_is_declared_for_the_pythons_without_tomllib():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(r.startswith("tomli") and "python_version < '3.11'" in r for r in project["dependencies"])
