import json
import os
import time
from pathlib import Path

import pytest

from server.core.hook_config import HookSpec
from server.engine.hooks import HookSet

pytestmark = pytest.mark.anyio


def _script(folder: Path, name: str, body: str) -> str:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def _hooks(*specs: HookSpec, **settings: float) -> HookSet:
    return HookSet(specs, **settings)  # type: ignore[arg-type]


async def test_exit_code_2_blocks_with_stderr_as_the_reason(tmp_path: Path) -> None:
    guard = _script(tmp_path, "guard.sh", "echo 'no rm -rf here' >&2\nexit 2\n")
    after = tmp_path / "after-ran"
    hooks = _hooks(
        HookSpec("PreToolUse", guard, "run_shell"),
        HookSpec("PreToolUse", f"touch {after}", "run_shell"),
    )
    outcome = await hooks.run("PreToolUse", {}, tool="run_shell", cwd=tmp_path)
    assert outcome.blocked and outcome.reason == "no rm -rf here"
    assert len(outcome.runs) == 1 and outcome.runs[0].exit_code == 2 and outcome.runs[0].blocked
    assert not after.exists()  # stops at the first block


async def test_exit_code_2_without_stderr_names_the_command(tmp_path: Path) -> None:
    hooks = _hooks(HookSpec("Stop", "exit 2"))
    outcome = await hooks.run("Stop", {}, tool=None, cwd=tmp_path)
    assert outcome.blocked and outcome.reason == "blocked by hook: exit 2"


async def test_a_json_block_decision_blocks(tmp_path: Path) -> None:
    hook = _script(
        tmp_path, "decide.sh", """echo '{"decision": "block", "reason": "tests first"}'\n"""
    )
    outcome = await _hooks(HookSpec("PreToolUse", hook)).run(
        "PreToolUse", {}, tool="write_file", cwd=tmp_path
    )
    assert outcome.blocked and outcome.reason == "tests first"
    assert outcome.runs[0].exit_code == 0


async def test_claude_permission_deny_blocks(tmp_path: Path) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "not on main",
        }
    }
    hook = _script(tmp_path, "deny.sh", f"echo '{json.dumps(answer)}'\n")
    outcome = await _hooks(HookSpec("PreToolUse", hook, "Bash")).run(
        "PreToolUse", {}, tool="run_shell", cwd=tmp_path
    )
    assert outcome.blocked and outcome.reason == "not on main"


async def test_other_output_and_failures_do_not_block(tmp_path: Path) -> None:
    hooks = _hooks(
        HookSpec("PostToolUse", """echo '{"decision": "approve"}'"""),
        HookSpec("PostToolUse", "echo not json"),
        HookSpec("PostToolUse", "echo broken >&2; exit 1"),
        HookSpec("PostToolUse", "echo fine"),
    )
    outcome = await hooks.run("PostToolUse", {}, tool="read_file", cwd=tmp_path)
    assert not outcome.blocked and outcome.reason == ""
    assert [r.exit_code for r in outcome.runs] == [0, 0, 1, 0]
    assert [bool(r.problem) for r in outcome.runs] == [False, False, True, False]
    assert outcome.runs[2].stderr == "broken\n" and outcome.runs[3].stdout == "fine\n"


async def test_the_payload_arrives_as_json_on_stdin(tmp_path: Path) -> None:
    record = tmp_path / "stdin.json"
    hook = _script(tmp_path, "record.sh", f"cat > {record}\n")
    payload = {"tool_name": "run_shell", "tool_input": {"command": "ls"}, "session_id": "s1"}
    outcome = await _hooks(HookSpec("PreToolUse", hook)).run(
        "PreToolUse", payload, tool="run_shell", cwd=tmp_path
    )
    assert not outcome.blocked and outcome.runs[0].exit_code == 0
    assert json.loads(record.read_text()) == {"hook_event_name": "PreToolUse", **payload}


