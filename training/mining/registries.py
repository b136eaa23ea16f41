"""Fetch one package through its registry's own client and unpack its source into a corpus folder.

``pypi``: ``pip download --no-deps --no-binary :all: NAME==VER`` (the sdist); ``npm``: ``npm pack NAME@VER``;
``debian``: ``apt-get download NAME=VER`` (Go and Rust -dev packages carry the source; the JDK's source zip);
``git``: ``git archive <commit>`` of a repository brought in by the mirror tool (or cloned when it is missing).
Archives are cached under ``data/archives/<registry>/`` and checked against the sha256 the manifest pins.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from . import licences
from .common import ARCHIVES, is_forbidden, is_vendored, mirror_dir, sha256_of

MAX_FILE_BYTES = 1_000_000


class FetchError(RuntimeError):
    """A package could not be fetched, verified or unpacked."""


def _run(args: list[str], cwd: Path | None = None) -> None:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        raise FetchError(f"{' '.join(args)} failed: {(done.stderr or done.stdout).strip()[-500:]}")


def _norm(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _pip() -> list[str]:
    """The pip to download with: this interpreter's, else the one on PATH."""
    probe = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    return [sys.executable, "-m", "pip"] if probe.returncode == 0 else [shutil.which("pip") or "pip"]


def _find_sdist(folder: Path, name: str, version: str) -> Path | None:
    for path in sorted(folder.iterdir()):
        for suffix in (".tar.gz", ".zip", ".tar.bz2", ".tgz"):
            if path.name.endswith(suffix):
                stem = path.name[: -len(suffix)]
                if "-" in stem:
                    dist, ver = stem.rsplit("-", 1)
                    if _norm(dist) == _norm(name) and ver == version:
                        return path
    return None


def _download_pypi(entry: dict, folder: Path) -> Path:
    found = _find_sdist(folder, entry["package"], entry["version"])
    if found is None:
        _run(_pip() + ["download", "--no-deps", "--no-binary", entry["package"], "--quiet", "-d", str(folder),
                       f"{entry['package']}=={entry['version']}"])
        found = _find_sdist(folder, entry["package"], entry["version"])
    if found is None:
        raise FetchError(f"no sdist of {entry['package']}=={entry['version']} after pip download")
    return found


def _download_npm(entry: dict, folder: Path) -> Path:
    path = folder / (entry["package"].lstrip("@").replace("/", "-") + f"-{entry['version']}.tgz")
    if not path.exists():
        _run(["npm", "pack", f"{entry['package']}@{entry['version']}", "--pack-destination", str(folder),
              "--silent", "--ignore-scripts"])
    return path


