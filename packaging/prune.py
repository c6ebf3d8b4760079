"""Leaving out collected files, and the shared libraries only they needed.

PyInstaller collects each Qt plugin with every library it links to: the GTK
theme plugin brings GTK, GDK, Pango, Cairo and ATK. Dropping the plugin after
the analysis leaves those behind, so this drops, with what ``wanted`` refuses,
each library that nothing kept still needs. Loaded by the spec, by path.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from PyInstaller.depend.bindepend import get_imports

Entry = tuple[str, str, str]  # PyInstaller's TOC entry: destination, source, type


def _needs(entries: Iterable[Entry]) -> set[str]:
    """Base names of the libraries these binaries load (ldd: the whole closure)."""
    names: set[str] = set()
    for _, source, _ in entries:
        try:
            names |= {os.path.basename(name) for name, _ in get_imports(source)}
        except Exception:  # not a shared object PyInstaller can read: needs nothing
            continue
    return names


def prune(binaries: list[Entry], wanted: Callable[[str], bool]) -> tuple[list[Entry], list[str]]:
    """The entries kept, and the destinations of those dropped."""
    kept = [e for e in binaries if wanted(e[0])]
    refused = [e for e in binaries if not wanted(e[0])]
    orphans = _needs(refused)
    candidates = [e for e in kept if os.path.basename(e[0]) in orphans]
    still_needed = _needs(e for e in kept if os.path.basename(e[0]) not in orphans)
    # A candidate needed only by other candidates goes too; one needed by a kept
    # binary stays, and so does what it needs (ldd's closure already holds that).
    dropped = {e[0] for e in candidates if os.path.basename(e[0]) not in still_needed}
    final = [e for e in kept if e[0] not in dropped]
    return final, sorted(dropped | {e[0] for e in refused})
