"""Small Qt helpers for the window on the Qt backend (Linux): GUI-thread calls, grabs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, Signal


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


def place_window(native_window: Any, saved: Any) -> Any:
    """Fit the saved geometry to the screens there are now and apply it (before show,
    on the GUI thread); the geometry applied."""
    from PySide6.QtGui import QGuiApplication

    from desktop import geometry

    screens = QGuiApplication.screens()
    primary = QGuiApplication.primaryScreen()
    ordered = sorted(screens, key=lambda screen: screen is not primary)
    rects = [
        geometry.Rect(g.x(), g.y(), g.width(), g.height())
        for g in (screen.availableGeometry() for screen in ordered)
    ]
    fitted = geometry.fit(saved, rects)
    native_window.resize(fitted.width, fitted.height)
    if fitted.x is not None and fitted.y is not None:
        native_window.move(fitted.x, fitted.y)
    return fitted


def raise_window(native_window: Any) -> None:
    """Bring the window to the front (on the GUI thread): un-minimise, raise, focus."""
    if native_window.isMinimized():
        native_window.showNormal()
    native_window.show()
    native_window.raise_()
    native_window.activateWindow()


# What changes whether the window is on screen or has the focus.
WINDOW_EVENTS = frozenset(
    {
        QEvent.Type.Show,
        QEvent.Type.Hide,
        QEvent.Type.WindowStateChange,
        QEvent.Type.WindowActivate,
        QEvent.Type.WindowDeactivate,
    }
)


class WindowWatch(QObject):
    """Tells ``on_change(visible, focused)`` whenever the window is shown, hidden,
    minimised, restored, focused or left (on the GUI thread: keep it short).
    Create it on the GUI thread; it watches ``native_window`` as an event filter."""

    def __init__(self, native_window: Any, on_change: Callable[[bool, bool], None]) -> None:
        super().__init__()
        self._window = native_window
        self._on_change = on_change
        self._last: tuple[bool, bool] | None = None
        native_window.installEventFilter(self)

    def state(self) -> tuple[bool, bool]:
        window = self._window
        visible = bool(window.isVisible()) and not bool(window.isMinimized())
        return visible, visible and bool(window.isActiveWindow())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in WINDOW_EVENTS:
            state = self.state()
            if state != self._last:
                self._last = state
                self._on_change(*state)
        return False
