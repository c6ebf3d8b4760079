"""The agent loop: stream a turn from the model, run the tools it asks for,
feed the results back, until the model answers without a tool call.

The loop makes every decision; it only reports them as events. It never prints.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import anyio

from server.core.events import (
    FILES_SHOWN,
    CheckpointCreated,
    RunFinished,
    RunStarted,
    RunStatus,
    TextDelta,
    ToolRequested,
    ToolResult,
    UsageReported,
)
from server.core.settings import Settings
from server.engine.channel import RunChannel
from server.engine.tools.base import Risk, ToolArgumentError, ToolContext, ToolOutput
from server.engine.tools.registry import ToolSet
from server.engine.workspace import OutsideWorkspace, Workspace
from server.providers.base import (
    AssistantMessage,
    Message,
    Provider,
    ProviderError,
    TextChunk,
    ToolCall,
    ToolCallChunk,
    ToolResultMessage,
    Usage,
    UsageChunk,
    UserMessage,
)

if TYPE_CHECKING:  # pygit2 costs ~20 MB: loaded with the first checkpoint, not at start-up
    from server.engine.checkpoints import CheckpointStore

MAX_TURNS: Final = 60
# Calls that change the workspace: each batch of them starts with a checkpoint.
CHECKPOINTED: Final = frozenset({Risk.MUTATING, Risk.EXEC, Risk.DESTRUCTIVE})
UNKNOWN_RISK: Final = "Unknown"

log = logging.getLogger(__name__)


@dataclass
class AgentRun:
    run_id: str
    session_id: str
    task: str
    workspace: Workspace
    provider: Provider
    tools: ToolSet
    settings: Settings
    checkpoints: CheckpointStore | None = None


@dataclass(frozen=True)
class RunOutcome:
    status: RunStatus
    reason: str
    turns: int


@dataclass
class RunControl:
    """What the owner of a live run tells the loop from outside."""

    cancel_reason: str = "cancelled by the user"
    turns: int = 0


async def run_agent(
    run: AgentRun, channel: RunChannel, control: RunControl | None = None
) -> RunOutcome:
    """Drive ``run`` to its end and emit ``run_finished`` whatever happens.

    A cancelled run still emits ``run_finished`` (status ``cancelled``, with the
    control's reason) before the cancellation propagates.
    """
    control = control or RunControl()
    channel.emit(
        RunStarted(
            run_id=run.run_id,
            task=run.task,
            workspace=str(run.workspace.root),
            model=run.provider.name,
            session_id=run.session_id,
        )
    )
    try:
        outcome = await _loop(run, channel, control)
    except anyio.get_cancelled_exc_class():
        channel.emit(
            RunFinished(
                run_id=run.run_id,
                status="cancelled",
                reason=control.cancel_reason,
                turns=control.turns,
            )
        )
        raise
    except ProviderError as exc:
        outcome = RunOutcome("failed", f"model error: {exc}", control.turns)
    except Exception as exc:
        log.exception("run %s failed", run.run_id)
        outcome = RunOutcome(
            "failed", f"internal error: {type(exc).__name__}: {exc}", control.turns
        )
    channel.emit(
        RunFinished(
            run_id=run.run_id, status=outcome.status, reason=outcome.reason, turns=outcome.turns
        )
    )
    return outcome


async def _loop(run: AgentRun, channel: RunChannel, control: RunControl) -> RunOutcome:
    messages: list[Message] = [UserMessage(run.task)]
    specs = run.tools.specs()
    ctx = ToolContext(workspace=run.workspace, settings=run.settings)
    for turn in range(1, MAX_TURNS + 1):
        control.turns = turn
        text: list[str] = []
        calls: list[ToolCall] = []
        usage: Usage | None = None
        async for part in run.provider.stream(messages, specs):
            if isinstance(part, TextChunk):
                text.append(part.text)
                channel.emit(TextDelta(run_id=run.run_id, turn=turn, text=part.text))
            elif isinstance(part, ToolCallChunk):
                calls.append(part.call)
            elif isinstance(part, UsageChunk):
                usage = part.usage
        if usage is not None:
            channel.emit(UsageReported(run_id=run.run_id, turn=turn, **usage.__dict__))
        messages.append(AssistantMessage("".join(text), tuple(calls)))
        if not calls:
            return RunOutcome("completed", "the model gave its final answer", turn)
        checkpointed = False
        for call in calls:
            result, checkpointed = await _call_tool(run, channel, ctx, turn, call, checkpointed)
            messages.append(result)
    return RunOutcome("stopped", f"hard stop: reached the limit of {MAX_TURNS} turns", MAX_TURNS)


async def _checkpoint(run: AgentRun, channel: RunChannel, turn: int, tool: str) -> str | None:
    """Checkpoint the workspace before a call changes it; the error, if that fails."""
    from server.engine.checkpoints import CheckpointError

    assert run.checkpoints is not None
    store = run.checkpoints
    # No changed-paths hint: another run may be changing the same workspace, and
    # only a stat scan sees its edits too.
    create = functools.partial(
        store.create, run.workspace.root, run_id=run.run_id, turn=turn, tool=tool
    )
    try:
        checkpoint = await anyio.to_thread.run_sync(create)
    except CheckpointError as exc:
        return str(exc)
    channel.emit(
        CheckpointCreated(
            run_id=run.run_id,
            turn=turn,
            tool=tool,
            checkpoint_id=checkpoint.id,
            files_changed=checkpoint.files_changed[:FILES_SHOWN],
            files_changed_count=len(checkpoint.files_changed),
            bytes_stored=checkpoint.bytes_stored,
            duration_ms=checkpoint.duration_ms,
            skipped_count=len(checkpoint.skipped),
        )
    )
    return None


async def _call_tool(
    run: AgentRun,
    channel: RunChannel,
    ctx: ToolContext,
    turn: int,
    call: ToolCall,
    checkpointed: bool,
) -> tuple[ToolResultMessage, bool]:
    """Run one call; returns its result and whether the batch is checkpointed now."""
    tool = run.tools.get(call.name)
    channel.emit(
        ToolRequested(
            run_id=run.run_id,
            turn=turn,
            call_id=call.id,
            tool=call.name,
            args=call.args,
            risk=tool.risk.value if tool else UNKNOWN_RISK,
        )
    )
    started = time.perf_counter()
    failure = None
    if tool is not None and tool.risk in CHECKPOINTED and run.checkpoints and not checkpointed:
        failure = await _checkpoint(run, channel, turn, call.name)
        checkpointed = failure is None
    if failure is not None:
        output = ToolOutput(
            False, f"not run: the workspace could not be checkpointed first: {failure}"
        )
    elif tool is None:
        output = ToolOutput(
            False, f"unknown tool '{call.name}'; available: {', '.join(run.tools.names())}"
        )
    else:
        try:
            output = await tool.run(call.args, ctx)
        except (ToolArgumentError, OutsideWorkspace) as exc:
            output = ToolOutput(False, str(exc))
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            output = ToolOutput(False, f"{call.name}: {exc.strerror or exc}{where}")
    channel.emit(
        ToolResult(
            run_id=run.run_id,
            turn=turn,
            call_id=call.id,
            tool=call.name,
            ok=output.ok,
            output=output.content,
            truncated=output.truncated,
            duration_ms=round((time.perf_counter() - started) * 1000),
        )
    )
    message = ToolResultMessage(
        call_id=call.id, tool=call.name, content=output.content, ok=output.ok
    )
    return message, checkpointed
