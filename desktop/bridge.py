"""The js_api: what the page may ask of the desktop, as ``window.pywebview.api.NAME()``.

pywebview exposes every public method of this object (and of any public
attribute that is an object) to the page, so everything else here stays
private. Each call runs in its own thread and returns a Promise in the page.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

from desktop.navigation import open_external

RUN_HASH = "#run="


class Bridge:
    def __init__(
        self,
        *,
        on_ready: Callable[[], None],
        pick_folder: Callable[[], str | None],
        save_as: Callable[[str], str | None] = lambda name: None,
        open_url: Callable[[str], bool] = open_external,
        on_quit: Callable[[], None] = lambda: None,
        on_view: Callable[[str], None] = lambda run_id: None,
    ) -> None:
        self._on_ready = on_ready
        self._on_view = on_view
        self._on_quit = on_quit
        self._pick_folder = pick_folder
        self._save_as = save_as
        self._open_url = open_url
        self._ready_lock = threading.Lock()
        self._ready = False

    def page_ready(self) -> bool:
        """The page has rendered. The first call runs the ready hook; later ones are no-ops."""
        with self._ready_lock:
            if self._ready:
                return False
            self._ready = True
        self._on_ready()
        return True

    def choose_folder(self) -> str | None:
        """Ask the user for a folder with the native dialog: its path, or None if cancelled."""
        return self._pick_folder()

    def open_external(self, url: str) -> bool:
        """Open an http(s) or mailto URL in the system browser (never in the window)."""
        return self._open_url(str(url))

    def save_file(self, name: str, text: str) -> str | None:
        """Write ``text`` where the user chooses in the native save dialog, ``name``
        offered: the path written, or None if cancelled. The window cannot
        download (a session's export): the page hands the text over instead."""
        offered = Path(str(name)).name or "export.txt"  # a name, never a path
        chosen = self._save_as(offered)
        if not chosen:
            return None
        Path(chosen).write_text(str(text), encoding="utf-8")
        return chosen

    def quit(self) -> None:
        """Quit the app, as its menu's Quit does (Ctrl+Q in the page)."""
        self._on_quit()

    def page_shows(self, location_hash: str) -> None:
        """The page's address changed: ``#run=ID`` shows that run, anything else none.
        (The desktop sends no notice of what the user has in front of them.)"""
        text = str(location_hash)
        self._on_view(unquote(text[len(RUN_HASH) :]) if text.startswith(RUN_HASH) else "")
