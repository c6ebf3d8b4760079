"""``sparrow hook claude-code`` run as Claude Code runs it (the installed script,
the hook's JSON on stdin), and ``sparrow hook install``."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from server.cli import hook_command
from server.cli.hook_command import HOOK_ARGS, respond, run_hook
from server.core.paths import resolve_paths
from server.monitor.state import CLAUDE_CODE
from server.monitor.windows import state_lookup
from tests.monitor import transcripts as t

SPARROW = shutil.which("sparrow", path=str(Path(sys.executable).parent)) or "sparrow"


def payload(
    transcript: Path | str, event: str = "PostToolUse", session: str = "s-1", **extra: Any
) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": "/home/ada/src/engine",
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_response": {"stdout": "a\nb\n"},
        "tool_use_id": "toolu_01",
        **extra,
    }


def hook(stdin: str | bytes, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The hook as Claude Code runs it: a process, JSON on stdin."""
    data = stdin.decode() if isinstance(stdin, bytes) else stdin
    return subprocess.run(
        [SPARROW, "hook", "claude-code"],
        input=data,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def answer_of(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"hookSpecificOutput"}
    output = data["hookSpecificOutput"]
    assert output["hookEventName"] == "PostToolUse"
    text: str = output["additionalContext"]
    return text


def test_above_the_warning_level_the_agent_is_told_the_figures(tmp_path: Path) -> None:
    transcript = t.write(tmp_path / "s.jsonl", t.user("go"), t.context_line(112_340, "m"))
    text = answer_of(hook(json.dumps(payload(transcript))))
    assert "112,340 of 200,000 tokens (56%)" in text
    assert "Level: warning" in text and "critical from 130,000" in text
    assert t.MODEL in text and "handoff" not in text


def test_at_critical_the_agent_is_asked_for_a_handoff_now(tmp_path: Path) -> None:
    transcript = t.write(tmp_path / "s.jsonl", t.context_line(150_000, "m"))
    text = answer_of(hook(json.dumps(payload(transcript))))
    assert "150,000 of 200,000 tokens (75%)" in text and "Level: critical" in text
    assert "Write a handoff document now" in text
    assert "/home/ada/src/engine/.sparrow/handoff/" in text


def test_the_window_comes_from_the_price_data_once_then_from_the_kept_file(
    sparrow_home: Path, tmp_path: Path
) -> None:
    line = t.context_line(700_000, "m", model="claude-opus-5-5")
    transcript = t.write(tmp_path / "s.jsonl", line)
    text = answer_of(hook(json.dumps(payload(transcript))))
    assert "700,000 of 1,000,000 tokens (70%)" in text and "Level: critical" in text
    kept = json.loads((sparrow_home / "state" / "monitor" / "windows.json").read_text())
    assert kept["claude-code:claude-opus-5-5"]["window"] == 1_000_000
    # Below the levels on a 1M window: 142K used to be "71% of 200K, critical".
    calm = t.write(tmp_path / "calm.jsonl", t.context_line(142_300, "m", model="claude-opus-5-5"))
    result = hook(json.dumps(payload(calm, session="s-2")))
    assert (result.returncode, result.stdout) == (0, "")


def test_a_window_nobody_knows_is_said_so_and_absolute_thresholds_still_apply(
    sparrow_home: Path, tmp_path: Path
) -> None:
    transcript = t.write(tmp_path / "s.jsonl", t.context_line(142_300, "m", model="acme-coder-7"))
    # The default thresholds are shares of the window: no level, so nothing said.
    result = hook(json.dumps(payload(transcript)))
    assert (result.returncode, result.stdout) == (0, "")
    config = sparrow_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        "[monitor.claude_code]\nwarning = 100000\ncritical = 130000\n"
    )
    text = answer_of(hook(json.dumps(payload(transcript, session="s-2"))))
    assert "142,300 tokens (the model's context window is not known)" in text
    assert "Level: critical (warning from 100,000 tokens, critical from 130,000)" in text


def test_below_the_levels_it_says_nothing(tmp_path: Path) -> None:
    transcript = t.write(tmp_path / "s.jsonl", t.context_line(99_999, "m"))
    result = hook(json.dumps(payload(transcript)))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


@pytest.mark.parametrize(
    "stdin",
    [
        "",
        "not json",
        "[1, 2]",
        '{"hook_event_name": "PostToolUse"}',
        json.dumps(payload("/no/such/transcript.jsonl")),
        json.dumps(payload("/etc")),  # a folder
        json.dumps(payload("/dev/null")),
        json.dumps({**payload("x"), "transcript_path": 42, "session_id": None}),
        json.dumps(payload("x", event="PreCompact")),
    ],
)
def test_whatever_goes_wrong_it_exits_0_and_blocks_nothing(stdin: str) -> None:
    result = hook(stdin)
    assert result.returncode == 0 and result.stdout == ""
    assert "Traceback" not in result.stderr


