"""Small Qt helpers for the window on the Qt backend (Linux): GUI-thread calls, grabs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal


class GuiThread(QObject):
    """Runs callables on the thread that created it; create it on the GUI thread."""

    _call = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self._call.connect(self._run)

    def _run(self, job: Callable[[], None]) -> None:
        job()

    def call(self, fn: Callable[[], object], timeout: float = 10.0) -> object:
        """Run ``fn`` on the GUI thread, wait for it and return its result."""
        done = threading.Event()
        values: list[object] = []
        errors: list[Exception] = []

        def job() -> None:
            try:
                values.append(fn())
            except Exception as exc:
                errors.append(exc)
            finally:
                done.set()

        self._call.emit(job)
        if not done.wait(timeout):
            raise TimeoutError(f"the GUI thread did not answer within {timeout:g} s")
        if errors:
            raise errors[0]
        return values[0]


def grab_to_file(native_window: Any, path: Path) -> tuple[int, int]:
    """Save what the Qt window shows (web contents included) as an image; its size."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pixmap = native_window.grab()
    if pixmap.isNull() or not pixmap.save(str(path)):
        raise OSError(f"could not save a screenshot of the window to {path}")
    return pixmap.width(), pixmap.height()


def set_desktop_identity(desktop_file: str = "sparrow") -> None:
    """Tie the window to ``sparrow.desktop`` (its icon and name in docks and on Wayland).

    Static, so it may be called before pywebview creates the QApplication.
    """
    from PySide6.QtGui import QGuiApplication

    QGuiApplication.setDesktopFileName(desktop_file)