async def test_cwd_and_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    cwd = tmp_path / "ws"
    cwd.mkdir()
    outcome = await _hooks(HookSpec("Stop", "pwd; env")).run("Stop", {}, tool=None, cwd=cwd)
    out = outcome.runs[0].stdout
    assert out.splitlines()[0] == str(cwd)
    assert f"SPARROW_PROJECT_DIR={cwd}" in out and f"CLAUDE_PROJECT_DIR={cwd}" in out
    assert "PATH=" in out and "sk-secret" not in out


async def test_a_hook_that_ignores_stdin_is_fine(tmp_path: Path) -> None:
    big = {"blob": "x" * 1_000_000}  # more than a pipe buffer, never read
    outcome = await _hooks(HookSpec("Stop", "exit 0")).run("Stop", big, tool=None, cwd=tmp_path)
    assert outcome.runs[0].exit_code == 0 and not outcome.runs[0].problem


async def test_a_timeout_kills_the_hook_and_its_children(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    hook = _script(tmp_path, "slow.sh", f"sleep 30 & echo $! > {marker}\nwait\n")
    hooks = _hooks(HookSpec("PreToolUse", hook, timeout_seconds=0.5), timeout_seconds=60)
    outcome = await hooks.run("PreToolUse", {}, tool="run_shell", cwd=tmp_path)
    run = outcome.runs[0]
    assert not outcome.blocked and run.timed_out and run.exit_code is None
    assert "timed out" in run.problem
    child = int(marker.read_text())
    for _ in range(100):  # SIGKILL lands asynchronously; give it a bounded moment
        if not _running(child):
            break
        time.sleep(0.05)
    assert not _running(child)


async def test_the_default_timeout_applies(tmp_path: Path) -> None:
    hooks = _hooks(HookSpec("Stop", "sleep 30"), timeout_seconds=0.3)
    outcome = await hooks.run("Stop", {}, tool=None, cwd=tmp_path)
    assert outcome.runs[0].timed_out and not outcome.blocked


async def test_a_background_child_holding_the_pipe_does_not_hold_the_hook(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "child.pid"
    hooks = _hooks(HookSpec("Stop", f"sleep 30 & echo $! > {marker}; echo started"))
    try:
        outcome = await hooks.run("Stop", {}, tool=None, cwd=tmp_path)
        run = outcome.runs[0]
        assert run.exit_code == 0 and not run.timed_out and run.stdout == "started\n"
    finally:
        os.kill(int(marker.read_text()), 9)


async def test_output_over_the_cap_is_cut(tmp_path: Path) -> None:
    hooks = _hooks(
        HookSpec("Stop", "yes line | head -c 200000; yes err | head -c 200000 >&2"),
        output_limit_bytes=1000,
    )
    outcome = await hooks.run("Stop", {}, tool=None, cwd=tmp_path)
    run = outcome.runs[0]
    assert run.exit_code == 0 and run.truncated
    assert len(run.stdout) == 1000 and len(run.stderr) == 1000
    assert run.stdout.startswith("line\nline\n")


async def test_a_command_that_cannot_start_is_reported(tmp_path: Path) -> None:
    hooks = _hooks(HookSpec("Stop", "true"))
    outcome = await hooks.run("Stop", {}, tool=None, cwd=tmp_path / "missing")
    run = outcome.runs[0]
    assert not outcome.blocked and run.exit_code is None and not run.timed_out
    assert "could not start" in run.problem


async def test_only_matching_hooks_run(tmp_path: Path) -> None:
    hooks = _hooks(
        HookSpec("PreToolUse", "exit 2", "run"),
        HookSpec("PreToolUse", "echo shell", "Bash"),
        HookSpec("PreToolUse", "echo edits", "write_file|edit_file"),
        HookSpec("PostToolUse", "exit 2"),
    )
    assert [s.command for s in hooks.matching("PreToolUse", "run_shell")] == ["echo shell"]
    assert [s.command for s in hooks.matching("PreToolUse", "edit_file")] == ["echo edits"]
    outcome = await hooks.run("PreToolUse", {}, tool="run_shell", cwd=tmp_path)
    assert not outcome.blocked and [r.stdout for r in outcome.runs] == ["shell\n"]
    assert await hooks.run("Stop", {}, tool=None, cwd=tmp_path) == type(outcome)()


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie may wait for a reaper that never comes)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"