def test_an_unreadable_transcript_and_a_broken_state_folder_still_exit_0(
    tmp_path: Path, sparrow_home: Path
) -> None:
    transcript = t.write(tmp_path / "s.jsonl", t.context_line(150_000, "m"))
    transcript.chmod(0)
    sparrow_home.mkdir(parents=True, exist_ok=True)
    (sparrow_home / "state").write_text("a file where a folder should be")
    result = hook(json.dumps(payload(transcript)))
    assert result.returncode == 0 and "Traceback" not in result.stderr
    transcript.chmod(0o644)


def test_a_400_mb_transcript(tmp_path: Path) -> None:
    transcript = tmp_path / "huge.jsonl"
    with transcript.open("wb") as handle:
        handle.truncate(420 * 1024 * 1024)  # sparse: the hook must never read this part
        handle.seek(0, os.SEEK_END)
        handle.write(b"\n" + t.line(t.context_line(131_072, "m")) + t.line(t.tool_result(9_000)))
    try:
        text = answer_of(hook(json.dumps(payload(transcript))))
        assert "131,072 of 200,000" in text and "Level: critical" in text
    finally:
        transcript.unlink()


def write_config(sparrow_home: Path, text: str) -> None:
    config = resolve_paths().config
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(text)


def test_check_frequency_reads_the_first_call_then_every_nth(
    tmp_path: Path, sparrow_home: Path
) -> None:
    write_config(sparrow_home, "[monitor]\ncheck_frequency = 3\n")
    transcript = t.write(tmp_path / "s.jsonl", t.context_line(120_000, "m"))
    answered = []
    for _ in range(7):  # rapid PostToolUse calls
        out = io.StringIO()
        assert run_hook(io.StringIO(json.dumps(payload(transcript))), out) == 0
        answered.append(bool(out.getvalue()))
    assert answered == [True, False, False, True, False, False, True]
    # Counted per session, in a small file under Sparrow's state.
    state = resolve_paths().state / "monitor" / "hook" / "s-1.json"
    assert json.loads(state.read_text()) == {"calls": 7}
    other = io.StringIO()
    run_hook(io.StringIO(json.dumps(payload(transcript, session="s-2"))), other)
    assert other.getvalue()


def test_counts_of_long_gone_sessions_are_forgotten(tmp_path: Path) -> None:
    folder = resolve_paths().state / "monitor" / "hook"
    folder.mkdir(parents=True)
    old, recent = folder / "old-session.json", folder / "recent-session.json"
    for path in (old, recent):
        path.write_text('{"calls": 3}')
    month_ago = time.time() - 30 * 86400
    os.utime(old, (month_ago, month_ago))
    transcript = t.write(tmp_path / "s.jsonl", t.context_line(1_000, "m"))
    run_hook(io.StringIO(json.dumps(payload(transcript, session="new"))), io.StringIO())
    assert sorted(p.name for p in folder.iterdir()) == ["new.json", "recent-session.json"]


def test_without_usage_the_tool_call_count_warns(sparrow_home: Path) -> None:
    write_config(sparrow_home, "[monitor]\ncheck_frequency = 1\nfallback_tool_count = 3\n")
    calls = [respond(payload("/no/such.jsonl"), dict(os.environ)) for _ in range(4)]
    assert calls[:2] == [None, None]
    assert calls[2] is not None
    text = calls[2]["hookSpecificOutput"]["additionalContext"]
    assert "No token usage could be read" in text and "3 tool calls" in text


