"""Files dropped on the real ``sparrow-desktop`` window under Xvfb: a drop
goes the way a drop by hand goes (the paths where pywebview's Qt view records
them, a DOM drop event on the page, pywebview's matching of names to paths,
Sparrow's Python drop handler), and shows chips with the real paths; the
next model request (a local server speaking a vendor's wire format) holds
the files' content; a binary file's chip says why it is refused and its
bytes go nowhere.

The test's hand inside the desktop process is tests/e2e/window_driver."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AUTONOMOUS_CONFIG
from tests.e2e.desktop_fixtures import READY_TIMEOUT, Desktop, Launcher
from tests.e2e.test_window import READY
from tests.fakes.script import Reply
from tests.fakes.vendors import FakeVendor

pytestmark = pytest.mark.e2e

DRIVER = Path(__file__).resolve().parent / "window_driver"
ANSWER_TIMEOUT = 60.0  # a guard against a hang, not a timing goal
CHAT = "/v1/chat/completions"


class Driver:
    def __init__(self, folder: Path, desktop: Desktop) -> None:
        self.folder = folder
        self.desktop = desktop
        self.count = 0

    def ask(self, command: dict[str, Any]) -> dict[str, Any]:
        self.count += 1
        name = f"{self.count:03d}"
        tmp = self.folder / f"{name}.tmp"
        tmp.write_text(json.dumps(command))
        tmp.rename(self.folder / f"{name}.json")
        out = self.folder / f"{name}.out.json"
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while not out.exists():
            if time.monotonic() > deadline or self.desktop.process.poll() is not None:
                pytest.fail(f"no answer to {command}; stderr: "
                            f"{self.desktop.stderr.read_text()[-3000:]}")
            time.sleep(0.1)
        answer: dict[str, Any] = json.loads(out.read_text())
        assert "error" not in answer, answer["error"]
        return answer

    def js(self, expression: str) -> Any:
        return self.ask({"js": expression})["value"]

    def wait_js(self, expression: str, what: str) -> Any:
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while time.monotonic() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.2)
        pytest.fail(f"the window never showed {what}")


CHIPS = """JSON.stringify([...document.querySelectorAll(
  '#run-attachments [data-testid=attach-chip]')].map((c) => ({
    path: c.title, how: c.dataset.how,
    name: c.querySelector('.attach-name').textContent,
    label: c.querySelector('.attach-how').textContent})))"""


@pytest.fixture
def vendor() -> Iterator[FakeVendor]:
    with FakeVendor() as fake:
        yield fake


def test_files_dropped_on_the_window_attach_by_their_real_paths(
    launch_desktop: Launcher, vendor: FakeVendor, tmp_path: Path, workspace: Path,
    xvfb: str, artifacts: Path,
) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(
        AUTONOMOUS_CONFIG
        + f'[providers.fake]\nbase_url = "{vendor.base_url}/v1"\nkind = "openai-chat"\n'
    )
    dropped = tmp_path / "dropped"
    dropped.mkdir()
    first, second, blob = dropped / "plan.md", dropped / "notes.txt", dropped / "tool.bin"
    first.write_text("step one: water the plants\n")
    second.write_text("the key is under the mat\n")
    blob.write_bytes(b"\x7fELF\x00\x00SECRET-BYTES\x00")
    commands = tmp_path / "driver"
    commands.mkdir()
    pythonpath = os.pathsep.join(filter(None, (str(DRIVER), os.environ.get("PYTHONPATH"))))
    desktop = launch_desktop(SPARROW_TEST_DRIVER=str(commands), PYTHONPATH=pythonpath)
    desktop.wait_for_line(READY, READY_TIMEOUT)
    driver = Driver(commands, desktop)

    dropped_at = driver.ask({"drop": [str(first), str(second), str(blob)]})
    assert dropped_at["listeners"] >= 1 and dropped_at["prevented"]
    chips = json.loads(driver.wait_js(
        f"(() => {{ const c = {CHIPS}; return JSON.parse(c).length === 3 && "
        "!c.includes('\"pending\"') ? c : null; })()", "three described chips"))
    assert [(c["path"], c["how"]) for c in chips] == [
        (str(first), "inline"), (str(second), "inline"), (str(blob), "refused")
    ]
    assert chips[2]["label"].startswith("refused: a binary file (it holds NUL bytes)")
    from PIL import ImageGrab

    time.sleep(0.5)  # the web view paints a few frames after the DOM changed
    ImageGrab.grab(xdisplay=xvfb).save(artifacts / "window-drop-chips.png")

    # The model picked from the list, as a user would, once the list has come (it is
    # asked for after the first state shows, and a list that came later would
    # fill the select anew).
    driver.wait_js(
        "[...document.getElementById('model').options].some((o) => o.value === 'fake:fake-model')",
        "the configured model in the list",
    )
    # Sent as it stands: refused, nothing goes to the model.
    driver.js(f"""(() => {{
      document.getElementById('workspace').value = {json.dumps(str(workspace))};
      const model = document.getElementById('model');
      model.value = 'fake:fake-model';
      model.dispatchEvent(new Event('change'));
      document.getElementById('prompt').value = 'What do these say?';
      document.getElementById('run-button').click();
      return true;
    }})()""")
    error = driver.wait_js("document.getElementById('form-error').textContent", "an error")
    assert "Remove what cannot be sent" in error and "tool.bin" in error
    assert vendor.requests == []

    # The binary removed, the task goes with the two files.
    vendor.script(Reply(text="Water the plants; the key is under the mat."))
    driver.js("document.querySelectorAll('#run-attachments [data-testid=attach-remove]')[2]"
              ".click() || true")
    driver.js("document.getElementById('run-button').click() || true")
    driver.wait_js("document.querySelectorAll('[data-testid=run-end]').length", "the run's end")
    wire = json.dumps(vendor.last(CHAT).body)
    assert "step one: water the plants" in wire and "the key is under the mat" in wire
    assert str(first) in wire and str(second) in wire
    assert "SECRET-BYTES" not in wire and "tool.bin" not in wire
