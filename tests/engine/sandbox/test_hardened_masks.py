"""Under local-hardened no spelling of a protected name reaches it: a corpus
of reads that build the name at run time, which the gate's reading of words
cannot catch, finds the secrets empty. The same corpus under plain `local`
reads them (the test is not vacuous, and the README says so)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.core.paths import Paths
from server.core.settings import Settings
from server.engine.permissions.autonomy import Decision
from server.engine.permissions.gate import CallFacts, judge
from server.engine.permissions.modes import Contract, Mode
from server.engine.permissions.rules import DEFAULT_RULES
from server.engine.sandbox.hardened import HardenedSandbox
from server.engine.sandbox.local import LocalSandbox
from server.engine.sandbox.masks import sanitized_git_config
from server.engine.tools.base import Risk, ToolContext
from server.engine.tools.shell import RunShell
from server.engine.workspace import Workspace, open_workspace
from tests.conftest import require_program

pytestmark = pytest.mark.anyio

SECRET = "sk-canary-9f8e7d6c5b4a"
PY = shlex.quote(sys.executable)

# Each prints what it reads; none names a protected path in its words.
CORPUS = [
    f"{PY} -c \"print(open(chr(46)+'env').read())\"",
    f"{PY} -c \"print(open('.en'+'v.local').read())\"",
    f"{PY} -c \"import base64;print(open(base64.b64decode('LmVudg==').decode()).read())\"",
    f"{PY} -c \"import os;print(open(os.path.join('con'+'fig', '.e'+'nv')).read())\"",
    f"{PY} -c \"import glob;[print(open(p).read()) for p in glob.glob('**/*', "
    "recursive=True, include_hidden=True) if p.endswith('nv') or p.endswith('rsa')]\"",
    f"{PY} -c \"print(open('.s'+'sh/id_'+'ed25519').read())\"",
    "cat $(printf '\\056env')",
    "f=$(echo LmVudgo= | base64 -d); cat \"$f\"",
    "n=.e; cat ${n}nv",
    "find . -name '*nv*' -type f -exec cat {} +",
    "grep -r sk-canary . 2>/dev/null",
    "cat keys/id_r?a",
    "tar cf - . 2>/dev/null | strings | grep sk-canary",
    "for f in * .[a-z]*; do cat \"$f\" 2>/dev/null; done",
    f"{PY} -c \"print(open('link-to-secret').read())\"",
    "cat .git/config",
]


@pytest.fixture
def secrets(workspace: Path) -> Path:
    (workspace / ".env").write_text(f"API_KEY={SECRET}-env\n")
    (workspace / ".env.local").write_text(f"API_KEY={SECRET}-local\n")
    (workspace / "config").mkdir()
    (workspace / "config" / ".env").write_text(f"API_KEY={SECRET}-nested\n")
    (workspace / ".ssh").mkdir()
    (workspace / ".ssh" / "id_ed25519").write_text(f"-----KEY {SECRET}-ssh\n")
    (workspace / "keys").mkdir()
    (workspace / "keys" / "id_rsa").write_text(f"-----KEY {SECRET}-rsa\n")
    (workspace / "link-to-secret").symlink_to(".env")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text(
        "[remote \"origin\"]\n\turl = https://user:" + SECRET + "-git@example.com/r.git\n"
        "[http]\n\textraheader = AUTHORIZATION: basic " + SECRET + "-header\n"
    )
    (workspace / "readme.txt").write_text("nothing secret\n")
    return workspace


def _ctx(workspace: Path, sandbox: object) -> ToolContext:
    return ToolContext(open_workspace(workspace), Settings(), sandbox=sandbox)  # type: ignore[arg-type]


@pytest.fixture
def hardened(secrets: Path) -> Iterator[HardenedSandbox]:
    require_program("bwrap")
    sandbox = HardenedSandbox(open_workspace(secrets))
    yield sandbox
    sandbox.close()


def test_the_gate_lets_the_corpus_through(secrets: Path) -> None:
    """Why the kernel must do it: these commands pass the gate's words check
    (the last names .git, which the gate catches, and bwrap masks anyway)."""
    passed = 0
    for command in CORPUS[:-1]:
        facts = CallFacts("run_shell", Risk.EXEC, {"command": command},
                          open_workspace(secrets), "s", "demo", "web")
        verdict = judge(facts, Contract(Mode.AUTONOMOUS, 1.0), list(DEFAULT_RULES))
        passed += verdict.decision != Decision.DENY
    assert passed >= len(CORPUS) // 2


async def test_no_obfuscated_read_reaches_a_protected_file_under_local_hardened(
    secrets: Path, hardened: HardenedSandbox
) -> None:
    reached = []
    for command in CORPUS:
        out = await RunShell().run({"command": command}, _ctx(secrets, hardened))
        if SECRET in out.content:
            reached.append((command, out.content))
    assert reached == []
    # The masks hide, they do not damage: the files are there, as they were.
    assert (secrets / ".env").read_text() == f"API_KEY={SECRET}-env\n"
    assert SECRET in (secrets / ".git" / "config").read_text()
    # And ordinary work goes on: the rest of the workspace reads and writes.
    out = await RunShell().run({"command": "cat readme.txt; echo ok > new.txt"},
                               _ctx(secrets, hardened))
    assert "nothing secret" in out.content and (secrets / "new.txt").exists()


async def test_a_secret_that_appears_later_is_hidden_too(
    secrets: Path, hardened: HardenedSandbox
) -> None:
    (secrets / "late").mkdir()
    (secrets / "late" / ".env").write_text(f"{SECRET}-late\n")
    out = await RunShell().run(
        {"command": f"{PY} -c \"print(open('late/.e'+'nv').read())\""}, _ctx(secrets, hardened)
    )
    assert SECRET not in out.content


async def test_under_plain_local_the_corpus_does_reach_them(secrets: Path) -> None:
    local = LocalSandbox(Workspace(secrets))
    reached = 0
    for command in CORPUS:
        out = await RunShell().run({"command": command}, _ctx(secrets, local))
        reached += SECRET in out.content
    assert reached >= len(CORPUS) - 2


async def test_sparrow_s_own_folders_are_hidden_from_commands(
    workspace: Path, tmp_path: Path
) -> None:
    require_program("bwrap")
    own = Paths(workspace / ".config" / "sparrow", workspace / ".local" / "state" / "sparrow",
                tmp_path / "data", tmp_path / "cache").ensure()
    (own.state / "sessions.db").write_text(SECRET)
    (own.data / "kept").write_text(SECRET)
    place = open_workspace(workspace)
    place.own = own.own_folders()
    sandbox = HardenedSandbox(place)
    try:
        out = await RunShell().run(
            {"command": f"cat .local/state/sparrow/sessions.db {own.data}/kept; "
                        "echo x > .local/state/sparrow/new"},
            _ctx(workspace, sandbox),
        )
    finally:
        sandbox.close()
    assert SECRET not in out.content
    assert not (own.state / "new").exists()


def test_the_git_config_loses_its_credentials_and_nothing_else() -> None:
    text = (
        "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://u:tok@host/r.git\n"
        "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
        "[http \"https://host/\"]\n\textraHeader = AUTHORIZATION: basic abc\n"
    )
    clean = sanitized_git_config(text)
    assert "tok" not in clean and "abc" not in clean
    assert "url = https://host/r.git" in clean and "bare = false" in clean
    assert "fetch = +refs/heads/*:refs/remotes/origin/*" in clean