def test_settings_of_the_workspace_apply(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".sparrow").mkdir(parents=True)
    (workspace / ".sparrow" / "config.toml").write_text(
        "[monitor.claude_code]\nwarning = 0.1\ncritical = 0.9\n"
    )
    transcript = t.write(tmp_path / "s.jsonl", t.context_line(30_000, "m"))
    found = respond({**payload(transcript), "cwd": str(workspace)}, dict(os.environ))
    assert found is not None
    assert "Level: warning (warning from 20,000" in found["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"XDG_STATE_HOME": "/tmp/xdg-state", "XDG_CONFIG_HOME": "/tmp/xdg-config"},
        {"XDG_STATE_HOME": "  ", "XDG_CONFIG_HOME": ""},
        {"SPARROW_HOME": "~/portable"},
    ],
)
def test_the_hook_finds_sparrows_folders_as_the_app_does(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the light resolver is Linux's; elsewhere the hook asks platformdirs")
    for name in ("SPARROW_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    paths = resolve_paths()  # platformdirs reads the process's environment
    assert hook_command.state_dir(dict(os.environ)) == str(paths.state)
    assert hook_command.config_dir(dict(os.environ)) == str(paths.config)


def test_the_hook_imports_nothing_heavy(tmp_path: Path) -> None:
    """Without SPARROW_HOME, the common case: no platformdirs (XDG here, in tmp_path).
    The model's window was looked up in the price data by an earlier call, as
    it is on every call but the first of a model."""
    transcript = t.write(tmp_path / "s.jsonl", t.context_line(120_000, "m"))
    state_lookup(str(tmp_path / "state" / "sparrow"))(CLAUDE_CODE, t.MODEL)
    code = "import sys; from server.cli import main; sys.exit(main(['hook', 'claude-code']))"
    env = {k: v for k, v in os.environ.items() if k != "SPARROW_HOME"}
    env |= {"XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        input=json.dumps(payload(transcript)),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 0 and "Level: warning" in result.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()}
    heavy = {
        "platformdirs",
        "anyio",
        "peewee",
        "starlette",
        "pygit2",
        "keyring",
        "dataclasses",
        "server.core.settings",
        "server.runtime",
        "tomllib",
        "asyncio",
        "genai_prices",
    }
    assert imported & heavy == set()
    assert (tmp_path / "state" / "sparrow" / "monitor" / "hook" / "s-1.json").is_file()


# --- install ----------------------------------------------------------------------------


@pytest.fixture
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home / ".claude"


def sparrow(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SPARROW, *args], capture_output=True, text=True, timeout=60)


def backups(folder: Path) -> list[Path]:
    return sorted(folder.glob("settings.json.sparrow-backup-*"))


def test_install_adds_the_hook_once_and_uninstall_removes_only_it(claude_home: Path) -> None:
    settings = claude_home / "settings.json"
    original = {
        "model": "opus",
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
        },
    }
    settings.write_text(json.dumps(original, indent=4))
    before = settings.read_text()
    result = sparrow("hook", "install")
    assert result.returncode == 0 and "added" in result.stdout
    data = json.loads(settings.read_text())
    groups = data["hooks"]["PostToolUse"]
    assert groups[0] == original["hooks"]["PostToolUse"][0]  # type: ignore[index]
    ours = groups[1]
    assert ours["matcher"] == "*"
    assert ours["hooks"][0]["command"] == f"{SPARROW} {HOOK_ARGS}"
    assert ours["hooks"][0]["type"] == "command"
    assert [b.read_text() for b in backups(claude_home)] == [before]

    again = sparrow("hook", "install")
    assert again.returncode == 0 and "already" in again.stdout
    assert json.loads(settings.read_text()) == data and len(backups(claude_home)) == 1

    removed = sparrow("hook", "install", "--uninstall")
    assert removed.returncode == 0 and "removed" in removed.stdout
    assert json.loads(settings.read_text()) == original
    assert "nothing" in sparrow("hook", "install", "--uninstall").stdout or "no Sparrow" in (
        sparrow("hook", "install", "--uninstall").stdout
    )


def test_install_into_no_settings_then_uninstall_leaves_nothing(claude_home: Path) -> None:
    settings = claude_home / "settings.json"
    assert sparrow("hook", "install").returncode == 0
    assert list(json.loads(settings.read_text())) == ["hooks"]
    assert backups(claude_home) == []  # nothing to back up
    assert sparrow("hook", "install", "--uninstall").returncode == 0
    assert not settings.exists()


def test_uninstall_keeps_what_was_there_before_even_if_empty(claude_home: Path) -> None:
    settings = claude_home / "settings.json"
    settings.write_text('{"hooks": {"PostToolUse": []}}')
    assert sparrow("hook", "install").returncode == 0
    assert sparrow("hook", "install", "--uninstall").returncode == 0
    assert json.loads(settings.read_text()) == {"hooks": {"PostToolUse": []}}


def test_a_project_install_and_a_hook_claude_code_would_run(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    assert sparrow("hook", "install", "--project", str(project)).returncode == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    transcript = t.write(tmp_path / "s.jsonl", t.context_line(140_000, "m"))
    # Claude Code runs the command through a shell with the JSON on stdin.
    result = subprocess.run(
        command,
        shell=True,
        input=json.dumps(payload(transcript)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Level: critical" in answer_of(result)
    missing = sparrow("hook", "install", "--project", str(tmp_path / "nope"))
    assert missing.returncode == 1 and "not found" in missing.stderr


def test_invalid_settings_are_left_alone(claude_home: Path) -> None:
    settings = claude_home / "settings.json"
    settings.write_text("{ not json")
    result = sparrow("hook", "install")
    assert result.returncode == 1 and "not valid JSON" in result.stderr
    assert settings.read_text() == "{ not json" and backups(claude_home) == []


def test_an_old_path_to_sparrow_is_updated_not_duplicated(claude_home: Path) -> None:
    settings = claude_home / "settings.json"
    old = {"type": "command", "command": "/old/venv/bin/sparrow hook claude-code", "timeout": 10}
    settings.write_text(json.dumps({"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [old]}]}}))
    assert sparrow("hook", "install").returncode == 0
    groups = json.loads(settings.read_text())["hooks"]["PostToolUse"]
    assert len(groups) == 1 and groups[0]["hooks"][0]["command"] == f"{SPARROW} {HOOK_ARGS}"
    assert sparrow("hook", "install", "--uninstall").returncode == 0
    assert json.loads(settings.read_text()) == {"hooks": {"PostToolUse": []}}


def test_claude_config_dir_is_where_the_user_settings_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert sparrow("hook", "install").returncode == 0
    assert (tmp_path / "cfg" / "settings.json").is_file()
