"""What a checkpoint never captures, whatever the .gitignore files say.

- ``.git`` anywhere: the workspace's own repository is never read or written;
  a folder holding a ``.git`` (folder or file) is a nested repository and is
  left out whole, never renamed or touched.
- Dependency folders and virtual environments (``node_modules``, ``.venv``,
  ``venv``, any folder with a ``pyvenv.cfg``): big, rebuilt by a command, and
  not what a rewind should put back.
- Caches of Python tools (``__pycache__``, ``.mypy_cache``, ...): left out
  silently, like ignored files.
- ``.sparrow/handoff``: Sparrow's own handoff documents are a record of the
  session; a rewind must not delete them.
- Sparrow's own folders (config, state, data, cache) where they lie inside the
  workspace (the home folder as a workspace), and any shadow repository:
  listed as skipped; a rewind never touches them.

Left-out folders of the first two kinds are listed on the checkpoint as skipped;
caches and ignored files are not (they would drown the list).
"""

from __future__ import annotations

import os

GIT_DIR = ".git"
VENV_MARKER = "pyvenv.cfg"

# Folder name -> reason shown in the skipped list ("" = left out silently).
EXCLUDED_DIRS: dict[str, str] = {
    "node_modules": "dependency folder (node_modules)",
    ".venv": "virtual environment",
    "venv": "virtual environment",
    "__pycache__": "",
    ".mypy_cache": "",
    ".pytest_cache": "",
    ".ruff_cache": "",
    ".tox": "",
}
EXCLUDED_PATHS = {".sparrow/handoff"}

NESTED_REPO = "nested git repository"
# A shadow repository (any Sparrow's): bare git plus Sparrow's own folder in it.
SHADOW_MARKERS = frozenset({"HEAD", "objects", "refs", "sparrow"})
SHADOW_REPO = "Sparrow's shadow repository"
VIRTUALENV = "virtual environment"


def is_git_dir_name(name: str) -> bool:
    """``.git`` in any case: on macOS and Windows ``.GIT`` is the same folder."""
    return name[:1] == "." and name.lower() == GIT_DIR


def excluded_dir(path: str, name: str) -> str | None:
    """The reason to leave out folder ``path`` by its name ("" = silently), or None."""
    reason = EXCLUDED_DIRS.get(name)
    if reason is not None:
        return reason
    if path in EXCLUDED_PATHS:
        return ""
    return None


def excluded_by_content(names: set[str]) -> str | None:
    """The reason to leave out a folder (not the root) holding these names."""
    if GIT_DIR in names:
        return NESTED_REPO
    if VENV_MARKER in names:
        return VIRTUALENV
    if names >= SHADOW_MARKERS:
        return SHADOW_REPO
    return None


def excluded_path(root: str, path: str) -> bool:
    """Whether a workspace-relative ``path`` lies in a part never captured.

    Checks each component by name, and each folder above it for a nested
    repository or a virtual environment (a few ``stat`` calls).
    """
    parts = path.split("/")
    for index, name in enumerate(parts):
        if is_git_dir_name(name):
            return True
        if excluded_dir("/".join(parts[: index + 1]), name) is not None and (
            index < len(parts) - 1 or os.path.isdir(os.path.join(root, path))
        ):
            return True
    for index in range(1, len(parts)):
        folder = os.path.join(root, *parts[:index])
        for marker in (GIT_DIR, VENV_MARKER):
            if os.path.lexists(os.path.join(folder, marker)):
                return True
    return False
