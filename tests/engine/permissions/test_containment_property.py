"""Random file-tool calls never escape the workspace nor touch a protected path.

Each example builds a fresh layout: a workspace with ordinary files, protected
files (``.env``, ``.env.local``, ``.git/``, ``sub/.ssh/id_rsa``, ``id_ed25519``)
and symlinks pointing out (to outside files and folders, to ``/``), pointing in
(to ``.env``, ``.git``, ``id_rsa``), a symlinked parent (``linkdir -> ../outside``),
a loop, and a hard link to an outside file; beside it an ``outside/`` folder
(with its own ``.env`` and a link back in) and a file next to the workspace.
Every outside and protected file holds a unique ``SECRET-…`` marker.

A batch of random calls (read_file, list_dir, glob, grep, write_file,
edit_file, delete_file) then runs through real runs (``run_agent``, Autonomous,
every Ask answered yes), their paths mixing ``..`` chains, absolute paths, the
links, case and Unicode variants of the protected names, trailing slashes and
dots, ``./`` prefixes and random text. A hard stop (an escape attempt, or three
failures in a row) ends a run; the calls left over run in the next one.

Invariants, whatever the calls did:

1. outside the workspace nothing changed: same paths, bytes, modes, link targets;
2. inside it, every protected file and folder is exactly as it was;
3. no tool result shows the marker of an outside or protected file;
4. no call crashes a run (status ``failed``).

Legitimate in-workspace calls may or may not succeed: that is not checked here
(see ``test_the_layout_is_usable`` for a sanity check).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.core.events import Event, RunFinished, ToolResult
from server.core.settings import Settings
from server.engine.approvals import Unattended
from server.engine.bus import EventBus
from server.engine.channel import RunChannel
from server.engine.loop import AgentRun, run_agent
from server.engine.permissions.modes import Contract, Mode
from server.engine.tools.registry import default_tools
from server.engine.workspace import open_workspace
from server.providers.base import Message
from server.providers.scripted import ScriptedProvider, ScriptedToolCall, ScriptedTurn

AUTONOMOUS = Contract(Mode.AUTONOMOUS, 0.85)
# `SPARROW_PROPERTY_EXAMPLES=3000 pytest ...` searches longer.
EXAMPLES = int(os.environ.get("SPARROW_PROPERTY_EXAMPLES", "300"))

# --------------------------------------------------------------------- layout

# Files with a secret (relative to the base folder): outside ones, then protected ones.
OUTSIDE_FILES = (
    "outside/secret.txt",
    "outside/.env",
    "outside/deep/inner.txt",
    "outside/café.txt",
    "sibling.txt",
)
PROTECTED_FILES = (
    "workspace/.env",
    "workspace/.env.local",
    "workspace/.git/config",
    "workspace/.git/HEAD",
    "workspace/sub/.ssh/id_rsa",
    "workspace/sub/.ssh/known_hosts",
    "workspace/id_ed25519",
)
# Protected paths whose whole tree must stay as it was (no file may appear in them).
PROTECTED_TREES = (".env", ".env.local", ".git", "sub/.ssh", "id_ed25519")
ORDINARY_FILES = ("workspace/a.txt", "workspace/sub/b.txt", "workspace/notes.md")
# Symlinks in the workspace: name -> target ("<OUT>" is the outside folder's absolute path).
WORKSPACE_LINKS = {
    "out_file": "../outside/secret.txt",
    "out_abs": "<OUT>/secret.txt",
    "out_env": "../outside/.env",
    "out_dir": "../outside",
    "linkdir": "../outside",
    "rootlink": "/",
    "dangling": "../outside/new.txt",
    "dangling_dir": "../outside/newdir/new.txt",
    "sibling": "../sibling.txt",
    "env_link": ".env",
    "git_link": ".git",
    "g": ".git",
    "cfg": ".git/config",
    "key_link": "sub/.ssh/id_rsa",
    "ssh_dir": "sub/.ssh",
    "self": ".",
    "in_file": "a.txt",
    "sub/up": "..",
    "sub/env_up": "../.env",
    "loop": "loop",
}
OUTSIDE_LINKS = {"outside/back": "../workspace", "outside/back_env": "../workspace/.env"}
# A hard link in the workspace to an outside file (no secret in it: a hard link is
# the same file, so reading it is fair); a change to it must not reach the outside one.
HARD_LINKS = {"workspace/hard.txt": "outside/shared.txt"}


@dataclass
class Layout:
    base: Path
    workspace: Path
    outside: Path
    markers: tuple[str, ...]

    def expand(self, text: str) -> str:
        """A generated path with its placeholders filled in."""
        return (
            text.replace("<ROOTLINK_OUT>", "rootlink" + str(self.outside))
            .replace("<WS>", str(self.workspace))
            .replace("<OUT>", str(self.outside))
            .replace("<BASE>", str(self.base))
        )


def build_layout(base: Path) -> Layout:
    workspace, outside = base / "workspace", base / "outside"
    markers = []
    for number, rel in enumerate(OUTSIDE_FILES + PROTECTED_FILES):
        marker = f"SECRET-{number:02d}-{rel.rsplit('/', 1)[-1].upper()}"
        markers.append(marker)
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(f"first line\n{marker}\nlast line\n")
    for rel in ORDINARY_FILES:
        (base / rel).write_text(f"hello from {rel}\nsecond line\n")
    layout = Layout(base, workspace, outside, tuple(markers))
    for name, target in WORKSPACE_LINKS.items():
        (workspace / name).symlink_to(layout.expand(target))
    for name, target in OUTSIDE_LINKS.items():
        (base / name).symlink_to(target)
    for name, target in HARD_LINKS.items():
        (base / target).write_text("shared by a hard link\n")
        (base / name).hardlink_to(base / target)
    return layout


Snapshot = dict[str, tuple[str, bytes | str, int]]


def snapshot(root: Path, skip: Path | None = None) -> Snapshot:
    """Every entry under ``root`` (links not followed): its kind, bytes or link target, mode."""
    found: Snapshot = {}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        if skip is not None and here == skip:
            dirs.clear()
            continue
        for name in [*dirs, *files]:
            path = here / name
            if skip is not None and path == skip:
                continue
            info = path.lstat()
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path), 0)
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = ("dir", b"", stat.S_IMODE(info.st_mode))
            else:
                found[rel] = ("file", path.read_bytes(), stat.S_IMODE(info.st_mode))
    return found


def protected_state(workspace: Path) -> Snapshot:
    state: Snapshot = {}
    for rel in PROTECTED_TREES:
        path = workspace / rel
        info = path.lstat()  # still there, as what it was
        if stat.S_ISDIR(info.st_mode):
            state[rel] = ("dir", b"", stat.S_IMODE(info.st_mode))
            state |= {f"{rel}/{k}": v for k, v in snapshot(path).items()}
        else:
            state[rel] = ("file", path.read_bytes(), stat.S_IMODE(info.st_mode))
    return state


# ----------------------------------------------------------------- strategies

WORKSPACE_NAMES = [
    "a.txt",
    "notes.md",
    "sub",
    "sub/b.txt",
    "sub/.ssh",
    "sub/.ssh/id_rsa",
    "sub/.ssh/known_hosts",
    ".env",
    ".env.local",
    ".git",
    ".git/config",
    ".git/HEAD",
    "id_ed25519",
    "new.txt",
    "sub/new",
    "hard.txt",
    *WORKSPACE_LINKS,
]
OUTSIDE_NAMES = [
    "secret.txt",
    ".env",
    "deep",
    "deep/inner.txt",
    "café.txt",
    "back",
    "back_env",
    "shared.txt",
]
# Case and Unicode variants of protected names (and near-misses that are not protected).
VARIANTS = [
    ".ENV",
    ".Env",
    ".env.LOCAL",
    ".Git/config",
    ".GIT/HEAD",
    "ID_RSA",
    "sub/.SSH/id_rsa",
    "sub/.ssh/ID_RSA",
    "Id_Ed25519",
    "\uff0e\uff45\uff4e\uff56",  # fullwidth
    "\uff0egit/config",
    ".\uff47\uff49\uff54/config",
    "\uff49\uff44\uff3f\uff52\uff53\uff41",
    ".e\u0301nv",  # combining acute
    ".env\u0301",
    "cafe\u0301.txt",  # NFD of café.txt
    "out_dir/cafe\u0301.txt",
    ".\u0435nv",  # Cyrillic e
    ".g\u200cit/config",  # zero-width non-joiner
    ".env.",
    ".env ",
    ".env..",
    ".git./config",
    ".git /config",
    ".env\\",
    "sub\\.ssh\\id_rsa",
    "\u212a.txt",  # Kelvin sign
    "id_rsa.pub",
    "ENV",
    ".env.local.",
]
FULL_PATHS = [
    "<WS>",
    "<WS>/",
    "<WS>/a.txt",
    "<WS>/.env",
    "<WS>/g/config",
    "<WS>/env_link",
    "<OUT>",
    "<OUT>/secret.txt",
    "<OUT>/.env",
    "<OUT>/back/.env",
    "<OUT>/back/a.txt",
    "<OUT>/new.txt",
    "<BASE>/sibling.txt",
    "<BASE>/new.txt",
    "<ROOTLINK_OUT>/secret.txt",
    "<ROOTLINK_OUT>/new.txt",
    "<ROOTLINK_OUT>/../workspace/.env",
    "../outside/secret.txt",
    "../outside/back/.env",
    "../outside/back/a.txt",
    "../sibling.txt",
    "../workspace/.env",
    "../workspace/a.txt",
    "../../",
    "/",
    "/etc/hostname",
    "~/.ssh/id_rsa",
    "linkdir/secret.txt",
    "linkdir/back/.env",
    "linkdir/back/g/config",
    "linkdir/back_env",
    "out_dir/deep/inner.txt",
    "self/self/.env",
    "self/g/HEAD",
    "sub/up/.env",
    "sub/up/g/config",
    "sub/env_up",
    "ssh_dir/id_rsa",
    "ssh_dir/known_hosts",
    "key_link",
    "cfg",
    "loop/../a.txt",
    "dangling_dir",
]
RANDOM_ALPHABET = st.characters(
    codec="utf-8",
    exclude_categories=("Cs", "Lu"),  # no upper case: the markers cannot be typed
    include_characters="./\\ ~-_\x00é\uff0e\uff45\u0301\u200c",
)
random_text = st.text(RANDOM_ALPHABET, max_size=12)
component = st.one_of(
    st.sampled_from(WORKSPACE_NAMES),
    st.sampled_from(OUTSIDE_NAMES),
    st.sampled_from(VARIANTS),
    st.sampled_from(["..", ".", "", "..", "../.."]),
    random_text,
)
PREFIXES = [
    "",
    "",
    "./",
    "../",
    "../../",
    "<WS>/",
    "<OUT>/",
    "<BASE>/",
    "<ROOTLINK_OUT>/",
    "/",
    "sub/../",
    "out_dir/../workspace/",
    "linkdir/back/",
    "self/",
    ".//",
]
SUFFIXES = ["", "", "", "/", "/.", ".", " ", "//", "/..", "\\", "/./"]
built_path = st.builds(
    lambda prefix, parts, suffix: prefix + "/".join(parts) + suffix,
    st.sampled_from(PREFIXES),
    st.lists(component, min_size=1, max_size=4),
    st.sampled_from(SUFFIXES),
)
ORDINARY = ["a.txt", "notes.md", "sub/b.txt", "in_file", "hard.txt", "self/a.txt", "sub/up/b.txt"]
paths = st.one_of(
    st.sampled_from(ORDINARY),
    st.sampled_from(WORKSPACE_NAMES),
    st.sampled_from(VARIANTS),
    st.sampled_from(FULL_PATHS),
    built_path,
    built_path,
    random_text,
)
GLOB_PATTERNS = [
    "**",
    "*",
    "**/*",
    "../*",
    "../**",
    ".e*",
    ".E*",
    "**/.env",
    "**/.e*",
    "**/*env*",
    "**/id_*",
    "**/config",
    "*/config",
    "*/*",
    ".gi[t]/*",
    "[.]env",
    "[.]e[n]v*",
    "g/*",
    "git_link/**",
    "ssh_dir/*",
    "sub/.s*/*",
    "sub/*/*",
    "linkdir/*",
    "out_dir/**",
    "rootlink/*",
    "self/**",
    "sub/up/*",
    "/*",
    "<WS>/*",
]
glob_patterns = st.one_of(
    st.sampled_from(GLOB_PATTERNS),
    st.builds("/".join, st.lists(st.one_of(component, st.sampled_from(["*", "**", "?*"])))),
)
GREP_PATTERNS = ["SECRET", r"SECRET-\d+", ".", "^", "line", "(?i)secret", "S.C", "[A-Z]{3}", "e"]
grep_patterns = st.one_of(
    st.sampled_from(GREP_PATTERNS), st.text("abcdefghlinorst ", min_size=1, max_size=6)
)
contents = st.text(st.characters(exclude_categories=("Cs", "Lu")), max_size=24)
old_texts = st.one_of(
    st.sampled_from(["first line", "line", "\n", "hello", "second", "shared", "last line\n", ""]),
    contents,
)


def _call(tool: str, args: dict[str, str]) -> ScriptedToolCall:
    return ScriptedToolCall(tool, args)


tool_calls = st.one_of(
    st.builds(lambda p: _call("read_file", {"path": p}), paths),
    st.builds(lambda p: _call("list_dir", {"path": p}), paths),
    st.builds(lambda p: _call("glob", {"pattern": p}), glob_patterns),
    st.builds(
        lambda pattern, p: _call("grep", {"pattern": pattern} | ({"path": p} if p else {})),
        grep_patterns,
        st.one_of(st.none(), paths),
    ),
    st.builds(lambda p, c: _call("write_file", {"path": p, "content": c}), paths, contents),
    st.builds(
        lambda p, o, n: _call("edit_file", {"path": p, "old": o, "new": n}),
        paths,
        old_texts,
        contents,
    ),
    st.builds(lambda p: _call("delete_file", {"path": p}), paths),
)
# The calls of one example, cut into turns (a turn's calls share a batch).
batches = st.lists(st.lists(tool_calls, min_size=1, max_size=5), min_size=2, max_size=6)

# ----------------------------------------------------------------------- runs


def _expanded(layout: Layout, call: ScriptedToolCall) -> ScriptedToolCall:
    return ScriptedToolCall(call.tool, {k: layout.expand(v) for k, v in call.args.items()})


class Script:
    """The model of one run: plays the pending turns, remembering which it played."""

    def __init__(self, pending: list[list[ScriptedToolCall]]) -> None:
        self.pending = pending
        self.played: list[list[ScriptedToolCall]] = []

    def __call__(self, messages: Sequence[Message]) -> ScriptedTurn:
        if not self.pending:
            return ScriptedTurn("Done.")
        self.played.append(self.pending.pop(0))
        return ScriptedTurn("", tuple(self.played[-1]))


async def play(layout: Layout, turns: Sequence[Sequence[ScriptedToolCall]]) -> list[Event]:
    """Play ``turns`` through as many runs as it takes: a hard stop ends a run,
    and the calls it left over go to the next one. All the runs' events."""
    pending = [[_expanded(layout, call) for call in turn] for turn in turns]
    events: list[Event] = []
    workspace = open_workspace(layout.workspace)
    number = 0
    while pending:
        number += 1
        run_id = f"r{number}"
        script = Script(pending)
        own: list[Event] = []
        run = AgentRun(
            run_id=run_id,
            session_id="s",
            task="try everything",
            workspace=workspace,
            provider=ScriptedProvider(script),
            tools=default_tools(),
            settings=Settings(),
            contract=lambda: AUTONOMOUS,
            approver=Unattended(yes=True),
        )
        outcome = await run_agent(run, RunChannel(run_id, EventBus(), [own.append]))
        events += own
        assert outcome.status != "failed", outcome.reason
        if outcome.status == "stopped" and script.played:
            # The calls of the stopping turn after the one that stopped it.
            turn = len(script.played)
            done = sum(1 for e in own if isinstance(e, ToolResult) and e.turn == turn)
            rest = script.played[-1][done:]
            if rest:
                pending.insert(0, rest)
    return events


