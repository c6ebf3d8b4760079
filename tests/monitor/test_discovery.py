"""Where the transcripts are, and which files are transcripts."""

from __future__ import annotations

import os
from pathlib import Path

from server.monitor.discovery import (
    Root,
    claude_config_dirs,
    codex_homes,
    describe,
    describe_path,
    escape_cwd,
    iter_transcripts,
    session_roots,
)
from server.monitor.state import CLAUDE_CODE, CODEX


def test_claude_config_dirs_from_the_environment(tmp_path: Path) -> None:
    home = str(tmp_path)
    assert claude_config_dirs({"HOME": home}) == [
        os.path.join(home, ".claude"),
        os.path.join(home, ".config", "claude"),
    ]
    listed = {"HOME": home, "CLAUDE_CONFIG_DIR": f" {tmp_path}/a , {tmp_path}/b,,{tmp_path}/a"}
    assert claude_config_dirs(listed) == [f"{tmp_path}/a", f"{tmp_path}/b"]


def test_codex_home_from_the_environment(tmp_path: Path) -> None:
    assert codex_homes({"HOME": str(tmp_path)}) == [str(tmp_path / ".codex")]
    assert codex_homes({"HOME": "/x", "CODEX_HOME": str(tmp_path / "c")}) == [str(tmp_path / "c")]


def test_roots_are_unique_even_through_a_link(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".config").mkdir()
    (tmp_path / ".config" / "claude").symlink_to(tmp_path / ".claude")
    roots = session_roots({"HOME": str(tmp_path)})
    assert roots == [
        Root(CLAUDE_CODE, str(tmp_path / ".claude" / "projects")),
        Root(CODEX, str(tmp_path / ".codex" / "sessions")),
    ]


def test_which_files_are_transcripts() -> None:
    main = describe(CLAUDE_CODE, ("-home-ada-src", "5d7c1a0e.jsonl"))
    assert main is not None and (main.session_id, main.subagent) == ("5d7c1a0e", False)
    assert main.project_hint == "-home-ada-src"
    sub = describe(CLAUDE_CODE, ("-p", "5d7c1a0e", "subagents", "agent-a1.jsonl"))
    assert sub is not None and (sub.session_id, sub.parent_session, sub.subagent) == (
        "agent-a1",
        "5d7c1a0e",
        True,
    )
    old_sub = describe(CLAUDE_CODE, ("-p", "agent-77.jsonl"))
    assert old_sub is not None and old_sub.subagent
    assert describe(CLAUDE_CODE, ("-p", "5d7c1a0e", "tool-results", "x.jsonl")) is None
    assert describe(CLAUDE_CODE, ("-p", "notes.txt")) is None
    assert describe(CLAUDE_CODE, ("top.jsonl",)) is None
    rollout = describe(
        CODEX,
        (
            "2025",
            "10",
            "01",
            "rollout-2025-10-01T12-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl",
        ),
    )
    assert rollout is not None and rollout.session_id == "0199a213-81c0-7800-8aa1-bbab2a035a53"
    assert describe(CODEX, ("2025", "10", "01", "history.jsonl")) is None
    assert describe(CODEX, ("rollout-x.jsonl",)) is None


def test_a_full_walk_finds_every_transcript_and_nothing_else(tmp_path: Path) -> None:
    projects = tmp_path / "claude" / "projects"
    files = [
        projects / "-a" / "s1.jsonl",
        projects / "-a" / "s1" / "subagents" / "agent-1.jsonl",
        projects / "-b" / "s2.jsonl",
    ]
    ignored = [projects / "-a" / "s1" / "tool-results" / "r.jsonl", projects / "-a" / "x.txt"]
    sessions = tmp_path / "codex" / "sessions"
    files.append(sessions / "2025" / "01" / "02" / "rollout-2025-01-02T00-00-00-abc.jsonl")
    for path in files + ignored:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    roots = [
        Root(CLAUDE_CODE, str(projects)),
        Root(CODEX, str(sessions)),
        Root(CODEX, str(tmp_path / "missing")),
    ]
    found = sorted(path for _, path, _ in iter_transcripts(roots))
    assert found == sorted(str(p) for p in files)
    described = describe_path(str(files[1]), roots)
    assert described is not None and described[1].parent_session == "s1"
    assert describe_path(str(ignored[0]), roots) is None


def test_escaped_cwd_is_claude_codes_folder_name() -> None:
    assert escape_cwd("/home/ada/src/my.app") == "-home-ada-src-my-app"
