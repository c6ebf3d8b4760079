"""Which paths of a workspace changed since its last checkpoint, told by the
kernel (Linux inotify) instead of found by a stat scan of every file.

Only ever a shortcut: whenever the account could be incomplete — events lost
to a full queue, a watched folder moved, a manifest written by another
process, hard links (a write through another link raises no event here), a
file system whose changes may come from elsewhere (network, FUSE) — the
checkpoint falls back to the full stat scan, and the watch is armed again
before that scan starts. The scan watches each folder just before it lists
it, so a change after the listing raises an event; a folder watched only
after its scan is scanned again at the next checkpoint, so a change in
between is not lost.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

_IN_MODIFY = 0x2
_IN_ATTRIB = 0x4
_IN_CLOSE_WRITE = 0x8
_IN_MOVED_FROM = 0x40
_IN_MOVED_TO = 0x80
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = 0o2000000
_MASK: Final = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
    | _IN_DONT_FOLLOW
)
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name
# File systems whose every change passes through this kernel: elsewhere
# (NFS, SMB, FUSE, 9p...) another machine's writes raise no event here.
LOCAL_FILE_SYSTEMS: Final = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "f2fs", "zfs", "bcachefs", "jfs"}
)
# inotify instances are few (128 per user by default): keep a handful.
MAX_WATCHED_WORKSPACES: Final = 8


class WatchBroken(OSError):
    """The watch can no longer vouch for what changed."""


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        libc.inotify_init1  # noqa: B018  # present?
        libc.inotify_add_watch  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()


def file_system_of(path: str) -> str | None:
    """The type of the file system holding ``path`` (Linux), from mountinfo."""
    try:
        text = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    best, kind = "", None
    for line in text.splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        mount_point = fields[4].replace("\\040", " ")
        after = line.split(" - ", 1)[1].split()
        inside = path == mount_point or path.startswith(mount_point.rstrip("/") + "/")
        if inside and len(mount_point) >= len(best) and after:
            best, kind = mount_point, after[0]
    return kind


class Watch:
    """One inotify instance over the folders of one workspace."""

    def __init__(self, root: str) -> None:
        if _LIBC is None:
            raise WatchBroken("inotify is not available here")
        fd = _LIBC.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            raise WatchBroken(ctypes.get_errno(), "inotify_init1 failed")
        self.fd = fd
        self.root = root
        self.dirs: dict[str, int] = {}  # workspace-relative folder -> watch descriptor
        self._paths: dict[int, str] = {}

    def add(self, folder: str) -> None:
        """Watch ``folder`` (relative; "" is the root); WatchBroken if the kernel refuses."""
        if folder in self.dirs:
            return
        assert _LIBC is not None
        target = os.path.join(self.root, folder) if folder else self.root
        wd = _LIBC.inotify_add_watch(self.fd, os.fsencode(target), _MASK)
        if wd < 0:
            code = ctypes.get_errno()
            if code in (errno.ENOENT, errno.ENOTDIR):
                return  # gone since it was scanned: the next scan knows
            raise WatchBroken(code, f"cannot watch {target}: {os.strerror(code)}")
        self.dirs[folder] = wd
        self._paths[wd] = folder

    def drain(self) -> set[str]:
        """The paths with an event since the last drain; WatchBroken if some were lost."""
        changed: set[str] = set()
        while True:
            try:
                data = os.read(self.fd, 64 * 1024)
            except BlockingIOError:
                return changed
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, size = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size
                name = data[offset : offset + size].rstrip(b"\0")
                offset += size
                self._event(wd, mask, os.fsdecode(name), changed)

    def _event(self, wd: int, mask: int, name: str, changed: set[str]) -> None:
        if mask & _IN_Q_OVERFLOW:
            raise WatchBroken("the kernel's event queue overflowed")
        folder = self._paths.get(wd)
        if mask & _IN_IGNORED:
            if folder is not None:
                del self._paths[wd]
                self.dirs.pop(folder, None)
            return
        if folder is None:
            return
        if mask & _IN_MOVE_SELF or (mask & _IN_DELETE_SELF and folder == ""):
            # Its path is not what the watch says any more (or the workspace is gone).
            raise WatchBroken(f"the watched folder '{folder or '.'}' moved")
        if mask & _IN_DELETE_SELF:
            changed.add(folder)
        elif name:
            changed.add(f"{folder}/{name}" if folder else name)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


@dataclass
class _Watched:
    watch: Watch
    manifest_stamp: tuple[int, int, int] | None = None
    # Watched only after their scan: looked at again at the next checkpoint.
    fresh: set[str] = field(default_factory=set)
    # The kernel refused a folder during the scan (the watch limit).
    refused: bool = False

    def add_before_listing(self, folder: str) -> None:
        """A folder about to be listed by the scan: watched first, so that a
        change after its listing raises an event and it need not be looked at
        again. Never raises: a refusal turns the watch off after the scan."""
        if self.refused:
            return
        try:
            self.watch.add(folder)
        except WatchBroken:
            self.refused = True


class Watches:
    """This process's watches, one per recently checkpointed workspace."""

    def __init__(self) -> None:
        self._watched: OrderedDict[str, _Watched] = OrderedDict()
        self._refused: set[str] = set()  # workspaces a watch cannot vouch for
        # Checkpoints of different workspaces run in worker threads at once.
        self._lock = threading.Lock()
        self.served = 0  # checkpoints that the watch spared a full scan

    def hint(self, root: str, manifest_path: Path, known_dirs: Iterable[str]) -> list[str] | None:
        """The paths to look at for the next checkpoint, or None for a full scan
        (the watch is then armed again, over ``known_dirs``, before the scan)."""
        with self._lock:
            return self._hint(root, manifest_path, known_dirs)

    def _hint(self, root: str, manifest_path: Path, known_dirs: Iterable[str]) -> list[str] | None:
        state = self._watched.get(root)
        # The manifest is the one this process wrote after its last drain: else
        # another process checkpointed, and its scan is the base now.
        ours = state is not None and state.manifest_stamp == _stamp(manifest_path)
        if state is not None and ours and state.manifest_stamp is not None:
            try:
                changed = state.watch.drain()
            except WatchBroken:
                pass
            else:
                self._watched.move_to_end(root)
                self.served += 1
                return sorted(changed | state.fresh)
        self._arm(root, known_dirs)
        return None

    def _arm(self, root: str, known_dirs: Iterable[str]) -> None:
        self.forget(root)
        if root in self._refused or _LIBC is None:
            return
        if file_system_of(root) not in LOCAL_FILE_SYSTEMS:
            self._refused.add(root)
            return
        try:
            watch = Watch(root)
        except WatchBroken:
            return
        try:
            for folder in ("", *known_dirs):
                watch.add(folder)
        except WatchBroken:
            watch.close()
            self._refused.add(root)  # the watch limit: stat scans it is
            return
        self._watched[root] = _Watched(watch)
        while len(self._watched) > MAX_WATCHED_WORKSPACES:
            _, oldest = self._watched.popitem(last=False)
            oldest.watch.close()

    def before_listing(self, root: str) -> Callable[[str], None] | None:
        """What the scan of ``root`` calls before it lists a folder, when ``root``
        is watched. One workspace's checkpoints run one at a time (its lock)."""
        with self._lock:
            state = self._watched.get(root)
        return None if state is None else state.add_before_listing

    def captured(
        self, root: str, manifest_path: Path, dirs: Iterable[str], *, linked: bool
    ) -> None:
        """After a checkpoint wrote its manifest: watch its new folders too."""
        with self._lock:
            self._captured(root, manifest_path, dirs, linked=linked)

    def _captured(
        self, root: str, manifest_path: Path, dirs: Iterable[str], *, linked: bool
    ) -> None:
        state = self._watched.get(root)
        if state is None:
            return
        if linked or state.refused:
            # A hard-linked file changes without an event when written elsewhere;
            # a folder the kernel would not watch changes without one too.
            self.forget(root)
            self._refused.add(root)
            return
        fresh = {folder for folder in dirs if folder not in state.watch.dirs}
        try:
            for folder in fresh:
                state.watch.add(folder)
        except WatchBroken:
            self.forget(root)
            self._refused.add(root)
            return
        state.fresh = fresh
        state.manifest_stamp = _stamp(manifest_path)

    def forget(self, root: str) -> None:
        """Drop the watch of ``root``: its next checkpoint scans everything."""
        state = self._watched.pop(root, None)
        if state is not None:
            state.watch.close()


# One registry per process: the runs of a desktop app share their workspaces' watches.
WATCHES = Watches()
