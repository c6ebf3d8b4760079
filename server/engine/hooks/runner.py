"""Running hooks: each one a shell command fed the event as JSON on stdin.

A hook can veto (exit code 2, or a JSON decision on stdout, as in Claude Code)
but cannot break the run: a crash, a timeout or a command that will not start is
reported in its HookRun and the loop goes on.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from server.core.hook_config import HookConfig, HookSpec
from server.engine.hooks.claude import SkippedHook, load_claude_hooks
from server.engine.processes import CappedOutput, kill_group
from server.engine.sandbox.local import shell_environment

# Once the hook's shell has exited, how long to keep reading output that a
# background child may still be writing; past this the child is not waited for.
_PIPE_GRACE_SECONDS = 0.5


@dataclass(frozen=True)
class HookRun:
    spec: HookSpec
    exit_code: int | None  # None: timed out, or could not start
    stdout: str
    stderr: str
    timed_out: bool
    duration_ms: int
    blocked: bool
    reason: str  # why it blocked; "" when it did not
    truncated: bool = False  # stdout or stderr went past output_limit_bytes

    @property
    def problem(self) -> str:
        """What went wrong, for the user's eyes; "" when the hook ran cleanly."""
        if self.timed_out:
            return f"hook timed out and was killed: {self.spec.command}"
        if self.exit_code is None:
            return f"hook could not start: {self.spec.command}: {self.stderr}"
        if self.exit_code not in (0, 2):
            return f"hook exited with code {self.exit_code}: {self.spec.command}"
        return ""


@dataclass(frozen=True)
class HookOutcome:
    blocked: bool = False
    reason: str = ""
    runs: list[HookRun] = field(default_factory=list)


@dataclass(frozen=True)
class HookSet:
    specs: tuple[HookSpec, ...] = ()
    skipped: tuple[SkippedHook, ...] = ()
    timeout_seconds: float = 60.0
    output_limit_bytes: int = 64_000

    def matching(self, event: str, tool: str | None) -> list[HookSpec]:
        return [spec for spec in self.specs if spec.event == event and spec.matches(tool)]

    async def run(
        self, event: str, payload: dict[str, Any], *, tool: str | None, cwd: Path
    ) -> HookOutcome:
        """The matching hooks in order, stopping at the first that blocks."""
        specs = self.matching(event, tool)
        if not specs:
            return HookOutcome()
        data = json.dumps({"hook_event_name": event, **payload}, default=str).encode()
        runs: list[HookRun] = []
        for spec in specs:
            result = await _run_one(
                spec,
                data,
                cwd,
                spec.timeout_seconds or self.timeout_seconds,
                self.output_limit_bytes,
            )
            runs.append(result)
            if result.blocked:
                return HookOutcome(True, result.reason, runs)
        return HookOutcome(False, "", runs)


def load_hooks(config: HookConfig, workspace: Path) -> HookSet:
    """Our entries, then each Claude Code settings file's, in the order listed."""
    specs = list(config.entries)
    skipped: list[SkippedHook] = []
    for name in config.claude_settings:
        path = Path(name).expanduser()
        if not path.is_absolute():
            path = workspace / path
            if not path.exists():
                # Listed in the user's config for the workspaces that have one.
                skipped.append(SkippedHook(str(path), "", "no such file in this workspace"))
                continue
        found, left_out = load_claude_hooks(path)
        specs += found
        skipped += left_out
    return HookSet(tuple(specs), tuple(skipped), config.timeout_seconds, config.output_limit_bytes)


async def _run_one(spec: HookSpec, data: bytes, cwd: Path, seconds: float, limit: int) -> HookRun:
    started = time.monotonic()
    env = shell_environment()
    env["SPARROW_PROJECT_DIR"] = env["CLAUDE_PROJECT_DIR"] = str(cwd)
    try:
        process = await anyio.open_process(
            spec.command if sys.platform == "win32" else ["/bin/sh", "-c", spec.command],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=sys.platform != "win32",
        )
    except OSError as exc:
        return HookRun(spec, None, "", str(exc), False, _ms(started), False, "")
    out, err = CappedOutput(limit), CappedOutput(limit)
    timed_out = False
    try:
        with anyio.move_on_after(seconds):
            await _communicate(process, data, out, err)
    finally:
        # Still running here means the time ran out (or the run was cancelled).
        if process.returncode is None:
            timed_out = True
            kill_group(process)
        with anyio.CancelScope(shield=True):
            await process.aclose()
    stdout, stderr = out.text(), err.text()
    code = None if timed_out else process.returncode
    blocked, reason = (False, "") if code is None else _decision(spec, code, stdout, stderr)
    return HookRun(
        spec,
        code,
        stdout,
        stderr,
        timed_out,
        _ms(started),
        blocked,
        reason,
        truncated=out.cut or err.cut,
    )


async def _communicate(process: Process, data: bytes, out: CappedOutput, err: CappedOutput) -> None:
    assert process.stdin and process.stdout and process.stderr
    drained = anyio.Event()
    pending = [2]

    async def drain(stream: ByteReceiveStream, sink: CappedOutput) -> None:
        await sink.drain(stream)
        pending[0] -= 1
        if not pending[0]:
            drained.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(_feed, process.stdin, data)
        tg.start_soon(drain, process.stdout, out)
        tg.start_soon(drain, process.stderr, err)
        await process.wait()
        # A background child may hold the pipes open long after the hook exited.
        with anyio.move_on_after(_PIPE_GRACE_SECONDS):
            await drained.wait()
        tg.cancel_scope.cancel()


async def _feed(stdin: ByteSendStream, data: bytes) -> None:
    # A hook need not read its stdin; it may exit before we finish writing.
    try:
        await stdin.send(data)
        await stdin.aclose()
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass


def _decision(spec: HookSpec, code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """Claude Code's conventions: exit 2 blocks with stderr as the reason; exit 0
    may block through JSON on stdout. Other exit codes are failures, not vetoes."""
    if code == 2:
        return True, stderr.strip() or f"blocked by hook: {spec.command}"
    if code != 0:
        return False, ""
    try:
        answer = json.loads(stdout)
    except ValueError:
        return False, ""
    if not isinstance(answer, dict):
        return False, ""
    if answer.get("decision") == "block":
        return True, _text(answer.get("reason")) or f"blocked by hook: {spec.command}"
    specific = answer.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
        reason = _text(specific.get("permissionDecisionReason"))
        return True, reason or f"blocked by hook: {spec.command}"
    return False, ""


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
