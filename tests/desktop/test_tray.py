"""The tray icon's Qt side, in a subprocess on the offscreen platform (no tray
host there, so the icon is never shown: this checks that it renders the menu
model, the four icon states, and that a state sent from another thread reaches
the tooltip and the menu)."""

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
    from desktop.activity import ActivityModel
    from desktop.alerts import AlertModel
    from desktop.tray import Tray, icon_variant, tray_available
    from desktop.window import icon_path

    app = QApplication([])
    pressed = []
    tray = Tray(icon=icon_path(), on_action=pressed.append)
    states = [tray.state]
    model = ActivityModel()
    model.handle({"type": "run_started", "run_id": "r-1", "task": "tidy the notes"})
    worker = threading.Thread(target=tray.show_activity, args=(model.activity,))
    worker.start()
    worker.join()
    app.processEvents()
    states.append(tray.state)
    model.handle({"type": "approval_requested", "run_id": "r-1", "call_id": "c-1",
                  "tool": "write_file", "reason": "Supervised"})
    tray.show_activity(model.activity)
    app.processEvents()
    states.append(tray.state)
    monitor = AlertModel()
    monitor.connected()
    monitor.handle({"type": "monitor_sessions", "sessions": [{"key": "a", "level": "critical"}]})
    model.handle({"type": "approval_resolved", "run_id": "r-1", "call_id": "c-1",
                  "decision": "allow_once"})
    tray.show_activity(model.activity)
    tray.show_state(monitor.tray)
    app.processEvents()
    states.append(tray.state)
    for action in tray._menu.actions():
        if not action.isSeparator():
            action.trigger()
    nulls = {v: icon_variant(icon_path(), v).pixmap(32, 32).isNull()
             for v in ("idle", "running", "approval", "warning")}
    print(json.dumps({"tooltip": tray.tooltip, "menu": tray.menu_texts, "pressed": pressed,
                      "states": states, "null_icons": nulls, "available": tray_available()}))
    """
)


def test_the_tray_renders_the_menu_model_and_the_four_states() -> None:
    require("Linux", sys.platform.startswith("linux"))
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["states"] == ["idle", "running", "approval", "warning"]
    assert result["tooltip"] == "Sparrow: 1 run going\nSparrow: 1 session, 1 critical"
    assert result["menu"] == [
        "Open window",
        "Monitor",
        "Stop “tidy the notes”",
        "Pause all (emergency stop)",
        "Quit",
    ]
    assert result["pressed"] == ["open", "monitor", "stop:r-1", "pause_all", "quit"]
    assert result["null_icons"] == dict.fromkeys(("idle", "running", "approval", "warning"), False)
    assert result["available"] is False  # no tray host offscreen: the window makes none
