"""packaging/prune.py on the real Qt plugin and system libraries: dropping the GTK
theme plugin drops the GTK libraries it alone brought, and keeps what a kept
binary still needs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from tests.bundle.tools import load_packaging_module
from tests.conftest import require

LIB = Path("/usr/lib/x86_64-linux-gnu")


def test_a_dropped_plugin_takes_the_libraries_only_it_needed() -> None:
    require("Linux", sys.platform.startswith("linux"))
    require(
        "PyInstaller (pip install -e '.[package]')", bool(importlib.util.find_spec("PyInstaller"))
    )
    import PySide6

    qt = Path(PySide6.__file__).parent
    gtk_theme = qt / "Qt" / "plugins" / "platformthemes" / "libqgtk3.so"
    portal_theme = qt / "Qt" / "plugins" / "platformthemes" / "libqxdgdesktopportal.so"
    require("GTK 3's library (x86-64 Debian layout)", (LIB / "libgtk-3.so.0").exists())
    entries = [
        ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", str(gtk_theme), "BINARY"),
        ("PySide6/Qt/plugins/platformthemes/libqxdgdesktopportal.so", str(portal_theme), "BINARY"),
        ("libgtk-3.so.0", str(LIB / "libgtk-3.so.0"), "BINARY"),
        ("libpango-1.0.so.0", str(LIB / "libpango-1.0.so.0"), "BINARY"),
        ("PySide6/Qt/lib/libQt6Gui.so.6", str(qt / "Qt" / "lib" / "libQt6Gui.so.6"), "BINARY"),
    ]
    prune = load_packaging_module("prune")
    kept, dropped = prune.prune(entries, lambda dest: "libqgtk3" not in dest)
    assert dropped == [
        "PySide6/Qt/plugins/platformthemes/libqgtk3.so",
        "libgtk-3.so.0",
        "libpango-1.0.so.0",
    ]
    # The portal theme links Qt's GUI library: it stays, though the GTK plugin needed it too.
    assert [dest for dest, _, _ in kept] == [
        "PySide6/Qt/plugins/platformthemes/libqxdgdesktopportal.so",
        "PySide6/Qt/lib/libQt6Gui.so.6",
    ]
