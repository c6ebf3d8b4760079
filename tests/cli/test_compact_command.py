"""`sparrow compact`: a handoff doc of a conversation recorded by real runs."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from server.engine.handoff import HandoffDoc
from server.monitor.discovery import escape_cwd
from tests.cli.test_cli import SPARROW, ndjson, sparrow
from tests.monitor import transcripts as t

KEYS = [
    "task",
    "files_modified",
    "decisions",
    "tests_run",
    "blockers",
    "next_steps",
    "context",
    "path",
]
STAMPED = re.compile(r"\d{8}-\d{6}(-\d+)?\.md")

# A conversation that writes and edits a file, runs the tests, decides and is blocked.
FIRST_TURNS: list[dict[str, Any]] = [
    {
        "text": "I'll write the module first.\ndecision: keep the handoff in one module\n",
        "tool_calls": [
            {"tool": "write_file", "args": {"path": "src/handoff.py", "content": "x = 1\n"}},
            {
                "tool": "edit_file",
                "args": {"path": "src/handoff.py", "old": "x = 1", "new": "x = 2"},
            },
            {"tool": "run_shell", "args": {"command": "pytest -q"}},
        ],
    },
    {"text": "The tests ran. This is blocked by the missing fixture in tests/conftest.py.\n"},
]
FOLLOW_UP_TURNS: list[dict[str, Any]] = [
    {
        "text": "- Decision: the CLI writes Markdown always\n",
        "tool_calls": [{"tool": "write_file", "args": {"path": "README.md", "content": "hi\n"}}],
    },
    {"text": "blocker: nobody reviewed docs/api.md yet"},
]


def scripted_run(
    tmp_path: Path, task: str, turns: list[dict[str, Any]], *where: str
) -> str:
    """A run through the CLI with a scripted model; its id."""
    script = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    script.write_text(json.dumps({"turns": turns}))
    events = ndjson(sparrow("run", task, *where, "--json", "--script", str(script)).stdout)
    assert events[-1]["status"] == "completed", events[-1]
    run_id: str = events[0]["run_id"]
    return run_id


def conversation(workspace: Path, tmp_path: Path) -> tuple[str, str]:
    first = scripted_run(tmp_path, "write the handoff", FIRST_TURNS, "-w", str(workspace))
    second = scripted_run(tmp_path, "now the docs", FOLLOW_UP_TURNS, "--continue", first)
    return first, second


def compact(
    *args: str, cwd: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [SPARROW, "compact", *args], capture_output=True, text=True, timeout=60, cwd=cwd
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_json_has_the_doc_and_the_path_of_the_markdown_on_disk(
    workspace: Path, tmp_path: Path
) -> None:
    conversation(workspace, tmp_path)
    data = json.loads(compact("--json", "-w", str(workspace)).stdout)
    assert list(data) == KEYS
    path = Path(data.pop("path"))
    assert path.parent == workspace / ".sparrow" / "handoff" and STAMPED.fullmatch(path.name)
    # The whole conversation, both runs, in the order things happened.
    assert data == {
        "task": "ad-hoc handoff",
        "files_modified": ["src/handoff.py", "tests/conftest.py", "README.md", "docs/api.md"],
        "decisions": [
            "decision: keep the handoff in one module",
            "Decision: the CLI writes Markdown always",
        ],
        "tests_run": ["pytest -q"],
        "blockers": [
            "The tests ran. This is blocked by the missing fixture in tests/conftest.py.",
            "blocker: nobody reviewed docs/api.md yet",
        ],
        "next_steps": [],
        "context": "",
    }
    assert HandoffDoc.parse(path.read_text(encoding="utf-8")).to_dict() == data


def test_without_a_workspace_it_is_the_current_folder_and_it_prints_the_path(
    workspace: Path, tmp_path: Path
) -> None:
    conversation(workspace, tmp_path)
    first = Path(compact(cwd=workspace).stdout.strip())
    second = Path(compact(cwd=workspace).stdout.strip())
    # A second one never replaces the first, even in the same second.
    assert first != second and first.is_file() and second.is_file()
    assert sorted((workspace / ".sparrow" / "handoff").iterdir()) == sorted([first, second])
    doc = HandoffDoc.parse(first.read_text(encoding="utf-8"))
    assert doc.files_modified[0] == "src/handoff.py"


def test_out_writes_there_and_nowhere_else(workspace: Path, tmp_path: Path) -> None:
    conversation(workspace, tmp_path)
    printed = compact("--out", "notes/handoff.md", cwd=workspace).stdout.strip()
    target = workspace / "notes" / "handoff.md"
    assert Path(printed) == target
    assert HandoffDoc.parse(target.read_text(encoding="utf-8")).tests_run == ["pytest -q"]
    assert not (workspace / ".sparrow" / "handoff").exists()
    data = json.loads(compact("--out", str(target), "--json", "-w", str(workspace)).stdout)
    assert data["path"] == str(target)  # replaced, as asked


def test_task_is_the_doc_s_task(workspace: Path, tmp_path: Path) -> None:
    conversation(workspace, tmp_path)
    data = json.loads(compact("--task", "ship phase 12", "--json", "-w", str(workspace)).stdout)
    assert data["task"] == "ship phase 12"
    markdown = Path(data["path"]).read_text(encoding="utf-8")
    assert "## Task\n\nship phase 12\n" in markdown


def test_run_picks_its_conversation_and_the_default_is_the_latest(
    workspace: Path, tmp_path: Path
) -> None:
    first, second = conversation(workspace, tmp_path)
    later = scripted_run(
        tmp_path, "another thing", [{"text": "decision: start over in lib/new.rs"}],
        "-w", str(workspace),
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    scripted_run(tmp_path, "unrelated", [{"text": "decision: not here"}], "-w", str(elsewhere))

    latest = json.loads(compact("--json", "-w", str(workspace)).stdout)
    assert latest["decisions"] == ["decision: start over in lib/new.rs"]
    assert latest["files_modified"] == ["lib/new.rs"]
    # Any run of a conversation names all of it; the doc goes to its workspace.
    for run in (first, second):
        named = json.loads(compact("--run", run, "--json", cwd=tmp_path).stdout)
        assert named["files_modified"] == [
            "src/handoff.py", "tests/conftest.py", "README.md", "docs/api.md"
        ]
        assert Path(named["path"]).parent == workspace / ".sparrow" / "handoff"
    alone = json.loads(compact("--run", later, "--json").stdout)
    assert alone["decisions"] == latest["decisions"]

    wrong = compact("--run", first, "-w", str(elsewhere), check=False)
    assert wrong.returncode == 1
    assert f"run {first} worked in {workspace}, not {elsewhere}" in wrong.stderr
    unknown = compact("--run", "r-nope", check=False)
    assert unknown.returncode == 1 and "no run 'r-nope'" in unknown.stderr


def test_with_no_run_the_doc_is_empty_but_for_its_task(workspace: Path) -> None:
    data = json.loads(compact("--json", "--task", "start", "-w", str(workspace)).stdout)
    assert data == {
        "task": "start",
        "files_modified": [],
        "decisions": [],
        "tests_run": [],
        "blockers": [],
        "next_steps": [],
        "context": "",
        "path": data["path"],
    }
    markdown = Path(data["path"]).read_text(encoding="utf-8")
    assert markdown.count("\n_none_\n") == 6
    plain = compact(cwd=workspace).stdout.strip()
    assert HandoffDoc.parse(Path(plain).read_text(encoding="utf-8")) == HandoffDoc(
        task="ad-hoc handoff"
    )


def test_a_missing_workspace_fails_clearly(tmp_path: Path) -> None:
    result = compact("-w", str(tmp_path / "gone"), check=False)
    assert result.returncode == 1
    assert f"workspace not found: {tmp_path / 'gone'}" in result.stderr
    assert "--out PATH" in result.stderr


# --- --session: a Claude Code or Codex session ---------------------------------------


def claude_transcript(tmp_path: Path, project: Path, **kw: Any) -> Path:
    """A Claude Code session where discovery looks (the conftest's CLAUDE_CONFIG_DIR)."""
    folder = tmp_path / "claude-config" / "projects" / escape_cwd(str(project))
    return t.write(folder / f"{t.SESSION}.jsonl", *t.claude_work(str(project), **kw))


def test_session_of_claude_code_by_its_id(tmp_path: Path) -> None:
    project = tmp_path / "engine"
    project.mkdir()
    claude_transcript(tmp_path, project, model="claude-opus-5-5")
    data = json.loads(compact("--session", t.SESSION, "--json").stdout)
    path = Path(data.pop("path"))
    assert path.parent == project / ".sparrow" / "handoff" and STAMPED.fullmatch(path.name)
    assert data == {
        "task": "Port the scheduler to the new queue.",
        # From the edit calls that succeeded, not from paths the messages mention.
        "files_modified": ["src/queue.py", "src/shim.py", "/elsewhere/notes.md"],
        "decisions": ["decision: keep the old API as a shim"],
        # From the commands that ran: not the refused one, nor the user's words.
        "tests_run": ["pytest -q tests/test_queue.py"],
        "blockers": [
            "Also: pytest is slow here, blocked by the CI quota.",
            "Blocker: the fixture for tests/conftest.py is missing.",
        ],
        "next_steps": [],
        # The Monitor's figures: a 1M-window model.
        "context": "ctx 14% · 142,300 of 1,000,000 tokens · level ok · claude-opus-5-5",
    }
    assert HandoffDoc.parse(path.read_text(encoding="utf-8")).to_dict() == data


def test_session_of_codex_by_its_rollouts_path(tmp_path: Path) -> None:
    project = tmp_path / "parser"
    project.mkdir()
    rollout = t.write(t.codex_file(tmp_path / "codex-home"), *t.codex_work(str(project)))
    printed = compact("--session", str(rollout), "--task", "streaming parser").stdout.strip()
    doc = HandoffDoc.parse(Path(printed).read_text(encoding="utf-8"))
    assert Path(printed).parent == project / ".sparrow" / "handoff"
    assert doc.task == "streaming parser"
    assert doc.files_modified == ["src/parser.rs", "src/stream.rs"]
    assert doc.tests_run == ["cargo test --quiet", "pytest -x tests/"]
    assert doc.decisions == ["Decision: parse line by line, no buffering."]
    assert doc.blockers == ["This is blocked by the missing lexer tokens."]
    assert doc.context == "ctx 33% · 90,000 of 272,000 tokens · level ok · gpt-5-codex"


def test_session_whose_window_nobody_knows(tmp_path: Path) -> None:
    project = tmp_path / "engine"
    project.mkdir()
    claude_transcript(tmp_path, project, model="acme-coder-7")
    data = json.loads(compact("--session", t.SESSION, "--json").stdout)
    assert data["context"] == "ctx 142,300 tokens · window unknown · level unknown · acme-coder-7"


def test_session_errors_are_clear(tmp_path: Path) -> None:
    unknown = compact("--session", "no-such-session", check=False)
    assert unknown.returncode == 1
    assert "no Claude Code or Codex session 'no-such-session'" in unknown.stderr
    gone = tmp_path / "gone"  # the session's folder was deleted since
    claude_transcript(tmp_path, gone)
    failed = compact("--session", t.SESSION, check=False)
    assert failed.returncode == 1
    assert f"the session's folder is not there ({gone})" in failed.stderr
    assert "--out PATH" in failed.stderr
    out = tmp_path / "kept" / "handoff.md"
    assert compact("--session", t.SESSION, "--out", str(out)).stdout.strip() == str(out)
    assert HandoffDoc.parse(out.read_text(encoding="utf-8")).files_modified[0] == "src/queue.py"
    both = compact("--session", t.SESSION, "--run", "r-1", check=False)
    assert both.returncode == 1 and "leave out --run and --workspace" in both.stderr
