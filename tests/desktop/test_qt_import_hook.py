"""PySide6's import hook must not run a module's ``__getattr__`` (pydantic's
imports fail in the window when it does), and must still see the modules that
use PySide6. Each case in a fresh interpreter: the hook lives in builtins."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require

ROOT = Path(__file__).resolve().parents[2]

# A module with a module-level __getattr__, as pydantic's have: it notes each
# name it is asked for.
PROBE = """
asked = []

def __getattr__(name):
    asked.append(name)
    raise AttributeError(name)
"""

CHECK = """
import json, sys
sys.path[:0] = [{probes!r}, {root!r}]
import PySide6.QtCore  # installs shiboken's import hook
if {tame}:
    from desktop.qt_import_hook import tame
    assert tame()
import probe, qt_user
feature = sys.modules["shibokensupport.feature"]
print(json.dumps({{
    "asked": probe.asked,
    "qt_user": feature.pyside_feature_dict.get("qt_user"),
    "probe": feature.pyside_feature_dict.get("probe"),
}}))
"""


def imports_after_pyside(tmp_path: Path, *, tame: bool) -> dict[str, object]:
    try:
        import PySide6  # noqa: F401
    except ImportError:
        require("PySide6", False)
    probes = tmp_path / "probes"
    probes.mkdir(exist_ok=True)
    (probes / "probe.py").write_text(PROBE)
    (probes / "qt_user.py").write_text("import PySide6.QtCore\n")
    code = CHECK.format(probes=str(probes), root=str(ROOT), tame=tame)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found: dict[str, object] = json.loads(result.stdout.splitlines()[-1])
    return found


def test_untamed_the_hook_runs_a_modules_getattr(tmp_path: Path) -> None:
    """What the fix is for: without it, importing a module asks its
    ``__getattr__`` for ``__wrapped__`` (so the test below can fail)."""
    found = imports_after_pyside(tmp_path, tame=False)
    if "__wrapped__" not in found["asked"]:  # type: ignore[operator]
        pytest.fail(f"this PySide6's hook no longer unwraps modules: {found}; drop the fix?")


def test_tamed_the_hook_asks_no_module_and_still_sees_pyside_users(tmp_path: Path) -> None:
    found = imports_after_pyside(tmp_path, tame=True)
    assert found == {"asked": [], "qt_user": 0, "probe": -1}
