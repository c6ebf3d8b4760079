"""Which licences a bundled component may carry, read from its distribution's metadata.

Sparrow is MIT, and a bundle must let anyone ship it under any licence of
their own. So a component passes when some licence it may be used under is
permissive, weak copyleft (LGPL, MPL: PySide6 and Qt are linked dynamically,
as separate shared libraries in the onedir bundle), or GPL with an exception
that allows linking into anything (libgit2's, PyInstaller's bootloader's). A
component that is GPL or AGPL with no such alternative fails, and so does one
whose metadata names no licence, unless it is in REVIEWED with the reason.
System libraries copied from the build machine have no metadata: the check
fails on the GPL-only ones it knows (GPL_ONLY_LIBRARIES), and the notices
carry their Debian copyright files (notices.py).

    python packaging/licences.py BUNDLE_DIR   # exit 1 and a line per failure

No import from the project: the spec and the tests load this file by path
(``packaging`` is also the name of a PyPI distribution).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from email import message_from_bytes
from email.message import Message
from pathlib import Path

# SPDX identifiers (and the spellings older metadata uses) that allow any licence of ours.
_PERMISSIVE = re.compile(
    r"^(MIT(-0|-CMU)?|MIT License|BSD(-[234]-Clause)?|BSD \d-Clause License|BSD License|"
    r"0BSD|ISC|Apache(-2\.0| 2\.0| Software License| License 2\.0)?|PSF(-2\.0)?|"
    r"Python-2\.0|CNRI-Python|HPND|Zlib|Unlicense|CC0-1\.0|MPL-2\.0|"
    r"Mozilla Public License 2\.0 \(MPL 2\.0\)|LGPL(-[23]\.[01](-only|-or-later|\+)?)?|"
    r"GNU Lesser General Public License.*)$",
    re.IGNORECASE,
)
_COPYLEFT = re.compile(r"\b(A?GPL|GNU (Affero )?General Public License)", re.IGNORECASE)
_LINKING_EXCEPTION = re.compile(
    r"(linking|classpath|bootloader|runtime library)[ -]exception|special exception",
    re.IGNORECASE,
)

# Components whose metadata says too little, each checked by hand against its licence file.
REVIEWED = {
    "peewee": "MIT (its LICENSE file; the metadata names none)",
}


@dataclass(frozen=True)
class Verdict:
    name: str
    licence: str  # as the metadata says it
    allowed: bool
    reason: str


def declared_licence(meta: Message) -> str:
    """The licence a distribution declares: the SPDX expression, else the free-text
    field (its first line: some put the whole text there), else the classifiers."""
    expression = (meta.get("License-Expression") or "").strip()
    if expression:
        return expression
    text = (meta.get("License") or "").strip().splitlines()
    if text and text[0].strip():
        return text[0].strip()
    classifiers = [
        c.rsplit("::", 1)[-1].strip()
        for c in meta.get_all("Classifier") or []
        if c.startswith("License ::") and c.count("::") >= 2
    ]
    return " OR ".join(classifiers)


def _alternatives(licence: str) -> list[str]:
    """The choices of an SPDX ``OR`` expression; a whole ``AND`` term counts as one."""
    return [part.strip(" ()") for part in re.split(r"\s+OR\s+", licence) if part.strip(" ()")]


def _term_allowed(term: str) -> bool:
    if _LINKING_EXCEPTION.search(term):
        return True
    parts = [p.strip(" ()") for p in re.split(r"\s+AND\s+", term)]
    return all(_PERMISSIVE.match(p) and not _is_strong_copyleft(p) for p in parts)


def _is_strong_copyleft(text: str) -> bool:
    lesser = re.search(r"\bLGPL|Lesser", text, re.IGNORECASE)
    return bool(_COPYLEFT.search(text)) and not lesser


def judge(name: str, licence: str) -> Verdict:
    if not licence:
        if name.lower() in REVIEWED:
            return Verdict(name, licence, True, f"reviewed: {REVIEWED[name.lower()]}")
        return Verdict(name, licence, False, "its metadata names no licence: review it")
    choices = _alternatives(licence)
    allowed = [c for c in choices if _term_allowed(c)]
    if allowed:
        return Verdict(name, licence, True, f"usable under {allowed[0]}")
    if any(_is_strong_copyleft(c) for c in choices):
        return Verdict(name, licence, False, "GPL with no permissive or LGPL alternative")
    if name.lower() in REVIEWED:
        return Verdict(name, licence, True, f"reviewed: {REVIEWED[name.lower()]}")
    return Verdict(name, licence, False, f"unrecognised licence {licence!r}: review it")


def metadata_files(bundle: Path) -> list[Path]:
    return sorted(bundle.rglob("*.dist-info/METADATA"))


def judge_bundle(bundle: Path) -> list[Verdict]:
    verdicts = []
    for path in metadata_files(bundle):
        meta = message_from_bytes(path.read_bytes())
        name = meta.get("Name") or path.parent.name.split("-")[0]
        verdicts.append(judge(name, declared_licence(meta)))
    return verdicts


def forbidden_bindings(bundle: Path) -> list[Path]:
    """PyQt5/PyQt6 are GPL or commercial: their presence alone makes the bundle GPL."""
    return sorted(p for p in bundle.rglob("PyQt[56]*") if p.is_dir() or p.suffix == ".so")


# System libraries PyInstaller may copy from the build machine that are GPL-only
# (they have no dist-info to read): GNU readline (Python's readline module links
# it on Debian) and GDBM (the dbm.gnu module).
GPL_ONLY_LIBRARIES = re.compile(r"^lib(readline|history|gdbm|gdbm_compat)\.so")


def gpl_only_libraries(bundle: Path) -> list[Path]:
    return sorted(p for p in bundle.rglob("lib*.so*") if GPL_ONLY_LIBRARIES.match(p.name))


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: python packaging/licences.py BUNDLE_DIR", file=sys.stderr)
        return 2
    bundle = Path(argv[0])
    verdicts = judge_bundle(bundle)
    failures = [v for v in verdicts if not v.allowed]
    for verdict in failures:
        print(f"{verdict.name}: {verdict.reason} ({verdict.licence or 'none'})")
    for path in forbidden_bindings(bundle):
        print(f"{path.relative_to(bundle)}: PyQt is GPL or commercial; the bundle must use PySide6")
        failures.append(Verdict(path.name, "GPL", False, "PyQt"))
    for path in gpl_only_libraries(bundle):
        print(f"{path.relative_to(bundle)}: a GPL-only system library; exclude what links it")
        failures.append(Verdict(path.name, "GPL", False, "GPL-only library"))
    if not verdicts:
        print(f"no *.dist-info/METADATA under {bundle}: nothing to check", file=sys.stderr)
        return 1
    print(f"{len(verdicts)} distributions checked, {len(failures)} not allowed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
