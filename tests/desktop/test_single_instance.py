"""One instance per user, with real unix sockets, real flock and a real process
that dies holding the lock."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.single_instance import (
    InstanceError,
    Request,
    address_for,
    claim,
    hand_over,
    runtime_folder,
)


@pytest.fixture
def runtime() -> Iterator[Path]:
    # Short: a unix socket's path has about 100 bytes at most.
    folder = Path(tempfile.mkdtemp(prefix="xdg-"))
    yield runtime_folder({"XDG_RUNTIME_DIR": str(folder)})
    for path in sorted(folder.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    folder.rmdir()


def test_a_second_claim_hands_its_request_to_the_first(runtime: Path, tmp_path: Path) -> None:
    address = address_for(tmp_path / "state", runtime)
    first = claim(address)
    assert first is not None
    try:
        assert claim(address) is None  # the lock is held: a second launch
        assert hand_over(address, Request("/tmp/before"), timeout=5)  # queued until a handler
        received: list[Request] = []
        first.on_request(received.append)
        assert hand_over(address, Request("/srv/project"), timeout=5)
        assert hand_over(address, Request(None), timeout=5)
        assert received == [Request("/tmp/before"), Request("/srv/project"), Request(None)]
    finally:
        first.close()
    assert not address.exists()
    assert not hand_over(address, Request(None), timeout=0.3)  # nobody there now


def test_another_state_folder_is_another_instance(runtime: Path, tmp_path: Path) -> None:
    one = address_for(tmp_path / "a", runtime)
    other = address_for(tmp_path / "b", runtime)
    assert one != other
    first, second = claim(one), claim(other)
    assert first is not None and second is not None
    first.close()
    second.close()


def test_a_crashed_first_instance_does_not_block(runtime: Path, tmp_path: Path) -> None:
    address = address_for(tmp_path / "state", runtime)
    # A process that claims, then dies without any clean-up (os._exit).
    code = (
        "import os, sys; from pathlib import Path; "
        "from desktop.single_instance import claim; "
        f"p = claim(Path({str(address)!r})); assert p is not None; os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert address.exists()  # its socket stays behind, answered by nobody
    assert not hand_over(address, Request(None), timeout=0.3)
    again = claim(address)
    assert again is not None, "the stale socket blocked the launch"
    try:
        got: list[Request] = []
        again.on_request(got.append)
        assert hand_over(address, Request("/x"), timeout=5)
        assert got == [Request("/x")]
    finally:
        again.close()


def test_a_malformed_request_is_ignored(runtime: Path, tmp_path: Path) -> None:
    import socket

    address = address_for(tmp_path / "state", runtime)
    first = claim(address)
    assert first is not None
    try:
        got: list[Request] = []
        first.on_request(got.append)
        for junk in (b"not json\n", b'{"folder": 3}\n', b"[]\n"):
            with socket.socket(socket.AF_UNIX) as sock:
                sock.connect(str(address))
                sock.sendall(junk)
                sock.shutdown(socket.SHUT_WR)
                assert sock.recv(10) == b""  # no "ok": not taken
        assert hand_over(address, Request("/y"), timeout=5)
        assert got == [Request("/y")]
    finally:
        first.close()


def test_a_runtime_folder_open_to_others_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "runtime"
    (shared / "sparrow").mkdir(parents=True)
    os.chmod(shared / "sparrow", 0o777)
    with pytest.raises(InstanceError, match="open to other users"):
        runtime_folder({"XDG_RUNTIME_DIR": str(shared)})
