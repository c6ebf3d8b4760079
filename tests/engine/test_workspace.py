import os
from pathlib import Path

import pytest

from server.engine.workspace import OutsideWorkspace, WorkspaceError, open_workspace


def test_a_folder_opens_resolved(workspace: Path) -> None:
    assert open_workspace(str(workspace)).root == workspace.resolve()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "workspace not found"),
        (lambda p: (p / "f.txt").write_text("x") and p / "f.txt", "is a file, not a folder"),
        (lambda p: Path("   "), "no workspace given"),
    ],
)
def test_unusable_workspaces_are_clear_errors(tmp_path: Path, make: object, message: str) -> None:
    with pytest.raises(WorkspaceError, match=message):
        open_workspace(make(tmp_path))  # type: ignore[operator]


def test_paths_stay_inside_through_dotdot_absolute_and_symlinks(
    workspace: Path, tmp_path: Path
) -> None:
    ws = open_workspace(workspace)
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", workspace / "link")
    assert ws.resolve("a/../b.txt") == workspace.resolve() / "b.txt"
    assert ws.resolve(".") == workspace.resolve()
    for bad in ("../x", "/etc/passwd", "link/x", "a/../../x", "bad\x00name"):
        with pytest.raises(OutsideWorkspace):
            ws.resolve(bad)
