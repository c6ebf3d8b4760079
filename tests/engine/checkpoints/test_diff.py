import pygit2
import pytest

from server.engine.checkpoints.diff import changed_paths, diff_trees, tree_changes
from server.engine.checkpoints.objects import FILEMODE_BLOB, FILEMODE_EXEC, update_tree


@pytest.fixture
def repo(tmp_path: object) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path) + "/r.git", bare=True)


def _blob(repo: pygit2.Repository, data: bytes) -> bytes:
    return bytes(repo.create_blob(data).raw)


def test_only_differing_subtrees_are_compared(repo: pygit2.Repository) -> None:
    one = _blob(repo, b"one\n")
    two = _blob(repo, b"two\n")
    base = update_tree(
        repo,
        None,
        {f"d{n}/f{m}": (one, FILEMODE_BLOB) for n in range(5) for m in range(5)},
    )
    after = update_tree(
        repo,
        base,
        {
            "d2/f3": (two, FILEMODE_BLOB),
            "d4": None,
            "d4/f0": None,
            "d1/f1": (one, FILEMODE_EXEC),
            "new/x": (two, FILEMODE_BLOB),
        },
    )
    changes = tree_changes(repo, base, after)
    assert [(p, a is None, b is None) for p, a, b in changes] == [
        ("d1/f1", False, False),
        ("d2/f3", False, False),
        ("d4/f0", False, True),
        ("new/x", True, False),
    ]
    assert changed_paths(repo, base, base) == []
    assert len(changed_paths(repo, None, base)) == 25


def test_a_folder_replaced_by_a_file_is_both_deleted_and_added(repo: pygit2.Repository) -> None:
    blob = _blob(repo, b"x")
    before = update_tree(repo, None, {"p/inner": (blob, FILEMODE_BLOB)})
    after = update_tree(repo, before, {"p": (blob, FILEMODE_BLOB), "p/inner": None})
    diffs = diff_trees(repo, before, after)
    assert [(d.path, d.status) for d in diffs] == [("p", "added"), ("p/inner", "deleted")]


def test_text_binary_and_mode_diffs(repo: pygit2.Repository) -> None:
    before = update_tree(
        repo,
        None,
        {
            "t.txt": (_blob(repo, b"a\nb\nc\n"), FILEMODE_BLOB),
            "b.bin": (_blob(repo, b"\x00\x01"), FILEMODE_BLOB),
            "m.sh": (_blob(repo, b"echo\n"), FILEMODE_BLOB),
        },
    )
    after = update_tree(
        repo,
        before,
        {
            "t.txt": (_blob(repo, b"a\nB\nc\n"), FILEMODE_BLOB),
            "b.bin": (_blob(repo, b"\x00\x02\x03"), FILEMODE_BLOB),
            "m.sh": (_blob(repo, b"echo\n"), FILEMODE_EXEC),
        },
    )
    diffs = {d.path: d for d in diff_trees(repo, before, after, context_lines=0)}
    assert diffs["t.txt"].status == "modified" and "-b\n+B\n" in diffs["t.txt"].patch
    assert "\n a\n" not in diffs["t.txt"].patch  # no context lines asked for
    assert diffs["b.bin"].binary and diffs["b.bin"].patch == ""
    assert diffs["m.sh"].status == "mode" and "new mode 100755" in diffs["m.sh"].patch
