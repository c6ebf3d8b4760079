"""Loading the build scripts in packaging/ by path: ``packaging`` is also the
name of a PyPI distribution, which an import by name would find instead."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"


def load_packaging_module(name: str) -> ModuleType:
    key = f"_sparrow_packaging_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, PACKAGING / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module
