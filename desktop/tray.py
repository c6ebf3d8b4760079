"""The tray icon on the Qt backend: it renders :mod:`desktop.tray_menu` — the
menu, the icon's state (idle, running, needs approval, warning) and the
tooltip — from the runs' :class:`~desktop.activity.Activity` and the Monitor's
:class:`~desktop.alerts.TrayState`.

Create it on the GUI thread (the window does, in ``before_show``) and only when
:func:`tray_available`; :meth:`Tray.show_state` and :meth:`Tray.show_activity`
may be called from any thread (the state travels to the GUI thread by a queued
signal).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QRectF, Qt, Signal
from PySide6.QtGui import QAction, QColor, QFont, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop.activity import APPROVAL, IDLE, RUNNING, WARNING, Activity
from desktop.alerts import TrayState
from desktop.tray_menu import OPEN, MenuItem, icon_state, menu_items, tooltip

log = logging.getLogger(__name__)

SIZE = 64
# The badge drawn on the app's icon for each state: colour and mark.
BADGES = {RUNNING: ("#2f9e44", ""), APPROVAL: ("#d9480f", "?"), WARNING: ("#e0a100", "!")}


def tray_available() -> bool:
    return bool(QSystemTrayIcon.isSystemTrayAvailable())


def icon_variant(base: Path | None, state: str) -> QIcon:
    """The app icon, with a coloured badge for every state but idle."""
    pixmap = QPixmap(str(base)) if base is not None else QPixmap()
    if pixmap.isNull():
        pixmap = QPixmap(SIZE, SIZE)
        pixmap.fill(QColor("#3a6ea5"))
    pixmap = pixmap.scaled(
        SIZE, SIZE, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
    )
    badge = BADGES.get(state)
    if badge is not None:
        colour, mark = badge
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(colour))
        size = SIZE // 2
        rect = QRectF(SIZE - size, SIZE - size, size, size)
        painter.drawEllipse(rect)
        if mark:
            font = QFont()
            font.setBold(True)
            font.setPixelSize(size * 3 // 4)
            painter.setFont(font)
            painter.setPen(QColor("white"))
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, mark)
        painter.end()
    return QIcon(pixmap)


class Tray(QObject):
    _changed = Signal(object)

    def __init__(self, *, icon: Path | None, on_action: Callable[[str], None]) -> None:
        super().__init__()
        self._base = icon
        self._on_action = on_action
        self._icons: dict[str, QIcon] = {}
        self._activity = Activity()
        self._monitor: TrayState | None = None
        self._items: tuple[MenuItem, ...] = ()
        self._menu = QMenu()
        self._shown_icon = IDLE
        self._icon = QSystemTrayIcon(self._icon_for(IDLE))
        self._icon.setContextMenu(self._menu)
        self._icon.activated.connect(self._on_activated)
        self._changed.connect(self._apply)
        self._apply(None)

    def _icon_for(self, state: str) -> QIcon:
        if state not in self._icons:
            self._icons[state] = icon_variant(self._base, state)
        return self._icons[state]

    def show(self) -> None:
        self._icon.show()

    def hide(self) -> None:
        self._icon.hide()

    def show_state(self, state: TrayState) -> None:
        """From any thread: the Monitor's state (sessions of other agents)."""
        self._changed.emit(state)

    def show_activity(self, activity: Activity) -> None:
        """From any thread: the app's own runs."""
        self._changed.emit(activity)

    def _apply(self, change: object) -> None:
        if isinstance(change, TrayState):
            self._monitor = change
        elif isinstance(change, Activity):
            self._activity = change
        # Touch the icon (a D-Bus or X round trip) only when what it shows changes.
        state = icon_state(self._activity, self._monitor)
        if state != self._shown_icon:
            self._icon.setIcon(self._icon_for(state))
            self._shown_icon = state
        text = tooltip(self._activity, self._monitor)
        if text != self._icon.toolTip():
            self._icon.setToolTip(text)
        items = menu_items(self._activity)
        if items != self._items:
            self._render(items)

    def _render(self, items: tuple[MenuItem, ...]) -> None:
        self._items = items
        self._menu.clear()
        for item in items:
            if item.separator:
                self._menu.addSeparator()
                continue
            action = QAction(item.text, self._menu)
            action.setEnabled(item.enabled)
            action.triggered.connect(lambda _checked=False, name=item.action: self._on_action(name))
            self._menu.addAction(action)

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self._on_action(OPEN)

    @property
    def state(self) -> str:
        return self._shown_icon

    @property
    def tooltip(self) -> str:
        return str(self._icon.toolTip())

    @property
    def menu_texts(self) -> list[str]:
        return [a.text() for a in self._menu.actions() if not a.isSeparator()]
