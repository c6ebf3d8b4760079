"""THIRD-PARTY-NOTICES for the bundle, collected at build time from the metadata and
licence files of the installed distributions whose code the bundle holds.

The spec calls ``bundled_distributions`` with the top-level names of every
module PyInstaller collected, then ``write_notices``. Loaded by path, like
licences.py.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from importlib.metadata import Distribution, PackageNotFoundError, distribution
from importlib.metadata import packages_distributions as _packages
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Qt and PySide6 ship no licence file in their wheels; the LGPL-3.0 they are used
# under here (with the GPL-3.0 it builds on) is kept beside this file.
QT_DISTRIBUTIONS = ("pyside6_essentials", "pyside6_addons", "pyside6_webengine", "shiboken6")
QT_TEXTS = ("LGPL-3.0.txt", "GPL-3.0.txt")
_LICENCE_WORDS = ("licen", "copying", "notice", "authors")
RULE = "=" * 78


def _key(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def bundled_distributions(top_level_modules: Iterable[str], own: str = "sparrow") -> list[str]:
    """The installed distributions providing these modules (ours left out), sorted."""
    owners = _packages()
    found: set[str] = set()
    for module in top_level_modules:
        for name in owners.get(module, []):
            if _key(name) != _key(own):
                found.add(name)
    return sorted(found, key=_key)


def licence_files(dist: Distribution) -> list[tuple[str, str]]:
    """(name, text) of each licence-like file the distribution installed."""
    found: list[tuple[str, str]] = []
    for file in dist.files or []:
        base = file.name.lower()
        in_metadata = ".dist-info/" in str(file).replace("\\", "/") or "/licenses/" in str(file)
        if in_metadata and any(word in base for word in _LICENCE_WORDS):
            try:
                text = Path(str(file.locate())).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            found.append((str(file), text))
    return found


def _section(dist: Distribution) -> str:
    meta = dist.metadata
    licence = (meta.get("License-Expression") or meta.get("License") or "").strip()
    licence = licence.splitlines()[0] if licence else "see the text below"
    head = [
        RULE,
        f"{meta['Name']} {dist.version}",
        f"Licence: {licence}",
    ]
    urls = dict(
        (label.strip().lower(), url.strip())
        for label, _, url in (u.partition(",") for u in meta.get_all("Project-URL") or [])
    )
    home = meta.get("Home-page") or next(
        (urls[k] for k in ("homepage", "home", "source", "repository", "source code") if k in urls),
        "",
    )
    if home:
        head.append(f"Home: {home}")
    texts = licence_files(dist)
    if _key(meta["Name"]) in QT_DISTRIBUTIONS:
        head.append(
            "Used under the LGPL-3.0: linked dynamically, as the separate Qt and PySide6 "
            "shared libraries in this folder, which you may replace with your own builds."
        )
        if meta["Name"].lower().startswith("pyside6_essentials"):
            texts += [(t, (HERE / "licenses" / t).read_text()) for t in QT_TEXTS]
    body = [f"--- {name} ---\n{text.strip()}" for name, text in texts]
    if not body:
        body = ["(the distribution installed no licence file; its licence is named above)"]
    return "\n".join(head) + "\n\n" + "\n\n".join(body) + "\n"


def system_packages(libraries: Iterable[str]) -> dict[str, list[str]]:
    """The Debian packages the build machine's own libraries come from, with the
    libraries' names; empty where there is no dpkg (another system)."""
    dpkg = shutil.which("dpkg-query")
    wanted: dict[str, str] = {}  # a path dpkg may know -> the library's name
    for library in libraries:
        path = Path(library)
        for form in {str(path), str(path.resolve())}:
            # Debian's merged /usr: a library found under /usr/lib is registered under /lib.
            for candidate in (form, form.removeprefix("/usr")):
                wanted[candidate] = path.name
    if not wanted or dpkg is None:
        return {}
    # One query for all (dpkg -S reads every package's file list each time it runs).
    done = subprocess.run(
        [dpkg, "-S", *sorted(wanted)], capture_output=True, text=True, check=False
    )
    found: dict[str, set[str]] = {}
    for line in done.stdout.splitlines():
        packages, _, path = line.partition(": ")
        if path in wanted:
            for package in packages.split(", "):
                found.setdefault(package.split(":")[0], set()).add(wanted[path])
    return {package: sorted(names) for package, names in found.items()}


def _system_section(package: str, libraries: list[str]) -> str:
    copyright_file = Path("/usr/share/doc") / package / "copyright"
    text = copyright_file.read_text(errors="replace") if copyright_file.is_file() else ""
    head = [RULE, f"{package} (Debian package): {', '.join(sorted(libraries))}"]
    body = text.strip() or "(the package has no copyright file)"
    return "\n".join(head) + "\n\n" + body + "\n"


def write_notices(
    names: Iterable[str], target: Path, libraries: dict[str, list[str]] | None = None
) -> Path:
    sections = []
    for name in names:
        try:
            sections.append(_section(distribution(name)))
        except PackageNotFoundError:
            continue
    for package, found in sorted((libraries or {}).items()):
        sections.append(_system_section(package, found))
    preamble = (
        "Sparrow bundles the third-party software below. Each is listed with its\n"
        "licence as its own metadata declares it, and the licence texts it ships;\n"
        "the system libraries copied from the build machine follow, each with its\n"
        "package's copyright file.\n\n"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(preamble + "\n".join(sections), encoding="utf-8")
    return target
