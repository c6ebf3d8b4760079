"""The ``local`` sandbox: commands run in the workspace itself, with only an
allow-list of the parent's environment."""

from __future__ import annotations

import os
from pathlib import Path

from server.engine.workspace import Workspace

# Enough for ordinary build and test commands; secrets in the parent's
# environment (API keys, tokens) are not passed on.
_ENV_ALLOW = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TMPDIR",
    "TZ",
    "SYSTEMROOT",
    "COMSPEC",
    "PATHEXT",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "WINDIR",
)


def shell_environment() -> dict[str, str]:
    """The allow-listed part of this process's environment, with a PATH always."""
    env = {k: v for k, v in os.environ.items() if k in _ENV_ALLOW}
    env.setdefault("PATH", os.defpath)
    return env


class LocalSandbox:
    """No isolation beyond the environment allow-list: the workspace as it is."""

    name = "local"

    def __init__(self, workspace: Workspace) -> None:
        self.root: Path = workspace.root
        self.note = ""

    def command(self, argv: list[str]) -> list[str]:
        return list(argv)

    def environment(self) -> dict[str, str]:
        return shell_environment()

    def close(self) -> None:
        pass
