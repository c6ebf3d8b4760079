from __future__ import annotations

import inspect
import threading
from pathlib import Path

from desktop.bridge import Bridge


def make_bridge(
    ready: list[str],
    folder: str | None = "/tmp/chosen",
    save_to: Path | None = None,
    offered: list[str] | None = None,
) -> Bridge:
    def save_as(name: str) -> str | None:
        if offered is not None:
            offered.append(name)
        return str(save_to / name) if save_to else None

    return Bridge(
        on_ready=lambda: ready.append("ready"),
        pick_folder=lambda: folder,
        save_as=save_as,
        open_url=lambda url: url.startswith("https://"),
        on_quit=lambda: ready.append("quit"),
    )


def test_page_ready_runs_the_hook_once_whatever_the_threads() -> None:
    ready: list[str] = []
    bridge = make_bridge(ready)
    threads = [threading.Thread(target=bridge.page_ready) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ready == ["ready"]
    assert bridge.page_ready() is False


def test_choose_folder_returns_the_path_or_none() -> None:
    assert make_bridge([]).choose_folder() == "/tmp/chosen"
    assert make_bridge([], folder=None).choose_folder() is None


def test_open_external_passes_the_url_on() -> None:
    bridge = make_bridge([])
    assert bridge.open_external("https://example.com/")
    assert not bridge.open_external("file:///etc/passwd")


def test_the_page_sees_only_the_intended_methods() -> None:
    # pywebview exposes every public attribute of the js_api object to the page.
    public = {name for name, _ in inspect.getmembers(make_bridge([])) if not name.startswith("_")}
    assert public == {
        "page_ready",
        "choose_folder",
        "open_external",
        "save_file",
        "quit",
        "page_shows",
    }


def test_save_file_writes_where_the_user_chose_or_nothing(tmp_path: Path) -> None:
    offered: list[str] = []
    bridge = make_bridge([], save_to=tmp_path, offered=offered)
    written = bridge.save_file("s-1.md", "# A session\n\nwith ünïcode\n")
    assert written == str(tmp_path / "s-1.md")
    assert (tmp_path / "s-1.md").read_text(encoding="utf-8") == "# A session\n\nwith ünïcode\n"
    # The page names a file, never where it goes.
    bridge.save_file("../../etc/evil.md", "x")
    assert offered[-1] == "evil.md"
    assert make_bridge([]).save_file("s-1.md", "x") is None  # cancelled


def test_quit_runs_the_quit_hook() -> None:
    asked: list[str] = []
    make_bridge(asked).quit()
    assert asked == ["quit"]


def test_page_shows_tells_the_run_of_the_address() -> None:
    shown: list[str] = []
    bridge = Bridge(on_ready=lambda: None, pick_folder=lambda: None, on_view=shown.append)
    for where in ("#run=r-1", "#run=r%2F2", "#monitor", "", "#run="):
        bridge.page_shows(where)
    assert shown == ["r-1", "r/2", "", "", ""]
