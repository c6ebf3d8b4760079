"""Two runs checkpointing one workspace at once: threads and processes."""

import subprocess
import sys
import threading
import time
from pathlib import Path

import pygit2

from server.core.paths import Paths
from server.engine.checkpoints import manifest as manifests
from server.engine.checkpoints.lock import workspace_lock
from server.engine.checkpoints.prune import checkpoint_refs
from tests.conftest import require_program
from tests.engine.checkpoints.helpers import git, make_store

ROUNDS = 15


def test_the_lock_excludes_other_threads(tmp_path: Path) -> None:
    lock = tmp_path / "w.lock"
    inside: list[str] = []
    overlap = threading.Event()

    def worker(name: str) -> None:
        for _ in range(20):
            with workspace_lock(lock):
                inside.append(name)
                if len(inside) > 1:
                    overlap.set()
                time.sleep(0.0005)
                inside.remove(name)

    threads = [threading.Thread(target=worker, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not overlap.is_set()


def test_the_lock_excludes_other_processes(tmp_path: Path) -> None:
    lock = tmp_path / "w.lock"
    probe = (
        "import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDWR)\n"
        "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept OSError:\n"
        "    print('busy')\nelse:\n    print('free')\n"
    )
    with workspace_lock(lock):
        held = subprocess.run([sys.executable, "-c", probe, str(lock)], capture_output=True)
    after = subprocess.run([sys.executable, "-c", probe, str(lock)], capture_output=True)
    assert (held.stdout, after.stdout) == (b"busy\n", b"free\n")


def _check_consistent(paths: Paths, workspace: Path, expected: int) -> None:
    store, cps = make_store(paths)
    try:
        listed = cps.list(workspace)
        shadow = cps.shadow(workspace)
        repo = pygit2.Repository(str(shadow.gitdir))
        assert len(listed) == expected == len(checkpoint_refs(repo))
        assert {c.id for c in listed} == set(checkpoint_refs(repo))
        # Each checkpoint holds the value its writer wrote just before taking it.
        for checkpoint in listed:
            tree = repo.get(checkpoint.commit).tree  # type: ignore[union-attr]
            name, _, number = checkpoint.tool.partition("#")
            assert (tree / f"{name}.txt").data == number.encode()  # type: ignore[union-attr]
        # The manifest agrees with a from-scratch capture of the workspace.
        tree = manifests.load(shadow.manifest_path).tree
        manifests.forget(shadow.manifest_path)
        shadow.manifest_path.unlink()
        final = cps.create(workspace, run_id="check", turn=0, tool="final")
        assert final.commit and repo.get(final.commit).tree_id.raw == tree  # type: ignore[union-attr]
        require_program("git")
        git(shadow.gitdir, "fsck", "--strict", "--no-dangling")
    finally:
        store.close()


def test_two_threads_checkpointing_at_once_stay_consistent(paths: Paths, workspace: Path) -> None:
    store, cps = make_store(paths)
    errors: list[BaseException] = []

    def run(name: str, hinted: bool) -> None:
        try:
            for n in range(ROUNDS):
                (workspace / f"{name}.txt").write_text(str(n))
                hint = [f"{name}.txt"] if hinted else None
                cps.create(workspace, run_id=name, turn=n, tool=f"{name}#{n}", changed_paths=hint)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=run, args=("a", True)),
        threading.Thread(target=run, args=("b", False)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    assert errors == []
    _check_consistent(paths, workspace, 2 * ROUNDS)


CHILD = """
import sys
from pathlib import Path
from server.core.paths import resolve_paths
from server.core.settings import CheckpointSettings
from server.engine.checkpoints import CheckpointStore
from server.engine.store import Store
workspace = Path(sys.argv[1])
paths = resolve_paths().ensure()
store = Store(paths.database)
cps = CheckpointStore(paths, CheckpointSettings(), store)
print("ready", flush=True)
for n in range(int(sys.argv[2])):
    (workspace / "child.txt").write_text(str(n))
    cps.create(workspace, run_id="child", turn=n, tool=f"child#{n}")
store.close()
"""


def test_a_second_process_checkpointing_at_once_stays_consistent(
    paths: Paths, workspace: Path
) -> None:
    store, cps = make_store(paths)
    (workspace / "parent.txt").write_text("")
    cps.create(workspace, run_id="parent", turn=-1, tool="parent#")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(workspace), str(ROUNDS)],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    for n in range(ROUNDS):
        (workspace / "parent.txt").write_text(str(n))
        cps.create(workspace, run_id="parent", turn=n, tool=f"parent#{n}")
    assert child.wait(timeout=60) == 0
    child.stdout.close()
    store.close()
    _check_consistent(paths, workspace, 2 * ROUNDS + 1)