def _deb_version(path: Path) -> str:
    done = subprocess.run(["dpkg-deb", "-f", str(path), "Version"], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _download_debian(entry: dict, folder: Path) -> Path:
    def matching() -> Path | None:
        for path in sorted(folder.glob(f"{entry['package']}_*.deb")):
            if _deb_version(path) == entry["version"]:
                return path
        return None

    found = matching()
    if found is None:
        _run(["apt-get", "download", "-q", f"{entry['package']}={entry['version']}"], cwd=folder)
        found = matching()
    if found is None:
        raise FetchError(f"no .deb of {entry['package']}={entry['version']} after apt-get download")
    return found


def resolve_commit(entry: dict) -> str:
    """The commit a git package is pinned to: its ``commit``, else its ``tag``'s commit in the repository."""
    if entry.get("commit"):
        return entry["commit"]
    git_dir = ensure_repository(entry["repo"])
    done = subprocess.run(["git", "-C", str(git_dir), "rev-parse", f"{entry['tag']}^{{commit}}"],
                          capture_output=True, text=True)
    if done.returncode:
        raise FetchError(f"{entry['repo']}: no tag {entry['tag']}")
    return done.stdout.strip()


def _download_git(entry: dict, folder: Path) -> Path:
    entry["commit"] = resolve_commit(entry)
    path = folder / f"{entry['repo'].replace('/', '+')}-{entry['commit'][:12]}.tar"
    if not path.exists():
        git_dir = ensure_repository(entry["repo"])
        _run(["git", "-C", str(git_dir), "archive", "--format=tar", "-o", str(path), entry["commit"]])
    return path


def ensure_repository(repo: str) -> Path:
    """The local git directory of a GitHub repository: the mirror tool's copy, else a bare clone beside it."""
    git_dir = mirror_dir(repo)
    if (git_dir / "HEAD").exists():
        return git_dir
    try:
        _run(["git", "clone", "--bare", "--quiet", f"https://github.com/{repo}.git", str(git_dir)])
    except FetchError as error:
        # A machine without GitHub access gets the repository from the mirror tool (fetch github:OWNER/NAME).
        raise FetchError(f"{repo}: no mirror at {git_dir} and the clone failed; bring it in with the mirror "
                         f"tool first ({error})") from error
    return git_dir


DOWNLOADERS = {"pypi": _download_pypi, "npm": _download_npm, "debian": _download_debian, "git": _download_git}


def download(entry: dict) -> Path:
    """The package's archive in the cache, downloaded when missing and checked against a pinned sha256."""
    folder = ARCHIVES / entry["registry"]
    folder.mkdir(parents=True, exist_ok=True)
    path = DOWNLOADERS[entry["registry"]](entry, folder)
    pinned = entry.get("sha256")
    if pinned and sha256_of(path) != pinned and entry["registry"] != "git":
        raise FetchError(f"{path.name}: sha256 {sha256_of(path)} differs from the pinned {pinned}")
    return path


def _extract(archive: Path, into: Path) -> None:
    if archive.suffix == ".deb":
        _run(["dpkg-deb", "-x", str(archive), str(into)])
    elif archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as handle:
            handle.extractall(into)
    else:
        with tarfile.open(archive) as handle:
            handle.extractall(into, filter="data")


def _single_folder(folder: Path) -> Path:
    entries = [p for p in folder.iterdir() if p.name != "pax_global_header"]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else folder


def _common_folder_of(folder: Path, suffix: str) -> Path:
    """The deepest folder under ``folder`` that holds every file ending in ``suffix`` (a Go module's root)."""
    parents = {str(p.parent) for p in folder.rglob(f"*{suffix}")}
    if not parents:
        raise FetchError(f"no {suffix} file under {folder}")
    return Path(os.path.commonpath(sorted(parents)))


def _package_root(entry: dict, unpacked: Path) -> Path:
    """The folder whose contents are the package's source tree (its own relative layout)."""
    if entry["registry"] == "debian":
        base = unpacked
        if entry.get("inner_archive"):
            base = unpacked / "_inner"
            prefixes = [f"{entry.get('root', '.')}/{inc}".removeprefix("./").rstrip("/") + "/"
                        for inc in entry.get("include", ["."])]
            with zipfile.ZipFile(unpacked / entry["inner_archive"]) as handle:
                members = [m for m in handle.namelist() if any(m.startswith(p) for p in prefixes)]
                handle.extractall(base, members=members)  # only the included folders: the zip is large
        if entry.get("root"):
            return base / entry["root"]
        if entry["language"] == "go":
            return _common_folder_of(base / "usr/share/gocode/src", ".go")
        if entry["language"] == "rust":
            return _single_folder(base / "usr/share/cargo/registry")
        raise FetchError(f"{entry['name']}: a Debian package needs a root")
    root = _single_folder(unpacked)
    return root / entry["root"] if entry.get("root") else root


def _licence_text(entry: dict, unpacked: Path, root: Path) -> str:
    """The licence the package's own metadata declares."""
    if entry["registry"] == "pypi":
        info = root / "PKG-INFO"
        return licences.from_pkg_info(info.read_text(encoding="utf-8", errors="replace")) if info.exists() else ""
    if entry["registry"] == "npm":
        import json

        meta = json.loads((_single_folder(unpacked) / "package.json").read_text(encoding="utf-8"))
        return licences.from_package_json(meta)
    if entry["registry"] == "debian":
        copyright_file = unpacked / "usr/share/doc" / entry["package"] / "copyright"
        if copyright_file.exists() and not copyright_file.is_symlink():
            return licences.from_debian_copyright(copyright_file.read_text(encoding="utf-8", errors="replace"))
        # The JDK source package links its doc folder to another package's: read the files' own headers.
        sources = sorted(p for inc in entry.get("include", ["."]) for p in (root / inc).rglob("*.java"))[:20]
        return licences.from_source_headers([p.read_text(encoding="utf-8", errors="replace") for p in sources])
    for name in ("LICENSE", "LICENSE.txt", "LICENSE.md", "COPYING", "LICENSE-MIT", "LICENSE-APACHE"):
        path = root / name
        if path.exists():
            return licences.from_text(path.read_text(encoding="utf-8", errors="replace"))
    return ""


def _selected(entry: dict, rel: str) -> bool:
    includes = entry.get("include") or ["."]
    included = any(inc == "." or rel == inc or rel.startswith(inc.rstrip("/") + "/") for inc in includes)
    excluded = any(fnmatch.fnmatch(rel, glob) for glob in entry.get("exclude", []))
    return included and not excluded and not is_vendored(rel) and not is_forbidden(rel)


def unpack(entry: dict, archive: Path, dest: Path) -> tuple[str, int]:
    """Copy the package's selected files into ``dest``; return (licence read from its metadata, file count).

    Vendored copies, the JDK's forbidden package, symbolic links and files over 1 MB are left out.
    """
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        unpacked = Path(tmp) / "x"
        unpacked.mkdir()
        _extract(archive, unpacked)
        root = _package_root(entry, unpacked)
        licence = _licence_text(entry, unpacked, root)
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        count = 0
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for filename in sorted(filenames):
                path = Path(dirpath, filename)
                rel = path.relative_to(root).as_posix()
                if path.is_symlink() or not _selected(entry, rel) or path.stat().st_size > MAX_FILE_BYTES:
                    continue
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest / rel)
                count += 1
    return licence, count
