"""Desktop notifications against a real notification daemon (Debian's
``notification-daemon``) on a private D-Bus bus and a private X server: the
daemon receives and holds what Sparrow sends; a later notice of the same session
replaces the first; with no daemon, sending fails quietly; and the real
``sparrow-desktop`` window notifies when a session it monitors crosses warning."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bench.common import xvfb_display
from desktop.alerts import Notice
from desktop.notify import Notifier, _call, server_information
from tests.conftest import require, require_program
from tests.monitor import transcripts as t

DAEMON = Path("/usr/lib/notification-daemon/notification-daemon")
KEY = "/c/projects/-home-ada-src-engine/a.jsonl"


def notice(level: str = "warning") -> Notice:
    return Notice(
        key=KEY,
        level=level,
        title=f"Context {level}: engine",
        body="The claude-code session is at 112k of 200k tokens (56%).",
        urgent=level == "critical",
    )


def start_bus() -> tuple[subprocess.Popen[str], str]:
    program = require_program("dbus-daemon")
    process = subprocess.Popen(
        [program, "--session", "--nofork", "--nopidfile", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    address = process.stdout.readline().strip()
    assert address, "dbus-daemon did not start"
    return process, address


def stop(process: subprocess.Popen[Any]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
    if process.stdout is not None:
        process.stdout.close()


@pytest.fixture
def bus() -> Iterator[str]:
    """A private D-Bus bus with nothing on it; its address."""
    require("Linux", sys.platform.startswith("linux"))
    process, address = start_bus()
    yield address
    stop(process)


@pytest.fixture
def display() -> Iterator[str]:
    with xvfb_display(require_program("Xvfb"), "1024x768x24") as name:
        assert name, "Xvfb did not start"
        yield name


@contextmanager
def notification_daemon(bus: str, display: str) -> Iterator[str]:
    """notification-daemon serving on the private bus; the bus's address."""
    require("notification-daemon (Debian package)", DAEMON.is_file())
    env = {
        **os.environ,
        "DISPLAY": display,
        "DBUS_SESSION_BUS_ADDRESS": bus,
        "NO_AT_BRIDGE": "1",  # no accessibility bus to start
    }
    env.pop("WAYLAND_DISPLAY", None)
    process = subprocess.Popen(
        [str(DAEMON)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                server_information(bus)
                break
            except Exception:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"notification-daemon did not start ({process.poll()})")
                time.sleep(0.1)
        yield bus
    finally:
        stop(process)


@pytest.fixture
def daemon(bus: str, display: str) -> Iterator[str]:
    with notification_daemon(bus, display) as address:
        yield address


def test_the_daemon_receives_and_holds_the_notice(daemon: str) -> None:
    assert server_information(daemon)[0] == "Notification Daemon"
    notifier = Notifier(bus=daemon)
    ident = notifier.send(notice())
    assert isinstance(ident, int) and ident > 0
    # The daemon knows that notification: closing it is accepted...
    _call("CloseNotification", "u", (ident,), daemon)
    # ...while an id it never gave out is refused.
    with pytest.raises(RuntimeError):
        _call("CloseNotification", "u", (ident + 1000,), daemon)


def test_a_later_notice_of_the_same_session_replaces_the_first(daemon: str) -> None:
    notifier = Notifier(bus=daemon)
    first = notifier.send(notice("warning"))
    second = notifier.send(notice("critical"))
    assert first is not None and second == first
    other = notifier.send(Notice("/other.jsonl", "warning", "t", "b", urgent=False))
    assert other is not None and other != first


def test_without_a_daemon_sending_fails_quietly(bus: str, caplog: pytest.LogCaptureFixture) -> None:
    assert Notifier(bus=bus).send(notice()) is None
    assert "no desktop notification" in caplog.text


def test_without_a_bus_sending_fails_quietly(tmp_path: Path) -> None:
    assert Notifier(bus=f"unix:path={tmp_path / 'no-bus'}").send(notice()) is None


def test_without_a_session_bus_notifications_are_off_said_once(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    notifier = Notifier()
    with caplog.at_level(logging.DEBUG):
        assert notifier.send(notice("warning")) is None
        assert notifier.send(notice("critical")) is None
    assert [r.getMessage() for r in caplog.records] == [
        "desktop notifications are off: no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)"
    ]
    assert not any(r.exc_info for r in caplog.records)
    assert "KeyError" not in capsys.readouterr().err


def test_without_a_session_bus_stderr_has_one_line(tmp_path: Path) -> None:
    """As the window runs it: no logging set up, so a warning goes to stderr as is."""
    code = (
        "from desktop.alerts import Notice\n"
        "from desktop.notify import Notifier\n"
        "notifier = Notifier()\n"
        "for level in ('warning', 'critical'):\n"
        "    assert notifier.send(Notice('k', level, 't', 'b', urgent=False)) is None\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "desktop notifications are off: no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)"
    ]


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.mark.e2e
def test_the_window_notifies_when_a_session_crosses_warning(
    daemon: str, display: str, tmp_path: Path
) -> None:
    script = Path(sys.executable).with_name("sparrow-desktop")
    require("the sparrow-desktop console script (pip install -e .)", script.exists())
    monitor_program = require_program("dbus-monitor")
    config = Path(os.environ["CLAUDE_CONFIG_DIR"])  # temporary (tests/conftest.py)
    transcript = t.write(
        config / "projects" / "-home-ada-src-engine" / "s1.jsonl",
        t.context_line(20_000, "m1", ts=stamp()),
    )
    calls = tmp_path / "notify-calls.txt"
    env = {**os.environ, "DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": daemon}
    env.pop("WAYLAND_DISPLAY", None)
    env["SPARROW_HOME"] = str(tmp_path / "home")
    with calls.open("w") as out:
        spy = subprocess.Popen(
            [monitor_program, "--address", daemon, "interface='org.freedesktop.Notifications'"],
            stdout=out,
            stderr=subprocess.DEVNULL,
        )
    desktop_out, desktop_err = tmp_path / "desktop.out", tmp_path / "desktop.err"
    with desktop_out.open("w") as out, desktop_err.open("w") as err:
        desktop = subprocess.Popen([str(script)], stdout=out, stderr=err, env=env)
    try:
        wait_for(lambda: "member=NameLost" in calls.read_text(), "dbus-monitor to listen")
        wait_for(lambda: "window ready" in desktop_out.read_text(), "the window")
        time.sleep(1.5)  # the monitor's first poll and the alert socket
        assert "member=Notify" not in calls.read_text()  # nothing at warning yet
        t.append(transcript, t.context_line(120_000, "m2", ts=stamp()))
        wait_for(lambda: "Context warning: engine" in calls.read_text(), "the notification")
        assert "120k of 200k tokens" in calls.read_text()
        desktop.send_signal(signal.SIGTERM)
        assert desktop.wait(30) == 0, desktop_err.read_text()[-4000:]
    finally:
        for process in (desktop, spy):
            if process.poll() is None:
                process.kill()
            process.wait(10)


def test_the_daemon_takes_an_approval_with_allow_and_deny_and_its_withdrawal(
    daemon: str,
) -> None:
    from desktop.activity import approval_notice

    notifier = Notifier(bus=daemon)
    try:
        assert "actions" in notifier.capabilities()  # so Allow and Deny are offered
        event = {
            "type": "approval_requested",
            "run_id": "r-1",
            "call_id": "c-1",
            "tool": "write_file",
            "reason": "Supervised · Mutating: Ask",
        }
        ident = notifier.send(approval_notice(event, "tidy the notes"))
        assert isinstance(ident, int) and ident > 0
        assert notifier.shown("approval:r-1:c-1") == ident
        assert notifier.close("approval:r-1:c-1") is True  # answered in the window
        assert notifier.shown("approval:r-1:c-1") is None
        with pytest.raises(RuntimeError):  # the daemon no longer has it
            _call("CloseNotification", "u", (ident,), daemon)
    finally:
        notifier.stop()


def test_a_kept_notice_reaches_notification_daemon_once_it_starts(
    bus: str, display: str, tmp_path: Path
) -> None:
    from desktop.notices import NoticeDesk

    def came(present: bool) -> None:  # as ActivityService does
        if present:
            desk.retry()

    notifier = Notifier(bus=bus, on_daemon=came)
    desk = NoticeDesk(tmp_path, notifier)
    try:
        notifier.connect()  # as the app does at start: it hears the daemon come
        assert desk.post(notice()) is False  # no daemon yet: kept
        assert desk.pending() == [KEY]
        with notification_daemon(bus, display):
            wait_for(lambda: desk.pending() == [], "the kept notice to be shown", timeout=30)
            ident = notifier.shown(KEY)
            assert ident is not None
            _call("CloseNotification", "u", (ident,), bus)  # the real daemon holds it
    finally:
        notifier.stop()
