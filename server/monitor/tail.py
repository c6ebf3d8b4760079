"""A cursor on one growing JSONL file: read backwards from its end once, then
only the bytes appended since.

The first read walks the file backwards in blocks from its end and hands
complete lines, newest first, to a visitor that says when it has seen enough:
a 400 MB transcript costs what its last few lines cost. After that, only
appended bytes are read. A line is complete when its newline is written; a
partial last line is left where it is and read once it is complete. A file
that shrank, was replaced (another inode) or rewritten under the cursor (the
byte before the cursor is no longer a newline) is read again from its tail.

Stdlib only, and cheap to import: the Claude Code hook runs this after every
tool call.
"""

from __future__ import annotations

import os
from collections.abc import Callable

BLOCK = 64 * 1024
FORWARD_CHUNK = 1024 * 1024
# A backward scan gives up past this many bytes: a tail with no usable line in
# its last 64 MiB is treated as having none (the fallback heuristic takes over).
MAX_BACKWARD = 64 * 1024 * 1024

# The outcomes of ``Tail.check``.
SAME = "same"
GROWN = "grown"
RESET = "reset"
MISSING = "missing"

# A visitor of backward lines returns True when it has seen enough.
BackwardVisitor = Callable[[bytes], bool]
ForwardVisitor = Callable[[bytes], None]


class Tail:
    """Where reading of ``path`` stands. Small on purpose: one per watched file."""

    __slots__ = ("bytes_read", "dev", "ino", "mtime_ns", "offset", "path", "scanned", "size")

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = -1  # just past the last complete line read; -1 before the first read
        self.scanned = 0  # bytes after ``offset`` known to hold no newline yet
        self.ino = 0
        self.dev = 0
        self.size = 0
        self.mtime_ns = 0
        self.bytes_read = 0  # total read from disk, for tests and benches

    def start_at_beginning(self) -> bool:
        """Read the file from its first byte on (for a file followed from its
        start, not its tail). False when it cannot be read (yet)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        self.ino, self.dev = st.st_ino, st.st_dev
        self.offset = self.scanned = self.size = self.mtime_ns = 0
        return True

    def check(self) -> str:
        """What changed since the last read: SAME, GROWN, RESET (read anew) or MISSING."""
        try:
            st = os.stat(self.path)
        except OSError:
            return MISSING
        if self.offset < 0 or st.st_ino != self.ino or st.st_dev != self.dev:
            return RESET
        if st.st_size < self.offset + self.scanned:
            return RESET
        if st.st_size == self.size and st.st_mtime_ns == self.mtime_ns:
            return SAME
        if st.st_size == self.offset + self.scanned and st.st_mtime_ns != self.mtime_ns:
            # Touched or rewritten in place at the same length: verify below on the next growth.
            self.mtime_ns = st.st_mtime_ns
            return SAME
        return GROWN

    def scan_backward(self, visit: BackwardVisitor, max_bytes: int = MAX_BACKWARD) -> bool:
        """Hand complete lines to ``visit``, last first, until it returns True.

        Sets the cursor just past the last complete line, whatever the visitor
        saw. Returns False when the file cannot be read."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError:
            self.offset = -1
            return False
        try:
            st = os.fstat(fd)
            self.ino, self.dev, self.size, self.mtime_ns = (
                st.st_ino,
                st.st_dev,
                st.st_size,
                st.st_mtime_ns,
            )
            self.offset = 0
            self.scanned = 0
            self._backward(fd, st.st_size, visit, max_bytes)
        except OSError:
            self.offset = -1
            return False
        finally:
            os.close(fd)
        return True

    def _backward(self, fd: int, size: int, visit: BackwardVisitor, max_bytes: int) -> None:
        position = size
        carry: list[bytes] = []  # the start of a line met in earlier blocks, newest last
        found_end = False  # the last newline (the end of the complete part) is known
        floor = max(0, size - max_bytes)
        while position > floor:
            start = max(floor, position - BLOCK)
            block = os.pread(fd, position - start, start)
            self.bytes_read += len(block)
            if len(block) < position - start:  # shrank while reading: stop, the next check resets
                return
            position = start
            cut = block.rfind(b"\n")
            if cut < 0:
                carry.append(block)
                continue
            if not found_end:
                found_end = True
                complete = start + cut + 1
                self.offset = complete
                self.scanned = size - complete
                carry.clear()  # the partial last line: read when it is complete
            else:
                tail = block[cut + 1 :]
                line = tail + b"".join(reversed(carry)) if carry else tail
                carry.clear()
                if line and visit(line):
                    return
            block = block[:cut]
            # Every line in ``block`` is whole except its first, which may begin earlier.
            end = len(block)
            while True:
                cut = block.rfind(b"\n", 0, end)
                if cut < 0:
                    break
                line = block[cut + 1 : end]
                if line and visit(line):
                    return
                end = cut
            if end:
                carry.append(block[:end])
        if not found_end:
            self.scanned = size  # no newline at all yet: one partial line
            return
        if carry and floor == 0:
            line = b"".join(reversed(carry))
            if line:
                visit(line)

    def scan_forward(self, visit: ForwardVisitor) -> bool:
        """Hand the complete lines appended since the last read to ``visit``, in order.

        Returns False when the file must be read anew (see ``check``)."""
        if self.offset < 0:
            return False
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError:
            return False
        try:
            st = os.fstat(fd)
            if st.st_ino != self.ino or st.st_dev != self.dev or st.st_size < self.offset:
                return False
            if self.offset > 0:
                # The byte before the cursor must still end a line: else it was rewritten.
                before = os.pread(fd, 1, self.offset - 1)
                self.bytes_read += 1
                if before != b"\n":
                    return False
            self.size, self.mtime_ns = st.st_size, st.st_mtime_ns
            self._forward(fd, st.st_size, visit)
        except OSError:
            return False
        finally:
            os.close(fd)
        return True

    def _forward(self, fd: int, size: int, visit: ForwardVisitor) -> None:
        while self.offset + self.scanned < size:
            # Look for the next newline only in bytes not searched before: a long
            # line written slowly is not re-read on every poll.
            look_from = self.offset + self.scanned
            chunk = os.pread(fd, min(FORWARD_CHUNK, size - look_from), look_from)
            self.bytes_read += len(chunk)
            if not chunk:
                return
            cut = chunk.rfind(b"\n")
            if cut < 0:
                self.scanned += len(chunk)
                continue
            if self.scanned:
                held = os.pread(fd, self.scanned, self.offset)
                self.bytes_read += len(held)
                data = held + chunk[: cut + 1]
            else:
                data = chunk[: cut + 1]
            self.offset += len(data)
            self.scanned = len(chunk) - cut - 1
            for line in data.split(b"\n"):
                if line:
                    visit(line)
