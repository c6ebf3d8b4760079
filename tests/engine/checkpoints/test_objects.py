from pathlib import Path

import pygit2
import pytest

from server.engine.checkpoints.objects import (
    FILEMODE_BLOB,
    FILEMODE_EXEC,
    FILEMODE_LINK,
    FILEMODE_TREE,
    PACK_MIN_OBJECTS,
    ObjectSink,
    serialize_tree,
    update_tree,
)


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "r.git"), bare=True)


def test_trees_are_serialised_exactly_as_libgit2_writes_them(repo: pygit2.Repository) -> None:
    blob = repo.create_blob(b"x")
    sub = repo.TreeBuilder()
    sub.insert("inner", blob, FILEMODE_BLOB)
    sub_id = sub.write()
    names = ["a", "a.b", "a-b", "a0", "b", "é", "Z"]
    builder = repo.TreeBuilder()
    mine: dict[str, tuple[bytes, int]] = {}
    for n, name in enumerate(names):
        mode = [FILEMODE_BLOB, FILEMODE_EXEC, FILEMODE_LINK][n % 3]
        builder.insert(name, blob, mode)
        mine[name] = (blob.raw, mode)
    builder.insert("a.dir", sub_id, FILEMODE_TREE)  # sorts as "a.dir/"
    builder.insert("ab", sub_id, FILEMODE_TREE)
    mine["a.dir"] = (sub_id.raw, FILEMODE_TREE)
    mine["ab"] = (sub_id.raw, FILEMODE_TREE)
    expected = repo[builder.write()]
    assert isinstance(expected, pygit2.Tree)
    assert serialize_tree(mine) == expected.read_raw()


@pytest.mark.parametrize("name", [".git", ".GIT", "a/b", "", "..", "nul\x00"])
def test_names_git_would_refuse_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="invalid name"):
        serialize_tree({name: (b"\x00" * 20, FILEMODE_BLOB)})


def test_many_new_objects_go_into_one_pack_few_stay_loose(repo: pygit2.Repository) -> None:
    pack_dir = Path(repo.path) / "objects" / "pack"
    few = ObjectSink(repo, pack_dir)
    ids = [few.blob(f"few {n}".encode()) for n in range(3)]
    few.finish()
    assert list(pack_dir.glob("*.pack")) == [] and all(pygit2.Oid(raw=i) in repo for i in ids)
    many = ObjectSink(repo, pack_dir)
    changes = {
        f"d{n % 7}/f{n}": (many.blob(f"many {n}".encode()), FILEMODE_BLOB)
        for n in range(PACK_MIN_OBJECTS)
    }
    tree = update_tree(repo, None, changes, many)
    many.finish()
    assert len(list(pack_dir.glob("*.pack"))) == 1
    assert (many.files_read, many.blobs_written) == (PACK_MIN_OBJECTS, PACK_MIN_OBJECTS)
    built = repo[pygit2.Oid(raw=tree)]
    assert isinstance(built, pygit2.Tree) and len(built) == 7
    again = ObjectSink(repo, pack_dir)
    again.blob(b"many 1")
    assert again.blobs_written == 0  # already stored
