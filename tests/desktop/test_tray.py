"""The tray icon's Qt side, in a subprocess on the offscreen platform (no tray
host there, so the icon is never shown: this checks the menu, the icon variants
and that a state sent from another thread reaches the tooltip)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from tests.conftest import require

SCRIPT = textwrap.dedent(
    """
    import json, threading
    from PySide6.QtWidgets import QApplication
    from desktop.alerts import AlertModel
    from desktop.tray import Tray, icon_variant, tray_available
    from desktop.window import icon_path

    app = QApplication([])
    clicked = []
    tray = Tray(
        icon=icon_path(),
        on_show=lambda: clicked.append("show"),
        on_monitor=lambda: clicked.append("monitor"),
        on_quit=lambda: clicked.append("quit"),
    )
    model = AlertModel()
    model.connected()
    model.handle({"type": "monitor_sessions", "sessions": [{"key": "a", "level": "critical"}]})
    worker = threading.Thread(target=tray.show_state, args=(model.tray,))
    worker.start()
    worker.join()
    app.processEvents()
    for action in tray._menu.actions():
        action.trigger()
    sizes = {v: icon_variant(icon_path(), v).pixmap(32, 32).isNull()
             for v in ("sparrow", "sparrow-warning", "sparrow-critical")}
    print(json.dumps({"tooltip": tray.tooltip, "menu": tray.menu_texts, "clicked": clicked,
                      "null_icons": sizes, "available": tray_available()}))
    """
)


def test_tray_menu_icons_and_tooltip() -> None:
    require("Linux", sys.platform.startswith("linux"))
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["tooltip"] == "Sparrow: 1 session, 1 critical"
    assert result["menu"] == ["Show Sparrow", "Monitor", "Quit"]
    assert result["clicked"] == ["show", "monitor", "quit"]
    assert result["null_icons"] == {
        "sparrow": False,
        "sparrow-warning": False,
        "sparrow-critical": False,
    }
    assert result["available"] is False  # no tray host offscreen: the window makes none
