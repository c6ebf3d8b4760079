"""Which addresses a port listens on, and which ports a process listens on (Linux /proc)."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

LISTEN = "0A"


def _hex_to_address(text: str) -> tuple[str, int]:
    address, port = text.split(":")
    raw = bytes.fromhex(address)
    if len(raw) == 4:
        host = socket.inet_ntop(socket.AF_INET, raw[::-1])
    else:  # /proc stores IPv6 as four host-order 32-bit words
        words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
        host = socket.inet_ntop(socket.AF_INET6, b"".join(words))
    return host, int(port, 16)


def _listeners() -> list[tuple[str, int, str]]:
    """(host, port, socket inode) of every listening TCP socket on this machine."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == LISTEN:
                host, port = _hex_to_address(fields[1])
                found.append((host, port, fields[9]))
    return found


def need_proc() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("reads the socket tables in /proc")


def listening_hosts(port: int) -> set[str]:
    """The local addresses on which ``port`` accepts connections."""
    return {host for host, p, _ in _listeners() if p == port}


def ports_of(pid: int) -> set[tuple[str, int]]:
    """The (host, port) pairs that process ``pid`` listens on."""
    inodes = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in fd_dir.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return {(host, port) for host, port, inode in _listeners() if inode in inodes}


def accepts(port: int) -> bool:
    """Whether something accepts TCP connections on 127.0.0.1:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        return sock.connect_ex(("127.0.0.1", port)) == 0
