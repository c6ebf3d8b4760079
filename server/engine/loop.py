"""The agent loop: stream a turn from the model, run the tools it asks for,
feed the results back, until the model answers without a tool call.

The loop makes every decision; it only reports them as events. It never prints.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

import anyio

from server.core.events import (
    ContextAssembled,
    ModelRequested,
    Notice,
    RunFinished,
    RunStarted,
    RunStatus,
    VerifyFinished,
)
from server.core.settings import Settings
from server.engine.approvals import Approver
from server.engine.calls import Batch, CallPipeline, CallState
from server.engine.channel import RunChannel
from server.engine.compactor import Compactor
from server.engine.context_tracker import ContextTracker
from server.engine.conversation import Conversation
from server.engine.guards import Budget, HardStop
from server.engine.permissions.autonomy import Decision
from server.engine.permissions.modes import Contract
from server.engine.reply import ReplyStreamer
from server.engine.run_control import RunControl
from server.engine.run_hooks import RunHooks
from server.engine.system_prompt import git_summary, project_instructions, system_prompt
from server.engine.tools.base import ToolContext
from server.engine.tools.registry import ToolSet
from server.engine.tools.shell import RunShell
from server.engine.workspace import Workspace
from server.providers.base import (
    AssistantMessage,
    Attachment,
    ContextTooLong,
    Message,
    Provider,
    ProviderError,
    ToolCall,
    ToolSpec,
    UserMessage,
)
from server.providers.pricing import ModelFacts, model_facts

if TYPE_CHECKING:  # pygit2 costs ~20 MB: loaded with the first checkpoint, not at start-up
    from server.engine.checkpoints import CheckpointStore
    from server.engine.hooks.runner import HookSet
    from server.engine.memory import WorkspaceMemory
    from server.engine.permissions.rulebook import RuleBook
    from server.engine.sandbox.base import Sandbox

MAX_TURNS: Final = 60

log = logging.getLogger(__name__)


def _supervised() -> Contract:
    return Contract()


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
    # The rules and their hit counts; None: the default protected paths only.
    rulebook: RuleBook | None = None
    # Asked at every tool call, so the dial turned mid-run counts from the next call.
    contract: Callable[[], Contract] = field(default=_supervised)
    # Who answers an Ask; None: nobody, so what would ask is denied.
    approver: Approver | None = None
    hooks: HookSet | None = None
    sandbox: Sandbox | None = None
    surface: str = "api"
    transcript: Path | None = None
    # The user's workspace when the run works elsewhere (its worktree): rules
    # and approvals saved "for this workspace" are scoped to it.
    home: Path | None = None
    # The conversation before this run's task (its earlier runs), oldest first.
    history: Sequence[Message] = ()
    continues: str = ""  # the run this one follows in the conversation
    # A run that only compacts its conversation (`/compact` as a follow-up): no model turn.
    compact_only: bool = False
    # Given to the model with the task (a handoff doc the conversation starts from).
    preamble: str = ""
    # Files and folders given with the task, as the model gets them (attachments/).
    attachments: tuple[Attachment, ...] = ()
    model_reason: str = ""  # why this model (shown in the run header)
    # The model's context window and prices; None: nothing is known of either.
    model_facts: ModelFacts | None = None
    # The memory of the user's workspace (its notes in the system prompt, the
    # memory tool's store); None: the run has none.
    memory: WorkspaceMemory | None = None

    @property
    def scope_root(self) -> str:
        return str(self.home or self.workspace.root)


@dataclass(frozen=True)
class RunOutcome:
    status: RunStatus
    reason: str
    turns: int


async def run_agent(
    run: AgentRun, channel: RunChannel, control: RunControl | None = None
) -> RunOutcome:
    """Drive ``run`` to its end and emit ``run_finished`` whatever happens.

    A cancelled run still emits ``run_finished`` (status ``cancelled``, with the
    control's reason) before the cancellation propagates.
    """
    control = control or RunControl()
    if run.model_facts is None:  # a model given directly (tests, scripts): what settings say
        run.model_facts = model_facts(run.provider.name, run.settings, price_id=None)
    facts = run.model_facts
    channel.emit(
        RunStarted(
            run_id=run.run_id,
            task=run.task,
            workspace=str(run.workspace.root),
            model=run.provider.name,
            session_id=run.session_id,
            model_reason=run.model_reason,
            context_window=facts.context_window,
            continues=run.continues,
        )
    )
    if run.sandbox is not None and run.sandbox.note:
        channel.emit(Notice(run_id=run.run_id, turn=0, text=run.sandbox.note))
    hooks = RunHooks(
        run.hooks,
        channel,
        run_id=run.run_id,
        session_id=run.session_id,
        workspace=run.workspace.root,
        transcript=run.transcript,
    )
    wall = run.settings.budget.max_wall_seconds
    try:
        with anyio.CancelScope(
            deadline=anyio.current_time() + wall if wall else float("inf")
        ) as budget_scope:
            async with run.provider:
                outcome = await _loop(run, channel, control, hooks)
        if budget_scope.cancelled_caught:
            outcome = RunOutcome(
                "stopped",
                f"hard stop: budget exceeded: the run's wall time passed {wall:g} s",
                control.turns,
            )
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
    except HardStop as exc:
        outcome = RunOutcome("stopped", f"hard stop: {exc}", control.turns)
    except ProviderError as exc:
        outcome = RunOutcome("failed", f"model error: {exc}", control.turns)
    except Exception as exc:
        log.exception("run %s failed", run.run_id)
        outcome = RunOutcome(
            "failed", f"internal error: {type(exc).__name__}: {exc}", control.turns
        )
    await hooks.fire("Stop", {"status": outcome.status, "reason": outcome.reason})
    channel.emit(
        RunFinished(
            run_id=run.run_id, status=outcome.status, reason=outcome.reason, turns=outcome.turns
        )
    )
    return outcome


async def _assemble(
    run: AgentRun, channel: RunChannel, specs: list[ToolSpec]
) -> tuple[str, int | None, str]:
    """The system prompt of every request of this run, announced as
    context_assembled, the model's window as known now, and the memory block
    the prompt ends with."""
    settings = run.settings
    git = await anyio.to_thread.run_sync(git_summary, run.workspace.root)
    instructions = project_instructions(run.workspace, settings.context.instructions_limit_bytes)
    memory = run.memory.block() if run.memory is not None else ""
    system = system_prompt(
        run.workspace,
        run.contract(),
        git=git,
        instructions=instructions,
        shell_timeout=settings.shell.timeout_seconds,
        memory=memory,
    )
    window = (
        run.model_facts.context_window if run.model_facts else None
    ) or run.provider.reported_window
    channel.emit(
        ContextAssembled(
            run_id=run.run_id,
            system=system,
            tools=[dataclasses.asdict(spec) for spec in specs],
            instructions=instructions.path if instructions else "",
            instructions_cut=bool(instructions and instructions.cut),
            history=len(run.history),
            context_window=window,
        )
    )
    if instructions is not None and instructions.cut:
        channel.emit(
            Notice(
                run_id=run.run_id,
                turn=0,
                text=f"{instructions.path} is {instructions.size:,} bytes: the model gets only "
                f"its first {settings.context.instructions_limit_bytes:,} "
                "([context] instructions_limit_bytes)",
            )
        )
    return system, window, memory


async def _loop(
    run: AgentRun, channel: RunChannel, control: RunControl, hooks: RunHooks
) -> RunOutcome:
    specs = run.tools.specs()
    system, window, memory = await _assemble(run, channel, specs)
    tracker = ContextTracker(
        channel,
        run.settings.context,
        system=system,
        specs=specs,
        window=window,
        memory_chars=len(memory),
    )
    tracker.count(run.history)
    conversation = Conversation(channel, run.history, on_add=tracker.added)
    if run.compact_only:
        return await _compact_only(run, channel, conversation, tracker, hooks)
    task = f"{run.task}\n\n{run.preamble}" if run.preamble else run.task
    conversation.add(UserMessage(task, run.attachments))
    tracker.emit(0)
    ctx = ToolContext(
        workspace=run.workspace, settings=run.settings, sandbox=run.sandbox, memory=run.memory
    )
    state = CallState()
    pipeline = CallPipeline(run, channel, ctx, hooks, state)
    budget = _budget(run)
    budget.check_start()
    await hooks.fire(
        "SessionStart",
        {
            "task": run.task,
            "model": run.provider.name,
            "source": "resume" if run.history else "startup",
        },
    )
    streamer = ReplyStreamer(run.provider, run.run_id, channel, budget)
    compactor = Compactor(run, channel, conversation, tracker, hooks, budget)
    for turn in range(1, MAX_TURNS + 1):
        control.turns = turn
        if control.compact_requested:
            control.compact_requested = False
            if not await compactor.compact(turn, "asked by the user"):
                channel.emit(Notice(run_id=run.run_id, turn=turn, text=NOTHING_TO_COMPACT))
        reason = tracker.reason_to_compact()
        if reason is not None:
            await compactor.compact(turn, reason)
        try:
            reply = await _request(run, channel, conversation, tracker, streamer, turn,
                                   specs, system)
        except ContextTooLong as exc:
            # The provider knows its window better than any figure here: compact, once.
            if not await compactor.compact(turn, f"the model said: {exc}"):
                raise ProviderError(
                    f"{exc} (and the conversation has nothing left to compact: only its "
                    "first message and the last ones)"
                ) from exc
            reply = await _request(run, channel, conversation, tracker, streamer, turn,
                                   specs, system)
        conversation.add(reply)
        tracker.emit(turn)
        if not reply.tool_calls:
            verdict = await _verify(run, channel, ctx, pipeline, turn)
            if verdict is None:
                return RunOutcome("completed", "the model gave its final answer", turn)
            conversation.add(UserMessage(verdict))
            continue
        batch = Batch(turn)
        for call in reply.tool_calls:
            conversation.add(await pipeline.call(batch, call))
        tracker.emit(turn)
    return RunOutcome("stopped", f"hard stop: reached the limit of {MAX_TURNS} turns", MAX_TURNS)


def _budget(run: AgentRun) -> Budget:
    """The run's limits, with the model's price when it is known."""
    pricer = run.model_facts.pricer if run.model_facts else None
    return Budget(run.settings.budget, run.provider.name, pricer)


NOTHING_TO_COMPACT = (
    "nothing to compact yet: the conversation holds only its first message and its last "
    "ones, which compaction keeps"
)


async def _compact_only(
    run: AgentRun,
    channel: RunChannel,
    conversation: Conversation,
    tracker: ContextTracker,
    hooks: RunHooks,
) -> RunOutcome:
    """`/compact` as a follow-up: the conversation compacted, no model turn."""
    tracker.emit(0)
    compactor = Compactor(run, channel, conversation, tracker, hooks, _budget(run))
    if await compactor.compact(0, "asked by the user (/compact)"):
        return RunOutcome("completed", "the conversation was compacted", 0)
    return RunOutcome("completed", NOTHING_TO_COMPACT, 0)


async def _request(
    run: AgentRun,
    channel: RunChannel,
    conversation: Conversation,
    tracker: ContextTracker,
    streamer: ReplyStreamer,
    turn: int,
    specs: list[ToolSpec],
    system: str,
) -> AssistantMessage:
    channel.emit(ModelRequested(run_id=run.run_id, turn=turn, messages=len(conversation)))
    tracker.request_sent()
    reply = await streamer.reply(turn, conversation.messages, specs, system)
    if streamer.last_usage is not None:
        tracker.measured(streamer.last_usage)
        tracker.emit(turn)  # the provider's own figure, before the reply joins
    return reply


async def _verify(
    run: AgentRun, channel: RunChannel, ctx: ToolContext, pipeline: CallPipeline, turn: int
) -> str | None:
    """After a run that changed files, the workspace's verify_command; what the
    model is told when it fails, None when it passed (or there is none)."""
    command = run.settings.workspace.verify_command.strip()
    if not command or not pipeline.state.had_mutation:
        return None
    pipeline.state.had_mutation = False  # verified again only after another change
    # A command from the workspace's own config is a shell command like any
    # other: it runs only where the gate would let run_shell run it unasked.
    call = ToolCall(id=f"verify-{turn}", name="run_shell", args={"command": command})
    verdict, _, _ = pipeline.judge(call, RunShell())
    if verdict.decision != Decision.ALLOW:
        channel.emit(
            Notice(
                run_id=run.run_id,
                turn=turn,
                text=f"verify_command `{command}` was not run: {verdict.reason} "
                f"(allow it with the rule run_shell({command}), or a higher autonomy level)",
            )
        )
        return None
    settings = run.settings
    shell = dataclasses.replace(
        settings.shell, timeout_seconds=settings.workspace.verify_timeout_seconds
    )
    verify_ctx = dataclasses.replace(ctx, settings=dataclasses.replace(settings, shell=shell))
    started = time.perf_counter()
    output = await RunShell().run({"command": command}, verify_ctx)
    channel.emit(
        VerifyFinished(
            run_id=run.run_id,
            turn=turn,
            command=command,
            ok=output.ok,
            exit_code=output.exit_code,
            output=output.content,
            duration_ms=round((time.perf_counter() - started) * 1000),
        )
    )
    if output.ok:
        return None
    return (
        f"The workspace's verify_command `{command}` failed after your changes:\n"
        f"{output.content}\n\nFix what it reports, then say you are done."
    )
