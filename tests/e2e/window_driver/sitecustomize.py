"""A test's hand inside the real ``sparrow-desktop`` process (on PYTHONPATH
only for tests/e2e/test_window_drop.py; nothing of Sparrow imports it).

It waits for the window, then plays the commands the test writes into
``$SPARROW_TEST_DRIVER`` (``NNN.json``), answering each in ``NNN.out.json``:

- ``{"drop": [paths]}``: a drop as the GUI toolkit and the page see it: the
  paths recorded where pywebview's Qt view records a real drop's URLs, then
  a DOM ``drop`` event with files of the same names dispatched on the page;
  from there pywebview's own code and Sparrow's handler run as for a drop
  by hand;
- ``{"js": "expression"}``: the expression's value in the page.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any
from urllib.parse import quote

DROP_SCRIPT = """(() => {
  const data = new DataTransfer();
  for (const name of %s) data.items.add(new File(["dropped"], name));
  const event = new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true });
  document.querySelector("main").dispatchEvent(event);
  return event.defaultPrevented;
})()"""


def _window() -> Any:
    while True:
        webview = sys.modules.get("webview")
        if webview is not None and getattr(webview, "windows", None):
            return webview.windows[0]
        time.sleep(0.1)


def _drop(window: Any, paths: list[str]) -> dict[str, Any]:
    from webview.dom import _dnd_state

    # The handler is bound once the page has loaded: a drop before that finds no one.
    deadline = time.monotonic() + 60
    while not _dnd_state["num_listeners"] and time.monotonic() < deadline:
        time.sleep(0.1)
    # What the Qt view's dropEvent records: (base name, path) of each file:// URL.
    urls = ["file://" + quote(path) for path in paths]
    _dnd_state["paths"] += [(os.path.basename(u), u.replace("file://", "")) for u in urls]
    names = [os.path.basename(path) for path in paths]
    prevented = window.evaluate_js(DROP_SCRIPT % json.dumps(names))
    return {"listeners": _dnd_state["num_listeners"], "prevented": prevented}


def _play(folder: Path) -> None:
    window = _window()
    done: set[str] = set()
    while True:
        for command in sorted(folder.glob("[0-9]*.json")):
            if command.name.endswith(".out.json") or command.name in done:
                continue
            done.add(command.name)
            out = command.with_name(command.stem + ".out.json")
            try:
                asked = json.loads(command.read_text())
                if "drop" in asked:
                    answer = _drop(window, asked["drop"])
                else:
                    answer = {"value": window.evaluate_js(asked["js"])}
            except Exception:
                answer = {"error": traceback.format_exc()}
            tmp = out.with_suffix(".tmp")
            tmp.write_text(json.dumps(answer))
            tmp.rename(out)
        time.sleep(0.1)


_folder = os.environ.get("SPARROW_TEST_DRIVER")
if _folder:
    threading.Thread(target=_play, args=(Path(_folder),), name="test-driver", daemon=True).start()
