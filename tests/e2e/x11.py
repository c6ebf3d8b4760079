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


class _Attributes(ctypes.Structure):
    _fields_ = [
        ("x", c_int),
        ("y", c_int),
        ("width", c_int),
        ("height", c_int),
        ("border_width", c_int),
        ("depth", c_int),
        ("visual", c_void_p),
        ("root", c_ulong),
        ("c_class", c_int),
        ("bit_gravity", c_int),
        ("win_gravity", c_int),
        ("backing_store", c_int),
        ("backing_planes", c_ulong),
        ("backing_pixel", c_ulong),
        ("save_under", c_int),
        ("colormap", c_ulong),
        ("map_installed", c_int),
        ("map_state", c_int),
        ("all_event_masks", c_long),
        ("your_event_mask", c_long),
        ("do_not_propagate_mask", c_long),
        ("override_redirect", c_int),
        ("screen", c_void_p),
    ]


IS_VIEWABLE = 2


def _shown_windows(lib: ctypes.CDLL, display: int, title: str) -> list[int]:
    lib.XGetWindowAttributes.argtypes = [c_void_p, c_ulong, POINTER(_Attributes)]
    found = []
    pending = [lib.XDefaultRootWindow(display)]
    while pending:
        window = pending.pop()
        if _name(lib, display, window) == title:
            attributes = _Attributes()
            if lib.XGetWindowAttributes(display, window, byref(attributes)) and (
                attributes.map_state == IS_VIEWABLE
            ):
                found.append(window)
        pending.extend(_children(lib, display, window))
    return found


def _open(lib: ctypes.CDLL, display_name: str) -> int:
    display = lib.XOpenDisplay(display_name.encode())
    if not display:
        raise OSError(f"cannot open X display {display_name}")
    return int(display)


def shown_windows_titled(display_name: str, title: str) -> int:
    """How many mapped (shown) top-level windows are titled ``title``."""
    lib = _xlib()
    display = _open(lib, display_name)
    try:
        return len(_shown_windows(lib, display, title))
    finally:
        lib.XCloseDisplay(display)


def geometry_of(display_name: str, title: str) -> tuple[int, int, int, int]:
    """(x, y, width, height) on the screen of the one shown window titled ``title``."""
    lib = _xlib()
    display = _open(lib, display_name)
    lib.XTranslateCoordinates.argtypes = [
        c_void_p, c_ulong, c_ulong, c_int, c_int, POINTER(c_int), POINTER(c_int), POINTER(c_ulong)
    ]  # fmt: skip
    try:
        (window,) = _shown_windows(lib, display, title)
        attributes = _Attributes()
        lib.XGetWindowAttributes(display, window, byref(attributes))
        x, y, child = c_int(), c_int(), c_ulong()
        root = lib.XDefaultRootWindow(display)
        lib.XTranslateCoordinates(display, window, root, 0, 0, byref(x), byref(y), byref(child))
        return x.value, y.value, attributes.width, attributes.height
    finally:
        lib.XCloseDisplay(display)


def move_resize(display_name: str, title: str, x: int, y: int, width: int, height: int) -> None:
    """Move and resize the shown window titled ``title``, as a window manager would."""
    lib = _xlib()
    display = _open(lib, display_name)
    lib.XMoveResizeWindow.argtypes = [c_void_p, c_ulong, c_int, c_int, c_uint, c_uint]
    try:
        (window,) = _shown_windows(lib, display, title)
        lib.XMoveResizeWindow(display, window, x, y, width, height)
        lib.XFlush(display)
    finally:
        lib.XCloseDisplay(display)


def _xtest() -> ctypes.CDLL:
    lib = ctypes.CDLL(ctypes.util.find_library("Xtst") or "libXtst.so.6")
    lib.XTestFakeMotionEvent.argtypes = [c_void_p, c_int, c_int, c_int, c_ulong]
    lib.XTestFakeButtonEvent.argtypes = [c_void_p, c_uint, c_int, c_ulong]
    lib.XTestFakeKeyEvent.argtypes = [c_void_p, c_uint, c_int, c_ulong]
    return lib


KEYSYMS = {"Down": 0xFF54, "Up": 0xFF52, "Return": 0xFF0D, "Escape": 0xFF1B}


def click_at(display_name: str, x: int, y: int) -> None:
    """A real left click at (x, y) of the screen, through the XTEST extension."""
    lib, test = _xlib(), _xtest()
    display = _open(lib, display_name)
    try:
        test.XTestFakeMotionEvent(display, -1, x, y, 0)
        test.XTestFakeButtonEvent(display, 1, 1, 0)
        test.XTestFakeButtonEvent(display, 1, 0, 0)
        lib.XFlush(display)
    finally:
        lib.XCloseDisplay(display)


def press_keys(display_name: str, *names: str) -> None:
    """Real key presses (``Down``, ``Up``, ``Return``, ``Escape``) through XTEST."""
    lib, test = _xlib(), _xtest()
    lib.XKeysymToKeycode.argtypes = [c_void_p, c_ulong]
    lib.XKeysymToKeycode.restype = ctypes.c_ubyte
    display = _open(lib, display_name)
    try:
        for name in names:
            code = lib.XKeysymToKeycode(display, KEYSYMS[name])
            test.XTestFakeKeyEvent(display, code, 1, 0)
            test.XTestFakeKeyEvent(display, code, 0, 0)
            lib.XFlush(display)
    finally:
        lib.XCloseDisplay(display)
