"""The ``local-hardened`` sandbox: the workspace under bubblewrap (Linux).

Inside, the whole filesystem is read-only except the workspace (and a private,
empty /tmp); the workspace's ``.git`` stays read-only so a command cannot
rewrite history or the checkpoints' view of it; the usual credential folders
and files of the home folder are hidden, and so are the workspace's protected
paths, its git config's credentials and Sparrow's own folders (masks.py),
however a command spells their names; the network is off."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from server.engine.sandbox.base import SandboxError
from server.engine.sandbox.local import shell_environment
from server.engine.sandbox.masks import Masks
from server.engine.workspace import Workspace

# The probe runs a no-op; a working bwrap answers in milliseconds.
_PROBE_TIMEOUT_SECONDS = 15.0
# Credentials in the home folder, hidden from commands: with the network off a
# command cannot send them anywhere, but it could copy them into the workspace,
# where the model would read them.
SECRET_DIRS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".config/gh",
)
SECRET_FILES = (".netrc", ".git-credentials", ".pypirc", ".npmrc", ".pgpass")


def _hidden(home: Path, workspace: Path) -> list[str]:
    """bwrap arguments that put empty stand-ins over the credentials under ``home``."""
    hidden: list[str] = []
    for name in SECRET_DIRS:
        folder = home / name
        if folder.is_dir() and not workspace.is_relative_to(folder):
            hidden += ["--tmpfs", str(folder)]
    for name in SECRET_FILES:
        if (home / name).is_file():
            hidden += ["--ro-bind", "/dev/null", str(home / name)]
    return hidden


def find_bwrap() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxError(
            "the local-hardened sandbox needs bubblewrap ('bwrap'), which is not installed: "
            "install the package 'bubblewrap', or choose the sandbox 'local'"
        )
    return path


class HardenedSandbox:
    """Opening it finds ``bwrap`` and runs one wrapped ``true``, so a machine
    where bubblewrap cannot work (no user namespaces, a locked-down container)
    fails here, with bwrap's own words, instead of at the first tool call."""

    name = "local-hardened"

    def __init__(self, workspace: Workspace) -> None:
        # bwrap binds real paths; a symlinked workspace would be bound at the
        # link's target, not where the commands' cwd points.
        self.root: Path = workspace.root.resolve()
        self.note = (
            "commands run under bubblewrap: network off, only the workspace writable, "
            "its secrets (.env, keys, .ssh) hidden"
        )
        self._masks = Masks(self.root, list(workspace.own))
        self._bwrap = find_bwrap()
        self._probe()

    def command(self, argv: list[str]) -> list[str]:
        root = str(self.root)
        wrapped = [
            self._bwrap,
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--tmpfs", "/tmp",
            # After the tmpfs: a workspace under /tmp would otherwise be hidden by it.
            "--bind", root, root,
        ]  # fmt: skip
        git = self.root / ".git"
        if git.exists():
            wrapped += ["--ro-bind", str(git), str(git)]
        # After the workspace's binds, which would cover them (the home folder
        # as the workspace holds its credentials and Sparrow's state).
        wrapped += _hidden(Path.home(), self.root)
        wrapped += self._masks.own_folders()
        wrapped += self._masks.arguments()
        wrapped += [
            "--unshare-net",
            # A pid namespace dies with its first process: killing bwrap (its
            # parent, through --die-with-parent) then takes every background
            # child with it, which --new-session would otherwise let escape the
            # process-group kill of a timed-out command.
            "--unshare-pid",
            "--die-with-parent",
            # No shared terminal session: a command cannot push keystrokes into it.
            "--new-session",
            "--chdir", root,
            "--",
            *argv,
        ]  # fmt: skip
        return wrapped

    def environment(self) -> dict[str, str]:
        env = shell_environment()
        # The parent's TMPDIR may be read-only in here; the private /tmp is not.
        env["TMPDIR"] = "/tmp"
        return env

    def close(self) -> None:
        self._masks.close()

    def _probe(self) -> None:
        try:
            done = subprocess.run(
                self.command(["true"]),
                env=self.environment(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=_PROBE_TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxError(
                f"the local-hardened sandbox could not start bubblewrap: {exc}"
            ) from exc
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", errors="replace").strip() or "no message"
            raise SandboxError(
                f"bubblewrap cannot create the local-hardened sandbox on this machine "
                f"(exit code {done.returncode}): {said}; choose the sandbox 'local' or 'worktree'"
            )
