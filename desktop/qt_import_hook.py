"""PySide6's import hook, made safe for the modules Sparrow imports lazily.

Once PySide6 is imported, every later import passes through shiboken's hook,
which asks whether the new module "uses PySide6" (for its ``__feature__``
switches, which Sparrow never uses) with ``inspect.getsource(module)``. That
first unwraps the module, so ``hasattr(module, "__wrapped__")`` runs the
module's own ``__getattr__``. Pydantic's modules have one that imports
``pydantic._internal._validators``, which imports ``pydantic.errors``, whose
hook runs that ``__getattr__`` again: the import of pydantic (price data, every
model adapter) can fail with "cannot import name 'import_string' from partially
initialized module". It did, in the window, for the session monitor's price
lookup; a model run's first import of pydantic-ai is on the same path.

The question is the same one read from the module's file directly: no
``__getattr__`` runs, no source is tokenized and kept in ``linecache``.
"""

from __future__ import annotations

import logging
import sys
from types import ModuleType

log = logging.getLogger(__name__)

FEATURE_MODULE = "shibokensupport.feature"
MARK = "_sparrow_reads_the_file"


def uses_pyside(module: ModuleType) -> bool:
    """Whether the module's source file names PySide6 (False when it has none)."""
    # Only the module's own dict: getattr could run a module-level __getattr__.
    path = module.__dict__.get("__file__")
    if not isinstance(path, str) or not path.endswith(".py"):
        return False
    try:
        with open(path, "rb") as source:
            return b"PySide6" in source.read()
    except OSError:
        return False


def tame() -> bool:
    """Put :func:`uses_pyside` in the hook's place; call right after PySide6 is
    imported, before other threads import. False when this PySide6 has no such
    hook (nothing to do)."""
    feature = sys.modules.get(FEATURE_MODULE)
    if feature is None or not callable(getattr(feature, "_mod_uses_pyside", None)):
        log.debug("PySide6 has no %s._mod_uses_pyside: nothing to tame", FEATURE_MODULE)
        return False
    if not getattr(feature._mod_uses_pyside, MARK, False):
        setattr(uses_pyside, MARK, True)
        setattr(feature, "_mod_uses_pyside", uses_pyside)  # noqa: B010  (a private name)
    return True
