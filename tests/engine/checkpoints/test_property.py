"""Random edits, checkpoints and rewinds: a rewind always puts back exactly
the checkpoint's files (bytes, executable bit, symlinks), leaves ignored and
skipped files alone, and never changes the user's .git or a nested repository.

The path pool is shaped so the expected result stays simple to state: files
over the size cap only ever live at the ``BIG`` paths (never folders of other
paths), ignored files only under ``ignored/`` and as ``*.log`` at the root.
Ordinary paths may turn from file to folder and back (``d1`` vs ``d1/c``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.core.paths import Paths
from server.engine.checkpoints import Checkpoint
from tests.engine.checkpoints.helpers import State, files_of, hash_folder, make_store

CAP = 64
NORMAL = ["a.txt", "b.bin", "d1", "d1/c", "d1/d2/e", "d1/d2/f", "g/h/i.sh", "g/j"]
BIG = ["big1", "deep/big2"]
IGNORED = ["ignored/i.txt", "n.log"]

contents = st.one_of(
    st.binary(max_size=CAP),  # binary, NUL bytes and all
    st.text(alphabet="ab\n\r\t é", max_size=40).map(str.encode),
)
# Over the cap half the time (hypothesis favours short values if left alone).
big_contents = st.one_of(st.binary(max_size=CAP), st.binary(min_size=CAP + 1, max_size=2 * CAP))
initial = st.fixed_dictionaries(
    {},
    optional={
        **{path: st.tuples(contents, st.booleans()) for path in NORMAL + IGNORED},
        **{path: st.tuples(big_contents, st.booleans()) for path in BIG},
    },
)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(NORMAL), contents, st.booleans()),
        st.tuples(
            st.just("write"), st.sampled_from(BIG), st.binary(max_size=2 * CAP), st.booleans()
        ),
        st.tuples(st.just("write"), st.sampled_from(IGNORED), contents, st.booleans()),
        st.tuples(st.just("delete"), st.sampled_from(NORMAL + BIG + IGNORED)),
        st.tuples(st.just("rename"), st.sampled_from(NORMAL), st.sampled_from(NORMAL)),
        st.tuples(st.just("chmod"), st.sampled_from(NORMAL + BIG), st.booleans()),
        st.tuples(st.just("symlink"), st.sampled_from(NORMAL), st.sampled_from(NORMAL)),
        st.tuples(st.just("user-git"), st.binary(max_size=16)),
        st.tuples(st.just("checkpoint"), st.booleans()),
        st.tuples(st.just("rewind"), st.integers(min_value=0, max_value=30)),
    ),
    max_size=30,
)


def _clear_way(root: Path, rel: str) -> None:
    """Make room for a file at ``rel``: files where its folders go, a folder where it goes."""
    parts = rel.split("/")
    for i in range(1, len(parts)):
        parent = root.joinpath(*parts[:i])
        if parent.is_symlink() or parent.is_file():
            parent.unlink()
    target = root / rel
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)


def _remove(root: Path, rel: str) -> bool:
    target = root / rel
    if target.is_symlink() or target.is_file():
        target.unlink()
        return True
    return False


@dataclass
class Model:
    root: Path
    touched: set[str] = field(default_factory=set)
    taken: list[tuple[Checkpoint, State]] = field(default_factory=list)

    def apply(self, op: tuple[object, ...]) -> None:
        kind = op[0]
        if kind == "write":
            _, rel, data, executable = op
            assert isinstance(rel, str) and isinstance(data, bytes)
            _clear_way(self.root, rel)
            _remove(self.root, rel)
            (self.root / rel).write_bytes(data)
            (self.root / rel).chmod(0o755 if executable else 0o644)
            self.touched.add(rel)
        elif kind == "delete":
            assert isinstance(op[1], str)
            self.touched.add(op[1])
            _remove(self.root, op[1])
        elif kind == "rename":
            src, dst = op[1], op[2]
            assert isinstance(src, str) and isinstance(dst, str)
            source = self.root / src
            if src == dst or not (source.is_file() or source.is_symlink()):
                return
            if dst.startswith(src + "/") or src.startswith(dst + "/"):
                return
            data = source.read_bytes() if not source.is_symlink() else None
            link = os.readlink(source) if source.is_symlink() else None
            mode = source.lstat().st_mode
            source.unlink()
            _clear_way(self.root, dst)
            _remove(self.root, dst)
            if link is not None:
                (self.root / dst).symlink_to(link)
            else:
                assert data is not None
                (self.root / dst).write_bytes(data)
                (self.root / dst).chmod(mode & 0o777)
            self.touched |= {src, dst}
        elif kind == "chmod":
            target = self.root / str(op[1])
            if target.is_file() and not target.is_symlink():
                target.chmod(0o755 if op[2] else 0o644)
                self.touched.add(str(op[1]))
        elif kind == "user-git":
            # The user works with git and in the nested repository meanwhile;
            # no rewind may undo that.
            assert isinstance(op[1], bytes)
            (self.root / ".git" / "index").write_bytes(b"DIRC" + op[1])
            (self.root / ".git" / "refs" / "heads" / f"b{len(op[1])}").write_text("1" * 40)
            (self.root / "vendor" / "lib.py").write_bytes(op[1])
            (self.root / "vendor" / f"new{len(op[1])}.py").write_bytes(op[1])
        elif kind == "symlink":
            rel, pointee = str(op[1]), str(op[2])
            _clear_way(self.root, rel)
            _remove(self.root, rel)
            (self.root / rel).symlink_to(pointee)
            self.touched.add(rel)


def _is_ignored(path: str) -> bool:
    return path.startswith("ignored/") or ("/" not in path and path.endswith(".log"))


def _is_big(entry: tuple[str, bytes, bool]) -> bool:
    return entry[0] == "file" and len(entry[1]) > CAP


def _expected(before: State, target: State, skipped_then: set[str]) -> State:
    """The workspace after rewinding to a checkpoint whose files were ``target``."""
    tracked_then = {p: e for p, e in target.items() if not _is_ignored(p) and not _is_big(e)}
    result: State = {}
    for path, entry in before.items():
        if _is_ignored(path) or _is_big(entry) or path in skipped_then:
            result[path] = entry  # never touched
    for path, entry in tracked_then.items():
        if path not in result:
            result[path] = entry
    return result


def _user_git(root: Path) -> None:
    (root / ".git" / "refs" / "heads").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".git" / "refs" / "heads" / "main").write_text("0" * 40 + "\n")
    (root / ".git" / "index").write_bytes(b"DIRC\x00\x00\x00\x02" + os.urandom(32))
    (root / ".git" / "info").mkdir()
    (root / ".git" / "info" / "exclude").write_text("# nothing\n")
    (root / "vendor" / ".git").mkdir(parents=True)
    (root / "vendor" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "vendor" / "lib.py").write_text("nested repository file\n")
    (root / ".gitignore").write_text("ignored/\n/*.log\n")


@settings(
    # CI runs 100; `SPARROW_PROPERTY_EXAMPLES=2000 pytest ...` searches longer.
    max_examples=int(os.environ.get("SPARROW_PROPERTY_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(initial=initial, ops=ops)
def test_rewind_restores_any_checkpoint_byte_for_byte(
    initial: dict[str, tuple[bytes, bool]], ops: list[tuple[object, ...]]
) -> None:
    with tempfile.TemporaryDirectory(prefix="sparrow-prop-") as tmp:
        base = Path(tmp)
        paths = Paths(base / "c", base / "s", base / "d", base / "k").ensure()
        root = base / "ws"
        root.mkdir()
        _user_git(root)
        dot_git, nested = hash_folder(root / ".git"), hash_folder(root / "vendor")
        store, checkpoints = make_store(paths, max_file_bytes=CAP)
        model = Model(root)
        skip = {".git", "vendor"}

        def checkpoint(hinted: bool) -> None:
            hint = sorted(model.touched) if hinted else None
            taken = checkpoints.create(
                root, run_id="p", turn=len(model.taken), tool="t", changed_paths=hint
            )
            model.taken.append((taken, files_of(root, skip)))
            model.touched.clear()

        def rewind(index: int) -> None:
            target, state = model.taken[index % len(model.taken)]
            skipped_then = {s.path for s in target.skipped}
            expected = _expected(files_of(root, skip), state, skipped_then)
            repos = hash_folder(root / ".git"), hash_folder(root / "vendor")
            checkpoints.rewind(root, target.id)
            assert files_of(root, skip) == expected
            assert (hash_folder(root / ".git"), hash_folder(root / "vendor")) == repos
            model.touched.clear()

        try:
            for rel, (data, executable) in initial.items():
                model.apply(("write", rel, data, executable))
            checkpoint(False)
            for op in ops:
                if op[0] == "checkpoint":
                    checkpoint(bool(op[1]))
                elif op[0] == "rewind":
                    assert isinstance(op[1], int)
                    rewind(op[1])
                else:
                    model.apply(op)
            checkpoint(True)
            for index in reversed(range(len(model.taken))):  # every checkpoint, newest first
                rewind(index)
            if not any(op[0] == "user-git" for op in ops):
                assert hash_folder(root / ".git") == dot_git
                assert hash_folder(root / "vendor") == nested
        finally:
            store.close()
