"""The desktop window: pywebview showing the embedded server's UI.

Startup order (it matters on two cores and one GIL): the server's socket is
bound and listening before the window exists, so the window's URL is known;
the app itself starts in ``before_show``, once Qt has built the window and
Chromium's processes are starting, so the two do not fight over the GIL during
Qt's own start-up. The window's first request waits in the socket's backlog
until the app serves.

``webview.start()`` runs the GUI loop on the main thread and returns when the
window is closed (or on SIGINT/SIGTERM, which close it); the caller then stops
the server, whose lifespan stops the runs. Closing the window while runs go on
hides it instead, where there is a tray (:mod:`desktop.background`); the tray's
Quit stops the runs at a safe point before the window closes.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

from desktop import geometry
from desktop.background import Background, WindowHooks
from desktop.bridge import Bridge
from desktop.output import complain, say
from desktop.qt_env import uses_qt
from server.web.serve import EmbeddedServer, ServerStartError

log = logging.getLogger(__name__)

TITLE = "Sparrow"
SIZE = geometry.DEFAULT_SIZE
MIN_SIZE = geometry.MIN_SIZE
READY_LINE = "Sparrow window ready"
# Said once the page shows a folder handed to the window (at launch or by a second one).
OPENED_LINE = "Sparrow opened the workspace {folder}"
SCREENSHOT_ENV = "SPARROW_SCREENSHOT"
SCREENSHOT_SETTLE_SECONDS = 0.5
SERVICES_WAIT_FOR_PAGE_SECONDS = 10.0


def icon_path() -> Path | None:
    """The window icon: in a PyInstaller bundle, in the package, or in the checkout."""
    here = Path(__file__).resolve().parent
    candidates = [here / "_assets", here.parent / "assets"]
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        candidates.insert(0, Path(bundle) / "assets")
    for folder in candidates:
        if (folder / "sparrow.png").is_file():
            return folder / "sparrow.png"
    return None


def screenshot_path(env: dict[str, str] | None = None) -> Path | None:
    value = (os.environ if env is None else env).get(SCREENSHOT_ENV, "").strip()
    return Path(value).resolve() if value else None


class DesktopWindow:
    def __init__(
        self,
        server: EmbeddedServer,
        *,
        screenshot: Path | None = None,
        state: Path | None = None,
        folder: str | None = None,
    ) -> None:
        self._server = server
        self._screenshot = screenshot
        self._state = state  # where the window's geometry is kept (None: not kept)
        self._saved = geometry.load(state) if state is not None else None
        self._geometry = geometry.fit(self._saved, [])  # updated as the window moves
        # Folders to open once the page is ready (the launch's own, or handed over).
        self._folders: list[str] = [folder] if folder else []
        self._page_ready = False
        self._page_shown = threading.Event()
        self._qt = uses_qt()
        self._gui: Any = None  # desktop.qt_gui.GuiThread once the Qt window exists
        self._watch: Any = None  # desktop.qt_gui.WindowWatch: shown, focused
        self._window: Any = None  # webview.Window
        self._lock = threading.Lock()
        self._shown = False
        self._close_requested = False
        self._server_failed = False
        # The tray, the notices, close-to-tray and Quit at a safe point.
        self.background = Background(
            WindowHooks(
                show=self._show_window,
                hide=self._hide_window,
                navigate=self._navigate,
                close=self._destroy_now,
            ),
            icon=icon_path(),
        )
        self.bridge = Bridge(
            on_ready=self._on_ready,
            pick_folder=self._pick_folder,
            save_as=self._save_as,
            on_quit=self.quit,
            on_view=self.background.set_page_run,
        )

    def run(self) -> int:
        """Show the window, block until it is closed; 0, or 1 if the server failed."""
        import webview

        self._server.bind()
        if self._qt:
            import PySide6.QtCore  # noqa: F401  (its import hook, tamed before any thread imports)

            from desktop.navigation import install_qt_guard
            from desktop.qt_gui import set_desktop_identity
            from desktop.qt_import_hook import tame

            tame()

            install_qt_guard(self._server.base_url)
            set_desktop_identity()
        else:
            self._start_server()  # other backends: no need to wait for before_show
        if not self._qt:
            # Qt fits the geometry to its screens in before_show, once it knows them.
            self._geometry = geometry.fit(self._saved, _screens())
        place = self._geometry
        window = webview.create_window(
            TITLE,
            self._server.launch_url,
            js_api=self.bridge,
            width=place.width,
            height=place.height,
            x=place.x,
            y=place.y,
            maximized=place.maximized,
            min_size=MIN_SIZE,
            text_select=True,
        )
        if window is None:
            raise RuntimeError("pywebview did not create the window")
        self._window = window
        window.events.before_show += self._on_before_show
        window.events.shown += self._on_shown
        window.events.loaded += self._on_loaded
        window.events.closing += self.background.on_closing
        window.events.moved += self._on_moved
        window.events.resized += self._on_resized
        window.events.maximized += self._on_maximized
        window.events.restored += self._on_restored
        previous = signal.signal(signal.SIGTERM, self._on_sigterm)
        icon = icon_path()
        from desktop.app_menu import build_menu

        menu = build_menu(self._menu_command, show_shortcuts=self._qt)
        try:
            webview.start(private_mode=True, icon=str(icon) if icon else None, menu=menu)
        finally:
            self._save_geometry()
            signal.signal(signal.SIGTERM, previous)
            self.background.stop()
        return 1 if self._server_failed else 0

    def quit(self) -> None:
        """Quit at a safe point (the tray's Quit; an app menu's too): the runs stop
        and end, checkpointed and flushed, then the window closes."""
        self.background.quit()

    def close(self) -> None:
        """Close the window as the user would; safe from any thread, even before it shows."""
        self.background.let_close()
        with self._lock:
            self._close_requested = True
            shown = self._shown
        if shown:
            self._destroy()

    def _start_server(self) -> None:
        self._server.start(wait=False)
        threading.Thread(target=self._watch_server, name="watch-server", daemon=True).start()

    def _watch_server(self) -> None:
        try:
            self._server.wait_serving()
        except ServerStartError as exc:
            complain(str(exc))
            self._server_failed = True
            self.close()
            return
        # The notices and the tray's activity start once the page shows, not as it
        # loads: their connections and threads would take the one GIL from the
        # server answering the page. They lose nothing meanwhile (the waiting
        # approvals and the kept context levels are read when they connect), and a
        # page that never says it is ready delays them by the bound at most.
        self._page_shown.wait(SERVICES_WAIT_FOR_PAGE_SECONDS)
        self._start_alerts()

    def _start_alerts(self) -> None:
        self.background.start(self._server.port, self._server.token)

    def _on_before_show(self) -> None:
        # Synchronous, on the GUI thread, once Qt has built the window.
        if self._qt:
            from desktop.qt_gui import GuiThread, WindowWatch, place_window

            self._gui = GuiThread()  # lives on the GUI thread: it runs calls there
            self._watch = WindowWatch(self._window.native, self.background.set_window_state)
            self._geometry = place_window(self._window.native, self._saved)
            self.background.make_tray()
            self._start_server()

    def _show_window(self) -> None:
        if self._window is not None:
            self._window.show()
            self._window.restore()

    def _hide_window(self) -> None:
        if self._window is not None:
            self._window.hide()

    def _navigate(self, hash_: str) -> None:
        if self._window is not None:
            self._window.evaluate_js(f"window.location.hash = {json.dumps(hash_)}")

    def _on_shown(self) -> None:
        with self._lock:
            self._shown = True
            closing = self._close_requested
        if closing:
            self._destroy()

    def _on_loaded(self) -> None:
        # Each full page load needs the drop handler again (desktop/drops.py).
        from desktop.drops import start_binding

        start_binding(self._window)

    def _destroy(self) -> None:
        threading.Thread(target=self._destroy_now, name="close-window", daemon=True).start()

    def _destroy_now(self) -> None:
        if self._window is not None:
            self._window.destroy()

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        self.close()

    # -- geometry ------------------------------------------------------------

    def _on_moved(self, x: int, y: int) -> None:
        if not self._geometry.maximized:
            self._geometry = replace(self._geometry, x=x, y=y)

    def _on_resized(self, width: int, height: int) -> None:
        if not self._geometry.maximized:
            self._geometry = replace(self._geometry, width=width, height=height)

    def _on_maximized(self) -> None:
        self._geometry = replace(self._geometry, maximized=True)

    def _on_restored(self) -> None:
        self._geometry = replace(self._geometry, maximized=False)

    def _save_geometry(self) -> None:
        if self._state is None:
            return
        try:
            geometry.save(self._state, self._geometry)
        except OSError as exc:
            complain(f"Sparrow: the window's size and place were not saved: {exc}")

    # -- commands: the menu, a second launch ----------------------------------

    def _menu_command(self, command: str) -> None:
        # pywebview runs menu actions in threads of their own.
        if command == "quit":
            self.quit()  # at a safe point, as the tray's Quit: closing may only hide
        else:
            self._page_command(command)

    def _page_command(self, command: str, argument: str | None = None) -> object:
        """Run one of the page's commands (ui/js/commands.js); what it returns."""
        if self._window is None:
            return None
        call = f"window.sparrowCommand({json.dumps(command)}, {json.dumps(argument)})"
        return self._window.evaluate_js(f"window.sparrowCommand ? {call} : null")

    def handle_request(self, request: Any) -> None:
        """Another launch's request (desktop.single_instance): come to the front,
        and open its folder as the workspace of a new conversation."""
        self._in_thread(lambda: self._take_request(request.folder))

    def _in_thread(self, job: Callable[[], None]) -> None:
        # pywebview's window calls wait on the GUI thread: never make them on it.
        threading.Thread(target=job, name="window-request", daemon=True).start()

    def _take_request(self, folder: str | None) -> None:
        self._bring_to_front()
        if folder:
            with self._lock:
                if not self._page_ready:
                    self._folders.append(folder)  # opened once the page is ready
                    return
            self._open_folder(folder)

    def _bring_to_front(self) -> None:
        if self._window is None:
            return
        if self._gui is None:
            self._window.show()
            return
        from desktop.qt_gui import raise_window

        native = self._window.native
        # Not restore(): a maximised window stays maximised.
        self._gui.call(lambda: raise_window(native))

    def _open_folder(self, folder: str) -> None:
        shown = self._page_command("open-workspace", folder)
        if shown == folder:
            say(OPENED_LINE.format(folder=folder))
        else:
            complain(f"Sparrow: the window did not open {folder} (it shows {shown!r})")

    def _on_ready(self) -> None:
        if self._screenshot is not None:
            # The web view paints asynchronously: give it a few frames, so the
            # picture shows the page the script has just finished, not the one before.
            time.sleep(SCREENSHOT_SETTLE_SECONDS)
            try:
                self._save_screenshot(self._screenshot)
            except Exception as exc:
                complain(f"Sparrow: no screenshot: {exc}")
        say(READY_LINE)
        self._page_shown.set()
        with self._lock:
            self._page_ready = True
            folders, self._folders = self._folders, []
        for folder in folders:
            self._open_folder(folder)

    def _save_screenshot(self, path: Path) -> None:
        if self._gui is None or self._window is None:
            raise RuntimeError("screenshots need the Qt backend")
        from desktop.qt_gui import grab_to_file

        native = self._window.native
        self._gui.call(lambda: grab_to_file(native, path))

    def _save_as(self, name: str) -> str | None:
        import webview

        if self._window is None:
            return None
        chosen = self._window.create_file_dialog(
            webview.FileDialog.SAVE, directory=str(Path.home()), save_filename=name
        )
        if not chosen:
            return None
        # A save dialog answers one path (some backends as a bare string).
        return str(chosen) if isinstance(chosen, str) else str(chosen[0])

    def _pick_folder(self) -> str | None:
        import webview

        if self._window is None:
            return None
        chosen = self._window.create_file_dialog(
            webview.FileDialog.FOLDER, directory=str(Path.home())
        )
        if not chosen:
            return None
        return str(chosen[0])


def _screens() -> list[geometry.Rect]:
    """The screens as pywebview sees them (non-Qt backends), the primary first."""
    import webview

    try:
        return [geometry.Rect(s.x, s.y, s.width, s.height) for s in webview.screens]
    except Exception:  # no screen to ask: the saved geometry as it is
        return []
