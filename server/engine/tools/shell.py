"""run_shell: a command in the run's sandbox, through the platform's shell.

The command runs in its own process group so that a timeout or a cancelled run
kills everything it started, not just the shell. Output is capped; the model
sees the exit code, stdout and stderr."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import anyio

from server.engine.processes import CappedOutput, kill_group
from server.engine.sandbox.local import LocalSandbox
from server.engine.tools.base import (
    Risk,
    ToolContext,
    ToolOutput,
    check_args,
    string_schema,
    truncate,
)


class RunShell:
    name = "run_shell"
    description = (
        "Run a shell command (sh -c) in the workspace folder and return its exit code, "
        "stdout and stderr (each cut when long). Non-interactive: a command that waits for "
        "input, a pager or an editor fails; the command is killed after a timeout."
    )
    risk = Risk.EXEC
    parameters = string_schema({"command": "The command line, run by the system shell."})

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        command = check_args(self, args)["command"]
        if not command.strip():
            return ToolOutput(False, "run_shell: the command is empty")
        limit = ctx.settings.shell.output_limit_bytes
        timeout = ctx.settings.shell.timeout_seconds
        sandbox = ctx.sandbox or LocalSandbox(ctx.workspace)
        if sys.platform == "win32":
            # cmd.exe parses its own command line, so it gets the string as it
            # is; no sandbox there wraps commands.
            program: str | list[str] = command
        else:
            program = sandbox.command(["/bin/sh", "-c", command])
        process = await anyio.open_process(
            program,
            cwd=sandbox.root,
            env=sandbox.environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=sys.platform != "win32",
        )
        # One byte over the limit: enough for truncate() to know it cut.
        out, err = CappedOutput(limit + 1), CappedOutput(limit + 1)
        timed_out = False
        try:
            with anyio.move_on_after(timeout) as scope:
                async with anyio.create_task_group() as tg:
                    assert process.stdout is not None and process.stderr is not None
                    tg.start_soon(out.drain, process.stdout)
                    tg.start_soon(err.drain, process.stderr)
                await process.wait()
            timed_out = scope.cancelled_caught
        finally:
            with anyio.CancelScope(shield=True):
                if process.returncode is None:
                    kill_group(process)
                    await process.wait()
                # Cancelled mid-read, the pipes are still open: close them now, not
                # in a garbage collector's warning later.
                await process.aclose()
        return _result(process.returncode, out, err, limit, timeout if timed_out else None)


def _result(
    code: int | None, out: CappedOutput, err: CappedOutput, limit: int, timeout: float | None
) -> ToolOutput:
    stdout, cut_out = truncate(out.text(), limit)
    stderr, cut_err = truncate(err.text(), limit)
    parts = []
    if timeout is not None:
        parts.append(f"timed out after {timeout:g} s; the command and its children were killed")
    else:
        parts.append(f"exit code {code}")
    if stdout:
        parts.append(f"stdout:\n{stdout.rstrip()}")
    if stderr:
        parts.append(f"stderr:\n{stderr.rstrip()}")
    return ToolOutput(
        ok=timeout is None and code == 0,
        content="\n".join(parts),
        truncated=cut_out or cut_err,
        exit_code=code if timeout is None else None,
    )
