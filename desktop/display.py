"""Whether there is a display to open the window on, asked before Qt is loaded.

Without one, Qt aborts the whole process with a message about its platform
plugin (often naming a library that is in fact installed). Sparrow says what
is missing in one line instead, and names ``--headless``.
"""

from __future__ import annotations

import os
import re
import socket
import sys
from collections.abc import Mapping
from pathlib import Path

NO_DISPLAY = (
    "Sparrow: no display to open its window on ({reason}); "
    "run `sparrow-desktop --headless` (or `make run ARGS=--headless`) "
    "and open the link it prints in a browser"
)
# Qt platforms that need no display server.
HEADLESS_PLATFORMS = frozenset({"offscreen", "minimal", "vnc", "eglfs", "linuxfb"})
_X_DISPLAY = re.compile(r"^(?P<host>[^:]*):(?P<number>\d+)(?:\.\d+)?$")
CONNECT_TIMEOUT = 2.0


def _x_reachable(display: str) -> bool:
    match = _X_DISPLAY.match(display)
    if match is None:
        return False
    host, number = match.group("host"), int(match.group("number"))
    if host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{number}"
        # Linux X servers listen on an abstract socket too; either will do.
        for address in ("\0" + path, path):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(CONNECT_TIMEOUT)
                try:
                    sock.connect(address)
                except OSError:
                    continue
                return True
        return False
    try:  # an X server over TCP (ssh -X forwards localhost:10 and up)
        socket.create_connection((host, 6000 + number), timeout=CONNECT_TIMEOUT).close()
    except OSError:
        return False
    return True


def _wayland_reachable(name: str, env: Mapping[str, str]) -> bool:
    path = Path(name) if name.startswith("/") else Path(env.get("XDG_RUNTIME_DIR", "")) / name
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(str(path))
        except OSError:
            return False
    return True


def missing_display(
    env: Mapping[str, str] | None = None, platform: str | None = None
) -> str | None:
    """Why no window can open here (a short reason), or None when one can."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux") and "bsd" not in platform:
        return None  # macOS and Windows always have their own display
    qpa = env.get("QT_QPA_PLATFORM", "").split(":")[0].strip().lower()
    if qpa in HEADLESS_PLATFORMS:
        return None
    x_display = env.get("DISPLAY", "").strip()
    wayland = env.get("WAYLAND_DISPLAY", "").strip()
    if not x_display and not wayland:
        return "neither DISPLAY nor WAYLAND_DISPLAY is set"
    if wayland and _wayland_reachable(wayland, env):
        return None
    if x_display and _x_reachable(x_display):
        return None
    shown = " or ".join(
        f"{name}={value}"
        for name, value in (("WAYLAND_DISPLAY", wayland), ("DISPLAY", x_display))
        if value
    )
    return f"nothing answers at {shown}"
