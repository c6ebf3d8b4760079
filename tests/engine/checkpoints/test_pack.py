import struct
from pathlib import Path

import pygit2

from server.engine.checkpoints.pack import (
    OBJ_BLOB,
    OBJ_TREE,
    PackWriter,
    _entry_header,
    pack_index,
    read_pack_ids,
)
from tests.conftest import require_program
from tests.engine.checkpoints.helpers import git


def test_packs_we_write_are_read_by_libgit2_and_git(tmp_path: Path) -> None:
    gitdir = tmp_path / "repo.git"
    repo = pygit2.init_repository(str(gitdir), bare=True)
    blobs = [b"", b"small", bytes(range(256)) * 300, b"x" * 5000]
    writer = PackWriter(gitdir / "objects" / "pack")
    ids = []
    for data in blobs:
        oid = pygit2.hash(data)
        ids.append(oid)
        writer.add(oid.raw, OBJ_BLOB, data)
    entry = b"100644 a\x00" + ids[1].raw
    tree_id = pygit2.Oid(
        raw=__import__("hashlib").sha1(b"tree %d\x00" % len(entry) + entry).digest()
    )
    writer.add(tree_id.raw, OBJ_TREE, entry)
    pack = writer.finish()
    assert pack is not None and pack.with_suffix(".idx").is_file()
    assert sorted(read_pack_ids(pack.with_suffix(".idx"))) == sorted(
        [i.raw for i in ids] + [tree_id.raw]
    )
    reopened = pygit2.Repository(str(gitdir))
    assert [reopened[i].data for i in ids] == blobs  # type: ignore[union-attr]
    tree = reopened[tree_id]
    assert isinstance(tree, pygit2.Tree) and tree["a"].id == ids[1]
    require_program("git")
    verified = git(gitdir, "verify-pack", "-v", str(pack.with_suffix(".idx")))
    assert f"{ids[2]} blob   76800" in verified
    git(gitdir, "fsck", "--strict")
    repo.free()


def test_an_empty_pack_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "pack"
    folder.mkdir()
    writer = PackWriter(folder)
    assert writer.finish() is None and list(folder.iterdir()) == []


def test_entry_headers_encode_type_and_size() -> None:
    assert _entry_header(OBJ_BLOB, 5) == bytes([0x35])
    assert _entry_header(OBJ_BLOB, 100) == bytes([0xB4, 0x06])
    assert _entry_header(OBJ_TREE, 1 << 20) == bytes([0xA0, 0x80, 0x80, 0x04])


def test_offsets_past_two_gigabytes_use_the_large_offset_table() -> None:
    entries = [(b"\x01" * 20, 7, 12), (b"\x02" * 20, 8, 3 << 30)]
    index = pack_index(entries, b"\x00" * 20)
    body = index[8 + 1024 + 2 * 20 + 2 * 4 :]
    small = struct.unpack(">2I", body[:8])
    assert small == (12, 0x80000000)
    assert struct.unpack(">Q", body[8:16])[0] == 3 << 30
