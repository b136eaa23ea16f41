"""Write constraints.txt: the versions installed in .venv of every package grepgraph[dev,serve,studio,mcp] needs.

Run ``.venv/bin/python .ci/make_constraints.py > constraints.txt`` after changing a dependency and installing it.
The list is ``pip freeze --exclude-editable`` limited to the dependency closure of those extras (read from
pyproject.toml and the installed packages' metadata), so a package installed by hand for something else is left
out. ``.ci/run`` installs with ``-c constraints.txt``: CI tests the set it was last seen working with.
"""

from __future__ import annotations

import importlib.metadata
import platform
import re
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = ("dev", "serve", "studio", "mcp")


def normalized(name: str) -> str:
    """The PEP 503 form of a distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def applies(requirement: Requirement, extras: set[str]) -> bool:
    """Whether a requirement holds here, for a package installed with these extras."""
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in extras or {""})


def closure() -> set[str]:
    """The normalized names of every distribution grepgraph with ``EXTRAS`` needs, transitively."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    texts = [*project["dependencies"], *(text for extra in EXTRAS for text in project["optional-dependencies"][extra])]
    pending = [requirement for requirement in map(Requirement, texts) if applies(requirement, set())]
    needed: dict[str, set[str]] = {}  # name -> the extras it is needed with
    while pending:
        requirement = pending.pop()  # its marker holds: checked before it was queued
        name = normalized(requirement.name)
        if name in needed and requirement.extras <= needed[name]:
            continue  # seen, with these extras
        known = needed.setdefault(name, set())
        known.update(requirement.extras)
        for text in importlib.metadata.requires(requirement.name) or []:
            child = Requirement(text)
            if applies(child, known):
                pending.append(child)
    return set(needed)


def main() -> int:
    """Print the constraints file."""
    needed = closure()
    frozen = subprocess.run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"], check=True,
                            capture_output=True, text=True).stdout.splitlines()
    pins = sorted((line for line in frozen if "==" in line and normalized(line.split("==")[0]) in needed),
                  key=lambda line: normalized(line.split("==")[0]))
    header = [f"# The versions .ci/run installs: grepgraph[{','.join(EXTRAS)}]'s dependency closure as installed",
              f"# (CPython {platform.python_version()}, {platform.system()} {platform.machine()}); "
              "regenerate with .venv/bin/python .ci/make_constraints.py > constraints.txt"]
    sys.stdout.write("\n".join([*header, *pins]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
