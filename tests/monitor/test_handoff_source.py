"""What a session did, read from real-format transcripts for its handoff doc:
files from successful edit calls, commands that ran, the messages; and
finding a session by its id or its transcript's path."""

from __future__ import annotations

import os
from pathlib import Path

from server.monitor.discovery import Root
from server.monitor.handoff_source import find_session, read_session_work, sniff_tool
from server.monitor.state import CLAUDE_CODE, CODEX
from tests.monitor import transcripts as t

PROJECT = "/home/ada/src/engine"


def test_a_claude_code_session(tmp_path: Path) -> None:
    path = t.write(tmp_path / f"{t.SESSION}.jsonl", *t.claude_work(PROJECT))
    work = read_session_work(str(path), CLAUDE_CODE)
    assert (work.session_id, work.project) == (t.SESSION, PROJECT)
    # Inside the project: relative; outside: as written. A failed edit is not one.
    assert work.files == ["src/queue.py", "src/shim.py", "/elsewhere/notes.md"]
    # A failing test run ran; a refused command did not.
    assert work.commands == ["pytest -q tests/test_queue.py", "git status"]
    assert work.task == "Port the scheduler to the new queue."
    assert "decision: keep the old API as a shim" in work.texts[1]
    assert "Blocker: the fixture for tests/conftest.py is missing." in work.texts


def test_a_codex_rollout(tmp_path: Path) -> None:
    path = t.write(t.codex_file(tmp_path), *t.codex_work(PROJECT))
    work = read_session_work(str(path), CODEX)
    assert (work.session_id, work.project) == (t.CODEX_ID, PROJECT)
    assert work.files == ["src/parser.rs", "src/stream.rs"]  # not the patch that failed
    assert work.commands == ["cargo test --quiet", "pytest -x tests/", "ls -la"]
    # The environment Codex writes as a user message is not the user's request.
    assert work.prompts == ["Make the parser streaming."]
    assert work.texts[1:] == [
        "Decision: parse line by line, no buffering.",
        "This is blocked by the missing lexer tokens.",
    ]


def test_codex_shapes_of_one_call(tmp_path: Path) -> None:
    path = t.write(
        t.codex_file(tmp_path),
        t.codex_meta(cwd=PROJECT),
        # apply_patch as a function, and through the shell; a local shell call.
        t.codex_call("apply_patch", call_id="c1", input="*** Add File: a.md\n+x\n"),
        t.codex_output(call_id="c1", output="Done"),
        t.codex_call("shell", call_id="c2", command=["apply_patch", "*** Delete File: b.md\n"]),
        t.codex_output(call_id="c2", output='{"output":"","metadata":{"exit_code":0}}'),
        {
            "timestamp": t.TS,
            "type": "response_item",
            "payload": {
                "type": "local_shell_call",
                "call_id": "c3",
                "status": "completed",
                "action": {"type": "exec", "command": ["npm", "test"]},
            },
        },
        # No output yet: the call is still running when the doc is written.
        t.codex_call("shell", call_id="c4", command=["make"]),
    )
    work = read_session_work(str(path), CODEX)
    assert work.files == ["a.md", "b.md"]
    assert work.commands == ["npm test"]


def test_finding_a_session_by_id_or_path(tmp_path: Path) -> None:
    claude, codex = tmp_path / "claude" / "projects", tmp_path / "codex"
    roots = [Root(CLAUDE_CODE, str(claude)), Root(CODEX, str(codex / "sessions"))]
    older = t.write(claude / "-a" / "s-1.jsonl", *t.claude_work(PROJECT))
    newer = t.write(claude / "-b" / "s-1.jsonl", *t.claude_work(PROJECT))
    os.utime(older, (1_000_000, 1_000_000))
    rollout = t.write(t.codex_file(codex), *t.codex_work(PROJECT))
    assert find_session("s-1", roots) == find_session(str(newer), roots)
    found = find_session("s-1", roots)
    assert found is not None and (found.path, found.tool) == (str(newer), CLAUDE_CODE)
    found = find_session(t.CODEX_ID, roots)
    assert found is not None and (found.path, found.tool) == (str(rollout), CODEX)
    assert find_session("nope", roots) is None
    # A transcript elsewhere: its lines say which tool wrote it.
    moved = t.write(tmp_path / "kept" / "x.jsonl", *t.codex_work(PROJECT))
    found = find_session(str(moved), roots)
    assert found is not None and found.tool == CODEX
    assert sniff_tool(str(t.write(tmp_path / "c.jsonl", *t.claude_work(PROJECT)))) == CLAUDE_CODE
    (tmp_path / "other.jsonl").write_text('{"hello": 1}\n')
    assert find_session(str(tmp_path / "other.jsonl"), roots) is None
