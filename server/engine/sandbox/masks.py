"""What ``local-hardened`` hides inside its namespace, whatever a command's
words: the protected paths of the workspace (``.env``, ``.env.local``,
``.ssh``, ``id_rsa``, ``id_ed25519``, wherever they sit), the credentials in
the workspace's git config, and Sparrow's own folders.

The gate reads a command's words and cannot see a name built at run time
(``open(chr(46)+'env')``); a path masked here is empty to every spelling.
The workspace is searched for protected names before each command, so a file
that appeared since the last one is hidden too; dependency folders, where no
secret of the user's lives, are not searched."""

from __future__ import annotations

import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from server.engine.permissions.protected import PROTECTED_NAMES, fold

_HIDDEN_NAMES: Final = frozenset(fold(n) for n in PROTECTED_NAMES if n != ".git")
# Folders full of other people's files: searched by no one for the user's secrets.
_NOT_SEARCHED: Final = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox"})
# user:password@ in a remote's URL; extraheader lines carry tokens (CI checkouts).
_URL_CREDENTIALS: Final = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")
_SECRET_LINE: Final = re.compile(r"^\s*(extraheader|password|token)\s*=", re.IGNORECASE)


def protected_inside(root: Path) -> list[Path]:
    """Every protected file or folder under ``root`` (not followed through
    symlinks, not inside the workspace's ``.git``)."""
    found: list[Path] = []
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if fold(name) in _HIDDEN_NAMES:
                found.append(Path(entry.path))
                continue
            if name == ".git" or name in _NOT_SEARCHED:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
            except OSError:
                continue
    return found


def sanitized_git_config(text: str) -> str:
    """The config with credentials taken out: what git needs to work, no secret."""
    kept = []
    for line in text.splitlines(keepends=True):
        if _SECRET_LINE.match(line):
            continue
        kept.append(_URL_CREDENTIALS.sub(r"\g<scheme>", line))
    return "".join(kept)


@dataclass
class Masks:
    """The bwrap arguments that hide what must stay hidden, for one workspace."""

    root: Path
    own: list[Path] = field(default_factory=list)
    _scratch: tempfile.TemporaryDirectory[str] | None = None

    def arguments(self) -> list[str]:
        """To follow the workspace's own binds: later mounts cover earlier ones."""
        args: list[str] = []
        for path in protected_inside(self.root):
            args += _cover(path)
        args += self._git_config()
        return args

    def own_folders(self) -> list[str]:
        args: list[str] = []
        for folder in self.own:
            if folder.is_dir() and not self.root.is_relative_to(folder):
                args += ["--tmpfs", str(folder)]
        return args

    def _git_config(self) -> list[str]:
        config = self.root / ".git" / "config"
        try:
            text = config.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            return []
        clean = sanitized_git_config(text)
        if clean == text:
            return []
        if self._scratch is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="sparrow-masks-")
        copy = Path(self._scratch.name) / "git-config"
        copy.write_text(clean, encoding="utf-8", errors="surrogateescape")
        return ["--ro-bind", str(copy), str(config)]

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None


def _cover(path: Path) -> list[str]:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return []  # gone since the search: nothing to cover (bwrap would make it)
    if stat.S_ISDIR(mode):
        return ["--tmpfs", str(path)]
    if stat.S_ISLNK(mode):
        # A protected name that links elsewhere: what it leads to is the secret.
        target = path.resolve()
        if target.is_dir():
            return ["--tmpfs", str(target)]
        return ["--ro-bind", "/dev/null", str(target)] if target.is_file() else []
    return ["--ro-bind", "/dev/null", str(path)]