def check_call_results(layout: Layout, events: Sequence[Event]) -> None:
    for event in events:
        if isinstance(event, ToolResult):
            for marker in layout.markers:
                assert marker not in event.output, (event.tool, event.output)


def run_examples(turns: Sequence[Sequence[ScriptedToolCall]]) -> list[Event]:
    with tempfile.TemporaryDirectory(prefix="sparrow-contain-") as tmp:
        layout = build_layout(Path(tmp).resolve())
        outside_before = snapshot(layout.base, skip=layout.workspace)
        protected_before = protected_state(layout.workspace)
        events = anyio.run(play, layout, turns)
        assert snapshot(layout.base, skip=layout.workspace) == outside_before
        assert protected_state(layout.workspace) == protected_before
        check_call_results(layout, events)
        return events


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(turns=batches)
def test_random_tool_calls_stay_inside_and_off_protected_paths(
    turns: list[list[ScriptedToolCall]],
) -> None:
    run_examples(turns)


# --------------------------------------------------------- deterministic cases


def _results(events: Sequence[Event]) -> list[tuple[str, bool, str]]:
    return [(e.tool, e.ok, e.output) for e in events if isinstance(e, ToolResult)]


def test_the_layout_is_usable() -> None:
    """Sanity: ordinary calls do work in this layout, so the property is not
    vacuously true because everything is refused."""
    calls = [
        _call("read_file", {"path": "a.txt"}),
        _call("read_file", {"path": "in_file"}),
        _call("write_file", {"path": "sub/new.txt", "content": "made"}),
        _call("edit_file", {"path": "sub/new.txt", "old": "made", "new": "changed"}),
        _call("grep", {"pattern": "hello|changed|line"}),
        _call("glob", {"pattern": "**"}),
        _call("list_dir", {"path": "."}),
        _call("delete_file", {"path": "sub/new.txt"}),
        _call("read_file", {"path": "<WS>/notes.md"}),
    ]
    results = _results(run_examples([calls]))
    assert [ok for _, ok, _ in results] == [True] * len(calls), results
    assert "hello from workspace/a.txt" in results[0][2] and "hello" in results[1][2]
    grep = results[4][2]
    assert "a.txt:1:" in grep and "sub/new.txt:1: changed" in grep and "SECRET" not in grep
    assert ".env" not in results[5][2] and "sub/.ssh" not in results[5][2]


