"""The drop handler's side that needs no window: the paths pywebview fills in,
and the script that hands them to the page (the real window is driven in
tests/e2e/test_window_drop.py)."""

from __future__ import annotations

import json
import logging
import threading

import pytest

from desktop.drops import DropHandler, dropped_paths, page_call, start_binding


def test_the_real_paths_of_a_drop_in_order_without_repeats_or_unknowns() -> None:
    event = {"type": "drop", "dataTransfer": {"files": [
        {"name": "a.txt", "pywebviewFullPath": "/home/me/a.txt"},
        {"name": "from-a-web-page.png"},  # no path: not a file of this machine
        {"name": "b.txt", "pywebviewFullPath": "/home/me/b.txt"},
        {"name": "a.txt", "pywebviewFullPath": "/home/me/a.txt"},
    ]}}
    assert dropped_paths(event) == ["/home/me/a.txt", "/home/me/b.txt"]
    assert dropped_paths({"type": "drop"}) == []
    assert dropped_paths({"dataTransfer": None}) == []


def test_paths_reach_the_page_as_json_whatever_they_hold() -> None:
    odd = ["/tmp/it's \"quoted\"\n</script>.txt"]
    script = page_call(odd)
    assert script.startswith("window.sparrowDropped && window.sparrowDropped(")
    assert json.loads(script[script.index("(") + 1 : -1]) == odd


def test_a_drop_without_paths_calls_nothing_and_a_closing_window_loses_only_the_drop() -> None:
    calls: list[str] = []
    DropHandler(calls.append)({"dataTransfer": {"files": [{"name": "x"}]}})
    assert calls == []

    def closed(script: str) -> None:
        raise RuntimeError("the window is gone")

    DropHandler(closed)({"dataTransfer": {"files": [{"pywebviewFullPath": "/a"}]}})


def test_binding_runs_aside_so_a_page_that_never_answers_cannot_hold_the_app() -> None:
    """pywebview's evaluate_js waits forever on a window closed meanwhile: the
    binding must not wait in a thread that keeps the process alive."""
    never = threading.Event()
    thread = start_binding(object(), lambda _window: never.wait(), attempts=1, pause=0)
    assert thread.daemon and thread.is_alive()
    never.set()
    thread.join(10)


def test_a_page_still_settling_is_asked_again() -> None:
    tries: list[int] = []

    def bind(_window: object) -> None:
        tries.append(1)
        if len(tries) < 3:
            raise AttributeError("'EventContainer' object has no attribute 'drop'")

    start_binding(object(), bind, attempts=5, pause=0).join(10)
    assert len(tries) == 3


def test_after_the_last_attempt_the_window_works_on_without_drops(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def bind(_window: object) -> None:
        raise AttributeError("no drop")

    with caplog.at_level(logging.WARNING):
        start_binding(object(), bind, attempts=2, pause=0).join(10)
    assert [r.getMessage() for r in caplog.records] == ["dropped files will not attach: no drop"]
