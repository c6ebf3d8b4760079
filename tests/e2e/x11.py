"""A few Xlib calls through ctypes: find a top-level window by title and ask it to
close, the way a window manager does when the user clicks the close button
(a WM_PROTOCOLS / WM_DELETE_WINDOW client message)."""

from __future__ import annotations

import ctypes
import ctypes.util
from ctypes import POINTER, byref, c_char_p, c_int, c_long, c_uint, c_ulong, c_void_p

CLIENT_MESSAGE = 33
NO_EVENT_MASK = 0


class _ClientMessage(ctypes.Structure):
    _fields_ = [
        ("type", c_int),
        ("serial", c_ulong),
        ("send_event", c_int),
        ("display", c_void_p),
        ("window", c_ulong),
        ("message_type", c_ulong),
        ("format", c_int),
        ("data", c_long * 5),
    ]


class _Event(ctypes.Union):
    _fields_ = [("xclient", _ClientMessage), ("pad", c_long * 24)]


def _xlib() -> ctypes.CDLL:
    lib = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
    lib.XOpenDisplay.restype = c_void_p
    lib.XOpenDisplay.argtypes = [c_char_p]
    lib.XDefaultRootWindow.restype = c_ulong
    lib.XDefaultRootWindow.argtypes = [c_void_p]
    lib.XQueryTree.argtypes = [
        c_void_p,
        c_ulong,
        POINTER(c_ulong),
        POINTER(c_ulong),
        POINTER(POINTER(c_ulong)),
        POINTER(c_uint),
    ]
    lib.XFetchName.argtypes = [c_void_p, c_ulong, POINTER(c_char_p)]
    lib.XFree.argtypes = [c_void_p]
    lib.XInternAtom.restype = c_ulong
    lib.XInternAtom.argtypes = [c_void_p, c_char_p, c_int]
    lib.XSendEvent.argtypes = [c_void_p, c_ulong, c_int, c_long, POINTER(_Event)]
    lib.XFlush.argtypes = [c_void_p]
    lib.XCloseDisplay.argtypes = [c_void_p]
    return lib


def _children(lib: ctypes.CDLL, display: int, window: int) -> list[int]:
    root, parent = c_ulong(), c_ulong()
    children = POINTER(c_ulong)()
    count = c_uint()
    listed = lib.XQueryTree(
        display, window, byref(root), byref(parent), byref(children), byref(count)
    )
    if not listed:
        return []
    found = [children[i] for i in range(count.value)]
    if children:
        lib.XFree(ctypes.cast(children, c_void_p))
    return found


def _name(lib: ctypes.CDLL, display: int, window: int) -> str | None:
    name = c_char_p()
    if not lib.XFetchName(display, window, byref(name)) or not name.value:
        return None
    text = name.value.decode("utf-8", "replace")
    lib.XFree(ctypes.cast(name, c_void_p))
    return text


def close_windows_titled(display_name: str, title: str) -> int:
    """Send WM_DELETE_WINDOW to every window titled ``title``; how many there were."""
    lib = _xlib()
    display = lib.XOpenDisplay(display_name.encode())
    if not display:
        raise OSError(f"cannot open X display {display_name}")
    try:
        protocols = lib.XInternAtom(display, b"WM_PROTOCOLS", 0)
        delete = lib.XInternAtom(display, b"WM_DELETE_WINDOW", 0)
        pending = [lib.XDefaultRootWindow(display)]
        sent = 0
        while pending:
            window = pending.pop()
            if _name(lib, display, window) == title:
                event = _Event()
                event.xclient.type = CLIENT_MESSAGE
                event.xclient.window = window
                event.xclient.message_type = protocols
                event.xclient.format = 32
                event.xclient.data[0] = delete
                event.xclient.data[1] = 0  # CurrentTime
                lib.XSendEvent(display, window, 0, NO_EVENT_MASK, byref(event))
                sent += 1
            pending.extend(_children(lib, display, window))
        lib.XFlush(display)
        return sent
    finally:
        lib.XCloseDisplay(display)
