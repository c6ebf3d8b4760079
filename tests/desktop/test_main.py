"""``sparrow-desktop``'s arguments, and ``--headless`` as a real subprocess."""

from __future__ import annotations

import http.client
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.main import _configured_port, build_parser, main
from tests.desktop.sockets import accepts, ports_of

LINE = re.compile(r"^Sparrow is serving at (http://127\.0\.0\.1:(\d+))/\?token=([\w-]+)$")


def desktop_command() -> list[str]:
    script = Path(sys.executable).with_name("sparrow-desktop")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "desktop.main"]


def launch(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*desktop_command(), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )


@pytest.fixture
def headless() -> Iterator[tuple[subprocess.Popen[str], re.Match[str]]]:
    process = launch("--headless")
    try:
        assert process.stdout is not None
        line = process.stdout.readline().rstrip("\n")
        match = LINE.match(line)
        assert match, f"unexpected first line {line!r}; stderr: {process.stderr}"
        yield process, match
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert re.fullmatch(r"sparrow-desktop \S+\n", capsys.readouterr().out)


def test_port_defaults_to_the_setting_which_defaults_to_a_free_one() -> None:
    assert build_parser().parse_args([]).port is None
    assert _configured_port() == 0
    assert build_parser().parse_args(["--port", "8765"]).port == 8765


@pytest.mark.parametrize("bad", ["http", "-1", "70000"])
def test_an_impossible_port_is_a_usage_error(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--port", bad])
    assert stopped.value.code == 2
    assert "port" in capsys.readouterr().err


def test_a_port_in_use_exits_2_with_the_fix(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert main(["--headless", "--port", str(port)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert str(port) in captured.err
    assert "omit --port" in captured.err


@pytest.mark.e2e
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_headless_serves_until_signalled(
    headless: tuple[subprocess.Popen[str], re.Match[str]], sig: signal.Signals
) -> None:
    process, match = headless
    base, port, token = match.group(1), int(match.group(2)), match.group(3)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", f"/?token={token}")
    welcome = conn.getresponse()
    welcome.read()
    assert welcome.status == 303
    cookie = welcome.getheader("set-cookie", "").split(";")[0]
    conn.request("GET", "/", headers={"Cookie": cookie})
    page = conn.getresponse()
    page.read()
    assert page.status == 200, base
    conn.close()
    if sys.platform.startswith("linux"):
        assert ports_of(process.pid) == {("127.0.0.1", port)}

    process.send_signal(sig)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert out == ""  # exactly one line in all: the one read above
    assert not accepts(port)


@pytest.mark.e2e
def test_headless_port_in_use_exits_2() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        process = launch("--headless", "--port", str(port))
        out, err = process.communicate(timeout=60)
    assert process.returncode == 2
    assert out == ""
    assert f"Port {port}" in err and "omit --port" in err


def test_the_port_setting_is_the_default_port(sparrow_home: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        taken = probe.getsockname()[1]
        probe.listen()
        config = sparrow_home / "config" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(f"[server]\nport = {taken}\n")
        # The configured port is in use: the headless server says so and exits 2.
        assert main(["--headless"]) == 2
        config.write_text("[server]\nport = 'x'\n")
        assert main(["--headless"]) == 1  # a broken settings file: Sparrow cannot start


def test_a_folder_that_cannot_be_opened_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path / "nowhere")]) == 2
    assert (
        capsys.readouterr().err
        == f"Sparrow cannot open {tmp_path / 'nowhere'}: it does not exist\n"
    )
    (tmp_path / "file").write_text("x")
    assert main([str(tmp_path / "file")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_headless_takes_no_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--headless", str(tmp_path)])
    assert stopped.value.code == 2
    assert "--headless takes none" in capsys.readouterr().err
