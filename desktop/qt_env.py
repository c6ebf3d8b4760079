"""Environment for the window's GUI backend, set before pywebview or Qt is imported.

On Linux the window runs on Qt through PySide6 (LGPL; PyQt6 would force a GPL
bundle). macOS (Cocoa/WKWebView) and Windows (EdgeChromium/WebView2) keep
pywebview's native backends, so nothing is forced there.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping

CHROMIUM_FLAGS = "QTWEBENGINE_CHROMIUM_FLAGS"


def uses_qt(env: MutableMapping[str, str] | None = None, platform: str | None = None) -> bool:
    """Whether pywebview will run on Qt with these settings."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    gui = env.get("PYWEBVIEW_GUI", "").strip().lower()
    return gui == "qt" or (platform.startswith("linux") and gui in ("", "qt"))


def configure_backend(
    env: MutableMapping[str, str] | None = None,
    platform: str | None = None,
    is_root: bool | None = None,
) -> None:
    """Choose PySide6/Qt on Linux (unless already chosen) and Chromium's sandbox flag."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if is_root is None:
        is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    if platform.startswith("linux"):
        env.setdefault("QT_API", "pyside6")
        env.setdefault("PYWEBVIEW_GUI", "qt")
    if uses_qt(env, platform) and is_root:
        # Chromium refuses to run as root with its sandbox on and aborts the process.
        flags = env.get(CHROMIUM_FLAGS, "").split()
        if "--no-sandbox" not in flags:
            env[CHROMIUM_FLAGS] = " ".join([*flags, "--no-sandbox"])
