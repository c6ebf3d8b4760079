import os
from pathlib import Path

from server.core.paths import Paths
from server.engine.checkpoints.shadow import locate, touch_stamp, workspace_key


def test_one_bare_repository_per_workspace_under_the_state_folder(
    paths: Paths, workspace: Path, tmp_path: Path
) -> None:
    shadow = locate(paths.checkpoints, workspace)
    assert shadow.gitdir == paths.checkpoints / f"{workspace_key(workspace)}.git"
    assert shadow.lock_path == paths.checkpoints / f"{workspace_key(workspace)}.lock"
    assert workspace_key(workspace) == workspace_key(Path(str(workspace)))
    assert workspace_key(workspace) != workspace_key(tmp_path)
    assert not shadow.exists()
    repo = shadow.open()
    assert repo.workdir.rstrip("/") == str(workspace)
    assert repo.config["gc.auto"] == "0"
    repo.free()
    assert shadow.exists() and os.listdir(workspace) == []  # no .git file in the workspace
    assert (shadow.state_dir / "workspace").read_text() == f"{workspace}\n"
    assert "worktree" not in (shadow.gitdir / "config").read_text()


def test_the_stamp_follows_the_file_system_clock(paths: Paths, workspace: Path) -> None:
    shadow = locate(paths.checkpoints, workspace)
    first = touch_stamp(shadow)
    probe = workspace / "probe"
    probe.write_text("x")
    assert probe.stat().st_mtime_ns >= first
    assert touch_stamp(shadow) >= first
