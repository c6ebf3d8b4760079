from pathlib import Path

from server.engine.checkpoints.excludes import (
    NESTED_REPO,
    VIRTUALENV,
    excluded_by_content,
    excluded_dir,
    excluded_path,
    is_git_dir_name,
)


def test_folders_excluded_by_name() -> None:
    assert excluded_dir("web/node_modules", "node_modules") == "dependency folder (node_modules)"
    assert excluded_dir("a/__pycache__", "__pycache__") == ""  # silently
    assert excluded_dir(".sparrow/handoff", "handoff") == ""
    assert excluded_dir("docs/handoff", "handoff") is None
    assert excluded_dir("src", "src") is None
    assert is_git_dir_name(".git") and is_git_dir_name(".GIT")
    assert not is_git_dir_name(".github") and not is_git_dir_name(".gitignore")


def test_folders_excluded_by_what_they_hold() -> None:
    assert excluded_by_content({".git", "README"}) == NESTED_REPO
    assert excluded_by_content({"pyvenv.cfg", "bin"}) == VIRTUALENV
    assert excluded_by_content({"src", ".gitignore"}) is None


def test_paths_inside_excluded_parts(tmp_path: Path) -> None:
    root = tmp_path
    (root / "nested" / ".git").mkdir(parents=True)
    (root / "env").mkdir()
    (root / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / "node_modules").mkdir()
    (root / "src").mkdir()
    assert excluded_path(str(root), "nested/x.py")
    assert excluded_path(str(root), "env/lib/site.py")
    assert excluded_path(str(root), "node_modules")
    assert excluded_path(str(root), "a/.git/config")
    assert not excluded_path(str(root), "src/x.py")
    assert not excluded_path(str(root), "venv")  # a file named venv is just a file
