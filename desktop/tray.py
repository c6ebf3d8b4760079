"""The tray icon on the Qt backend: its icon and tooltip follow the alert model's
:class:`~desktop.alerts.TrayState`; its menu shows the window, opens the
Monitor view, or quits.

Create it on the GUI thread (the window does, in ``before_show``) and only when
:func:`tray_available`; :meth:`Tray.show_state` may be called from any thread
(the state travels to the GUI thread by a queued signal).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop.alerts import ICON_CRITICAL, ICON_NORMAL, ICON_WARNING, TrayState

log = logging.getLogger(__name__)

SIZE = 64
BADGES = {ICON_WARNING: "#e0a100", ICON_CRITICAL: "#d03030"}


def tray_available() -> bool:
    return bool(QSystemTrayIcon.isSystemTrayAvailable())


def icon_variant(base: Path | None, variant: str) -> QIcon:
    """The app icon, with a coloured badge for the warning and critical variants."""
    pixmap = QPixmap(str(base)) if base is not None else QPixmap()
    if pixmap.isNull():
        pixmap = QPixmap(SIZE, SIZE)
        pixmap.fill(QColor("#3a6ea5"))
    pixmap = pixmap.scaled(
        SIZE, SIZE, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
    )
    colour = BADGES.get(variant)
    if colour is not None:
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(colour))
        badge = SIZE * 3 // 8
        painter.drawEllipse(SIZE - badge, SIZE - badge, badge, badge)
        painter.end()
    return QIcon(pixmap)


class Tray(QObject):
    _state = Signal(object)

    def __init__(
        self,
        *,
        icon: Path | None,
        on_show: Callable[[], None],
        on_monitor: Callable[[], None],
        on_quit: Callable[[], None],
    ) -> None:
        super().__init__()
        self._base = icon
        self._icons: dict[str, QIcon] = {}
        self._menu = QMenu()
        for text, action in (("Show Sparrow", on_show), ("Monitor", on_monitor)):
            self._menu.addAction(self._action(text, action))
        self._menu.addSeparator()
        self._menu.addAction(self._action("Quit", on_quit))
        self._shown_icon = ICON_NORMAL
        self._icon = QSystemTrayIcon(self._icon_for(ICON_NORMAL))
        self._icon.setContextMenu(self._menu)
        self._icon.activated.connect(self._on_activated)
        self._on_show = on_show
        self._state.connect(self._apply)

    def _action(self, text: str, callback: Callable[[], None]) -> QAction:
        action = QAction(text, self._menu)
        action.triggered.connect(lambda _checked=False: callback())
        return action

    def _icon_for(self, variant: str) -> QIcon:
        if variant not in self._icons:
            self._icons[variant] = icon_variant(self._base, variant)
        return self._icons[variant]

    def show(self) -> None:
        self._icon.show()

    def hide(self) -> None:
        self._icon.hide()

    def show_state(self, state: TrayState) -> None:
        """From any thread: the icon and tooltip follow ``state``."""
        self._state.emit(state)

    def _apply(self, state: TrayState) -> None:
        # Snapshots come with every poll that changes anything: touch the icon
        # (a D-Bus round trip on some desktops) only when what it shows changes.
        if state.icon != self._shown_icon:
            self._icon.setIcon(self._icon_for(state.icon))
            self._shown_icon = state.icon
        if state.tooltip != self._icon.toolTip():
            self._icon.setToolTip(state.tooltip)

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self._on_show()

    @property
    def tooltip(self) -> str:
        return str(self._icon.toolTip())

    @property
    def menu_texts(self) -> list[str]:
        return [a.text() for a in self._menu.actions() if not a.isSeparator()]