def test_escapes_through_the_layout_are_refused() -> None:
    turns: list[list[ScriptedToolCall]] = [
        [_call("read_file", {"path": name})]
        for name in ("out_file", "env_link", "g/config", "linkdir/.env", "sub/up/.env")
    ]
    turns += [
        [_call("write_file", {"path": "linkdir/new.txt", "content": "x"})],
        [_call("delete_file", {"path": "out_dir/secret.txt"})],
        [_call("edit_file", {"path": "<ROOTLINK_OUT>/secret.txt", "old": "first", "new": "x"})],
        [_call("grep", {"pattern": "SECRET", "path": "."})],
    ]
    results = _results(run_examples(turns))
    assert [ok for _, ok, _ in results[:-1]] == [False] * (len(turns) - 1), results
    assert results[-1][1:] == (True, "no matches")


def test_a_symlink_loop_is_refused_not_a_crash() -> None:
    """Regression: before Python 3.13 ``Path.resolve`` raises RuntimeError on a
    symlink loop, which the gate did not catch: the run failed with an internal
    error. (``loop/../a.txt`` is fine: it resolves to ``a.txt``.)"""
    calls = [
        _call(tool, {"path": path} | extra)
        for path in ("loop", "loop/x", "self/loop", "sub/up/loop")
        for tool, extra in (
            ("read_file", {}),
            ("list_dir", {}),
            ("grep", {"pattern": "x"}),
            ("write_file", {"content": "x"}),
            ("delete_file", {}),
        )
    ]
    events = run_examples([[call] for call in calls])
    assert all(not ok for _, ok, _ in _results(events))
    finished = [e for e in events if isinstance(e, RunFinished)]
    assert all(e.status != "failed" for e in finished), [e.reason for e in finished]
