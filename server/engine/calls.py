"""One tool call, from the model's request to the result it reads:

    gate (boundary, mode, rules, autonomy) -> approval when it asks
      -> PreToolUse hooks -> checkpoint (first change of the batch, with
      PreCheckpoint / PostCheckpoint hooks) -> the tool, in the sandbox
      -> PostToolUse hooks -> failure streak

Every step is reported as an event; a refusal reaches the model as the
call's result, so it can change course."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from server.core.events import (
    FILES_SHOWN,
    CheckpointCreated,
    GateDecided,
    Notice,
    ToolRequested,
    ToolResult,
)
from server.engine.asking import ask_person, denial_text
from server.engine.channel import RunChannel
from server.engine.guards import FailureStreaks, HardStop
from server.engine.permissions.autonomy import Decision
from server.engine.permissions.gate import CallFacts, GateVerdict, judge
from server.engine.permissions.modes import Contract
from server.engine.permissions.protected import protected_part
from server.engine.permissions.rules import DEFAULT_RULES, Effect, Rule
from server.engine.run_hooks import RunHooks
from server.engine.tools.base import Risk, Tool, ToolArgumentError, ToolContext, ToolOutput
from server.engine.workspace import OutsideWorkspace
from server.providers.base import ToolCall, ToolResultMessage

if TYPE_CHECKING:
    from server.engine.loop import AgentRun

UNKNOWN_RISK = "Unknown"
# Calls that change the workspace; a crash half-way through one rolls its batch back.
WRITES = frozenset({Risk.MUTATING, Risk.DESTRUCTIVE})


@dataclass
class Batch:
    """The calls of one model turn: they share a checkpoint."""

    turn: int
    checkpoint_id: str | None = None
    rolled_back: str = ""  # why, once it was


@dataclass
class CallState:
    had_mutation: bool = False


class CallPipeline:
    def __init__(
        self,
        run: AgentRun,
        channel: RunChannel,
        ctx: ToolContext,
        hooks: RunHooks,
        state: CallState,
    ) -> None:
        self.run = run
        self.channel = channel
        self.ctx = ctx
        self.hooks = hooks
        self.state = state
        self.streaks = FailureStreaks()

    # --- the whole call --------------------------------------------------------

    async def call(self, batch: Batch, call: ToolCall) -> ToolResultMessage:
        run = self.run
        tool = run.tools.get(call.name)
        self.channel.emit(
            ToolRequested(
                run_id=run.run_id,
                turn=batch.turn,
                call_id=call.id,
                tool=call.name,
                args=call.args,
                risk=risk_of(tool, call.args).value if tool else UNKNOWN_RISK,
            )
        )
        started = time.perf_counter()
        stop: str | None = None
        if tool is None:
            output = ToolOutput(
                False, f"unknown tool '{call.name}'; available: {', '.join(run.tools.names())}"
            )
        elif batch.rolled_back:
            output = ToolOutput(False, f"not run: {batch.rolled_back}")
        else:
            output, stop = await self._judged(batch, call, tool)
        self.channel.emit(
            ToolResult(
                run_id=run.run_id,
                turn=batch.turn,
                call_id=call.id,
                tool=call.name,
                ok=output.ok,
                output=output.content,
                truncated=output.truncated,
                duration_ms=round((time.perf_counter() - started) * 1000),
            )
        )
        if stop is not None:
            raise HardStop(stop)
        if tool is not None:
            await self.hooks.fire(
                "PostToolUse",
                {
                    **_tool_fields(call, tool),
                    "tool_response": {"ok": output.ok, "output": output.content},
                },
                tool=call.name,
                call_id=call.id,
            )
        self.streaks.record(call.name, output.ok)
        return ToolResultMessage(
            call_id=call.id, tool=call.name, content=output.content, ok=output.ok
        )

    async def _judged(
        self, batch: Batch, call: ToolCall, tool: Tool
    ) -> tuple[ToolOutput, str | None]:
        """The call's output, and a hard stop's reason when it ends the run."""
        verdict, contract, rules = self.judge(call, tool)
        self._report(batch, call, verdict, contract)
        if verdict.hard_stop is not None:
            return ToolOutput(False, f"refused: {verdict.reason}"), verdict.hard_stop
        if verdict.decision == Decision.DENY:
            return ToolOutput(False, f"denied: {verdict.reason}"), None
        if verdict.decision == Decision.ASK:
            answer = await ask_person(
                self.run, self.channel, self.hooks, batch.turn, call, tool, verdict
            )
            if not answer.allows:
                return ToolOutput(False, denial_text(answer)), None
        if verdict.notify:
            await self._notify(batch, call, tool, verdict)
        blocked = await self.hooks.fire(
            "PreToolUse", _tool_fields(call, tool), tool=call.name, call_id=call.id
        )
        if blocked is not None and blocked.blocked:
            return ToolOutput(False, f"blocked by a PreToolUse hook: {blocked.reason}"), None
        if (
            verdict.needs_checkpoint
            and getattr(tool, "touches_workspace", True)
            and self.run.checkpoints
            and batch.checkpoint_id is None
        ):
            failure = await self._checkpoint(batch, call)
            if failure is not None:
                return ToolOutput(
                    False, f"not run: the workspace could not be checkpointed first: {failure}"
                ), None
        return await self._execute(batch, call, tool, rules)

    # --- judging ---------------------------------------------------------------

    def judge(self, call: ToolCall, tool: Tool) -> tuple[GateVerdict, Contract, list[Rule]]:
        """The gate's verdict on ``call``, with the contract and rules it used."""
        run = self.run
        contract = run.contract()
        root = run.scope_root
        rules = (
            run.rulebook.rules(workspace=root, session_id=run.session_id)
            if run.rulebook is not None
            else list(DEFAULT_RULES)
        )
        facts = CallFacts(
            tool=call.name,
            risk=risk_of(tool, call.args),
            args=call.args,
            workspace=run.workspace,
            session_id=run.session_id,
            provider=run.provider.name,
            surface=run.surface,
            scope_root=root,
        )
        verdict = judge(facts, contract, rules)
        if verdict.rule is not None and run.rulebook is not None:
            run.rulebook.record_hit(verdict.rule)
        return verdict, contract, rules

    def _report(
        self, batch: Batch, call: ToolCall, verdict: GateVerdict, contract: Contract
    ) -> None:
        self.channel.emit(
            GateDecided(
                run_id=self.run.run_id,
                turn=batch.turn,
                call_id=call.id,
                tool=call.name,
                decision=verdict.decision.value,
                reason=verdict.reason,
                decided_by=verdict.decided_by,
                rule=verdict.rule.spec if verdict.rule else "",
                rule_id=verdict.rule.id if verdict.rule else "",
                mode=contract.mode.value,
                level=contract.level,
                band=contract.band.value,
                needs_checkpoint=verdict.needs_checkpoint,
                notify=verdict.notify,
            )
        )

    async def _notify(self, batch: Batch, call: ToolCall, tool: Tool, verdict: GateVerdict) -> None:
        text = f"{call.name} ran without asking ({verdict.reason})"
        self.channel.emit(
            Notice(run_id=self.run.run_id, turn=batch.turn, call_id=call.id, text=text)
        )
        await self.hooks.fire("Notification", {"message": text}, call_id=call.id)

    # --- doing -----------------------------------------------------------------

    async def _checkpoint(self, batch: Batch, call: ToolCall) -> str | None:
        """Checkpoint the workspace before the batch's first change; the error, if any."""
        from server.engine.checkpoints import CheckpointError

        run = self.run
        assert run.checkpoints is not None
        fields = {"tool_name": call.name, "turn": batch.turn}
        await self.hooks.fire("PreCheckpoint", fields, tool=call.name, call_id=call.id)
        # No changed-paths hint from the tools: another run, or the user, may be
        # changing the same workspace; the file watch (or, failing it, a stat
        # scan) sees every edit, whoever made it.
        create = functools.partial(
            run.checkpoints.create,
            run.workspace.root,
            run_id=run.run_id,
            turn=batch.turn,
            tool=call.name,
        )
        try:
            checkpoint = await anyio.to_thread.run_sync(create)
        except CheckpointError as exc:
            return str(exc)
        batch.checkpoint_id = checkpoint.id
        self.channel.emit(
            CheckpointCreated(
                run_id=run.run_id,
                turn=batch.turn,
                tool=call.name,
                checkpoint_id=checkpoint.id,
                files_changed=checkpoint.files_changed[:FILES_SHOWN],
                files_changed_count=len(checkpoint.files_changed),
                bytes_stored=checkpoint.bytes_stored,
                duration_ms=checkpoint.duration_ms,
                skipped_count=len(checkpoint.skipped),
                baseline=checkpoint.baseline,
            )
        )
        await self.hooks.fire(
            "PostCheckpoint",
            {
                **fields,
                "checkpoint_id": checkpoint.id,
                "files_changed": checkpoint.files_changed[:FILES_SHOWN],
            },
            tool=call.name,
            call_id=call.id,
        )
        return None

    async def _execute(
        self, batch: Batch, call: ToolCall, tool: Tool, rules: list[Rule]
    ) -> tuple[ToolOutput, str | None]:
        ctx = dataclasses.replace(self.ctx, denied=_denied_for(call.name, rules))
        try:
            output = await tool.run(call.args, ctx)
        except ToolArgumentError as exc:
            return ToolOutput(False, str(exc)), None
        except OutsideWorkspace as exc:
            # The gate let it through, so the file system changed under it (a
            # symlink swapped in): for a write, that is an escape attempt.
            if tool.risk in WRITES:
                return ToolOutput(False, str(exc)), f"write outside the workspace: {exc}"
            return ToolOutput(False, str(exc)), None
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            text = f"{call.name}: {exc.strerror or exc}{where}"
            if tool.risk in WRITES and batch.checkpoint_id is not None:
                text += await self._roll_back(batch)
            return ToolOutput(False, text), None
        if output.ok and tool.risk in WRITES and getattr(tool, "touches_workspace", True):
            self.state.had_mutation = True
        return output, None

    async def _roll_back(self, batch: Batch) -> str:
        """A change that failed half-way: put the batch's files back as its
        checkpoint had them (autonomy-and-safety.md, Checkpoint Discipline)."""
        run = self.run
        assert run.checkpoints is not None and batch.checkpoint_id is not None
        rollback = functools.partial(
            run.checkpoints.rollback, run.workspace.root, batch.checkpoint_id
        )
        try:
            await anyio.to_thread.run_sync(rollback)
        except Exception as exc:  # the failure is reported either way; the run goes on
            return f"; rolling the batch back failed too: {exc}"
        batch.rolled_back = (
            f"an earlier call of this batch failed half-way and the batch was rolled back "
            f"to checkpoint {batch.checkpoint_id}"
        )
        return f"; the batch was rolled back to checkpoint {batch.checkpoint_id}"


def risk_of(tool: Tool, args: dict[str, Any]) -> Risk:
    """A tool's risk for these arguments: most tools have one; a tool whose
    actions differ (memory: recall reads, remember writes) says per call."""
    per_call = getattr(tool, "risk_for", None)
    return per_call(args) if callable(per_call) else tool.risk


def _tool_fields(call: ToolCall, tool: Tool) -> dict[str, Any]:
    return {
        "tool_name": call.name,
        "tool_input": call.args,
        "tool_use_id": call.id,
        "risk": risk_of(tool, call.args).value,
    }


def _denied_for(tool: str, rules: list[Rule]) -> Callable[[str], bool]:
    """What a folder-walking tool must leave out: protected paths and the paths
    of deny rules for it."""
    denying = [
        r for r in rules if r.effect == Effect.DENY and r.kind == "path" and r.names_tool(tool)
    ]

    def denied(relative: str) -> bool:
        if protected_part(relative) is not None:
            return True
        return any(r.pattern is None or r.matches_path(relative) for r in denying)

    return denied
