"""Writing git pack files (version 2) and their index, in Python.

A first checkpoint of a big workspace writes tens of thousands of blobs; as
loose objects that is one small file each (slow, and at least one disk block
each). Written into one pack they cost one sequential file. No deltas: each
object is zlib-compressed on its own, which keeps writing fast and simple.
git and libgit2 read these packs like their own (the tests check with
``git fsck``).
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from pathlib import Path
from typing import BinaryIO

OBJ_COMMIT, OBJ_TREE, OBJ_BLOB, OBJ_TAG = 1, 2, 3, 4
_COMPRESSION = 1  # fast; text still shrinks to a third or so
_BIG_OFFSET = 0x80000000


def _entry_header(kind: int, size: int) -> bytes:
    out = bytearray()
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def pack_index(entries: list[tuple[bytes, int, int]], pack_sha: bytes) -> bytes:
    """The ``.idx`` (version 2) of a pack: ``entries`` are (id, crc32, offset)."""
    entries = sorted(entries)
    fanout = [0] * 256
    for oid, _, _ in entries:
        fanout[oid[0]] += 1
    running = 0
    for i in range(256):
        running += fanout[i]
        fanout[i] = running
    small: list[int] = []
    large: list[int] = []
    for _, _, offset in entries:
        if offset < _BIG_OFFSET:
            small.append(offset)
        else:
            small.append(_BIG_OFFSET | len(large))
            large.append(offset)
    n = len(entries)
    body = b"".join(
        [
            b"\xfftOc",
            struct.pack(">I", 2),
            struct.pack(">256I", *fanout),
            b"".join(oid for oid, _, _ in entries),
            struct.pack(f">{n}I", *(crc for _, crc, _ in entries)),
            struct.pack(f">{n}I", *small),
            struct.pack(f">{len(large)}Q", *large),
            pack_sha,
        ]
    )
    return body + hashlib.sha1(body).digest()


class PackWriter:
    """Objects streamed into a temporary pack in ``pack_dir``; ``finish`` names
    it by its checksum and puts the index beside it, which is what makes the
    objects visible to readers (so a crash leaves only a stray temp file)."""

    def __init__(self, pack_dir: Path) -> None:
        pack_dir.mkdir(parents=True, exist_ok=True)
        self._dir = pack_dir
        self._tmp = pack_dir / f"tmp_pack_{os.getpid()}_{id(self):x}"
        self._file: BinaryIO = self._tmp.open("w+b")
        self._file.write(b"PACK" + struct.pack(">II", 2, 0))
        self._offset = 12
        self._entries: list[tuple[bytes, int, int]] = []

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, oid: bytes, kind: int, data: bytes) -> None:
        header = _entry_header(kind, len(data))
        body = zlib.compress(data, _COMPRESSION)
        self._file.write(header)
        self._file.write(body)
        self._entries.append((oid, zlib.crc32(body, zlib.crc32(header)), self._offset))
        self._offset += len(header) + len(body)

    def abort(self) -> None:
        self._file.close()
        self._tmp.unlink(missing_ok=True)

    def finish(self) -> Path | None:
        """Complete the pack; its path, or None when it holds nothing."""
        if not self._entries:
            self.abort()
            return None
        handle = self._file
        handle.seek(8)
        handle.write(struct.pack(">I", len(self._entries)))
        handle.flush()
        handle.seek(0)
        digest = hashlib.sha1()
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
        pack_sha = digest.digest()
        handle.seek(0, os.SEEK_END)
        handle.write(pack_sha)
        handle.close()
        name = f"pack-{pack_sha.hex()}"
        pack_path = self._dir / f"{name}.pack"
        os.replace(self._tmp, pack_path)
        idx_tmp = self._dir / f"tmp_idx_{os.getpid()}_{id(self):x}"
        idx_tmp.write_bytes(pack_index(self._entries, pack_sha))
        os.replace(idx_tmp, self._dir / f"{name}.idx")
        return pack_path


def read_pack_ids(idx_path: Path) -> list[bytes]:
    """The object ids a pack index lists (version 2 indexes only)."""
    data = idx_path.read_bytes()
    if data[:4] != b"\xfftOc" or struct.unpack(">I", data[4:8])[0] != 2:
        raise ValueError(f"{idx_path}: not a version 2 pack index")
    count = struct.unpack(">I", data[8 + 255 * 4 : 8 + 256 * 4])[0]
    start = 8 + 256 * 4
    return [data[start + 20 * i : start + 20 * (i + 1)] for i in range(count)]
