"""What keeps the runs going behind the window: the tray, the notices, close-to-tray
and Quit at a safe point. The window hooks it in at four places: ``before_show``
(the tray, on the GUI thread), once the server serves (:meth:`Background.start`),
``closing`` (:meth:`Background.on_closing`) and at the end (:meth:`Background.stop`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from desktop.activity import View
from desktop.activity_service import ActivityService
from desktop.alert_service import AlertService
from desktop.alerts import Notice
from desktop.app_client import AppError
from desktop.quitting import SafeQuit
from desktop.tray_menu import MONITOR, OPEN, OPEN_PREFIX, PAUSE_ALL, QUIT, STOP_PREFIX
from server.core.paths import resolve_paths
from server.core.settings import SettingsError, TraySettings, load_settings

log = logging.getLogger(__name__)

CLOSE_TO_TRAY_SAID = "close-to-tray"
CLOSE_TO_TRAY_NOTICE = Notice(
    key="said:close-to-tray",
    level="INFO",
    title="Sparrow goes on in the tray",
    body="The window is closed but its runs go on; the tray icon opens it again, and "
    "its menu quits. (Setting: tray.close_to_tray.)",
    urgent=False,
)


@dataclass
class WindowHooks:
    """What the background asks of the window; each is safe from any thread."""

    show: Callable[[], None]
    hide: Callable[[], None]
    navigate: Callable[[str], None]  # a location.hash
    close: Callable[[], None]  # destroy the window: the app ends


class Background:
    def __init__(self, window: WindowHooks, *, icon: Path | None) -> None:
        self._window = window
        self._icon = icon
        self._tray: Any = None  # desktop.tray.Tray, when the desktop has one
        self._service: ActivityService | None = None
        self._alerts: AlertService | None = None
        self._lock = threading.Lock()
        self._ended = False
        self._quitting = False
        self._view = View()  # what the window shows: no notice of the run in front
        self.cut: tuple[str, ...] = ()  # the runs Quit cut before a safe point
        self.settings = self._settings()

    @staticmethod
    def _settings() -> TraySettings:
        try:
            return load_settings(resolve_paths().config_file).tray
        except SettingsError as exc:  # the server says it too, and refuses to start
            log.warning("%s", exc)
            return TraySettings()

    # --- the tray (GUI thread) -----------------------------------------------

    def make_tray(self) -> None:
        try:
            from PySide6.QtWidgets import QApplication

            from desktop.tray import Tray, tray_available

            if not tray_available():
                return
            self._tray = Tray(icon=self._icon, on_action=self.on_action)
            self._tray.show()
            app = QApplication.instance()
            if isinstance(app, QApplication):
                app.setQuitOnLastWindowClosed(False)  # a hidden window is not an end
        except Exception as exc:  # a tray is a convenience: never stop the window for it
            log.warning("no tray icon: %s", exc)
            self._tray = None

    @property
    def has_tray(self) -> bool:
        return self._tray is not None

    # --- the services --------------------------------------------------------

    def start(self, port: int, token: str) -> None:
        service = ActivityService(
            port,
            token,
            state_dir=resolve_paths().state,
            icon=str(self._icon) if self._icon else "",
            warning_ratio=self.settings.context_warning,
            open_run=lambda run_id: self._in_thread(lambda: self._open(run_id)),
        )
        alerts = AlertService(port, token, send=service.post)
        if self._tray is not None:
            service.set_show(self._tray.show_activity)
            alerts.set_show_state(self._tray.show_state)
        with self._lock:
            if self._ended:  # the window closed before the server served
                return
            self._service, self._alerts = service, alerts
            service.set_view(self._view)
            service.start()
            alerts.start()

    def stop(self) -> None:
        with self._lock:
            self._ended = True
            service, alerts = self._service, self._alerts
        if alerts is not None:
            alerts.stop()
        if service is not None:
            service.stop()

    # --- what the window shows ----------------------------------------------

    def set_page_run(self, run_id: str) -> None:
        """The run the page shows ("" for none): from the bridge, any thread."""
        with self._lock:
            self._view = replace(self._view, run_id=run_id)
        self._in_thread(self._push_view)

    def set_window_state(self, visible: bool, focused: bool) -> None:
        """The window shown or not, focused or not: from the GUI thread, so the
        service (which may talk to the notification daemon) hears it from another."""
        with self._lock:
            self._view = replace(self._view, visible=visible, focused=focused)
        self._in_thread(self._push_view)

    def _push_view(self) -> None:
        # The latest view, whichever thread comes last: each push is idempotent.
        with self._lock:
            service, view = self._service, self._view
        if service is not None:
            service.set_view(view)

    @property
    def view(self) -> View:
        with self._lock:
            return self._view

    # --- closing and quitting ------------------------------------------------

    def on_closing(self) -> bool:
        """The window's ``closing`` (GUI thread): False keeps it open (hidden).

        With runs going, a tray, and ``tray.close_to_tray`` on, the window hides
        and the runs go on; otherwise it closes as before (the runs stop)."""
        with self._lock:
            service, quitting = self._service, self._quitting
        if quitting or service is None or self._tray is None or not self.settings.close_to_tray:
            return True
        if not service.activity.runs:
            return True
        self._in_thread(self._window.hide)
        service.desk.say_once(CLOSE_TO_TRAY_SAID, CLOSE_TO_TRAY_NOTICE)
        return False

    def let_close(self) -> None:
        """The next ``closing`` closes for good (SIGTERM, the app's own close)."""
        with self._lock:
            self._quitting = True

    def quit(self) -> None:
        """Quit at a safe point (from any thread): the runs stop, then the window closes."""
        with self._lock:
            if self._quitting:
                return
            self._quitting = True
            service = self._service
        self._in_thread(lambda: self._quit(service))

    def _quit(self, service: ActivityService | None) -> None:
        try:
            if service is not None:
                result = SafeQuit(
                    service.app,
                    say=service.set_quitting,
                    post=service.post,
                    withdraw=service.desk.withdraw,
                    bound=self.settings.quit_wait_seconds,
                ).run()
                self.cut = result.cut
                if result.cut:
                    log.warning("quit before a safe point: %s", ", ".join(result.cut))
        finally:
            self._window.close()

    # --- the tray's menu -----------------------------------------------------

    def on_action(self, action: str) -> None:
        """A menu item of :func:`desktop.tray_menu.menu_items` was pressed."""
        if action == OPEN:
            self._in_thread(self._window.show)
        elif action == MONITOR:
            self._in_thread(lambda: self._open_hash("#monitor"))
        elif action.startswith(OPEN_PREFIX):
            run_id = action.removeprefix(OPEN_PREFIX)
            self._in_thread(lambda: self._open(run_id))
        elif action.startswith(STOP_PREFIX):
            run_id = action.removeprefix(STOP_PREFIX)
            self._in_thread(lambda: self._call(lambda app: app.cancel(run_id)))
        elif action == PAUSE_ALL:
            self._in_thread(lambda: self._call(lambda app: app.emergency_stop()))
        elif action == QUIT:
            self.quit()
        else:
            log.warning("unknown tray action %r", action)

    def _call(self, job: Callable[[Any], object]) -> None:
        service = self._service
        if service is None:
            return
        try:
            job(service.app)
        except AppError as exc:
            log.warning("%s", exc)

    def _open(self, run_id: str) -> None:
        self._open_hash(f"#run={run_id}")

    def _open_hash(self, hash_: str) -> None:
        self._window.show()
        self._window.navigate(hash_)

    @staticmethod
    def _in_thread(job: Callable[[], None]) -> None:
        # pywebview's window calls wait on the GUI thread: never make them on it.
        threading.Thread(target=job, name="tray-action", daemon=True).start()
