"""Asking a person about one call: the approval request every surface sees,
the OnApprovalRequested hooks, the wait (bounded by the settings), and the
rule an "allow always" answer saves."""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING

import anyio

from server.core.events import ApprovalRequested, ApprovalResolved
from server.engine.approvals import ApprovalAnswer, ApprovalQuestion, Unattended, suggest_rules
from server.engine.channel import RunChannel
from server.engine.permissions.gate import GateVerdict
from server.engine.permissions.rules import Effect
from server.engine.run_hooks import RunHooks
from server.engine.tools.base import Tool
from server.providers.base import ToolCall

if TYPE_CHECKING:
    from server.engine.loop import AgentRun


async def ask_person(
    run: AgentRun,
    channel: RunChannel,
    hooks: RunHooks,
    turn: int,
    call: ToolCall,
    tool: Tool,
    verdict: GateVerdict,
) -> ApprovalAnswer:
    """Pause the call until a person answers (or the time runs out); an
    "allow always" answer saves the suggested rules first."""
    timeout = run.settings.permissions.approval_timeout_seconds
    expires_at = time.time() + timeout
    question = ApprovalQuestion(
        run_id=run.run_id,
        call_id=call.id,
        tool=call.name,
        args=call.args,
        risk=tool.risk.value,
        reason=verdict.reason,
        suggested_rules=suggest_rules(call.name, call.args),
        timeout_seconds=timeout,
        expires_at=expires_at,
    )
    channel.emit(
        ApprovalRequested(
            run_id=run.run_id,
            turn=turn,
            call_id=call.id,
            tool=call.name,
            args=call.args,
            risk=tool.risk.value,
            reason=verdict.reason,
            suggested_rule=question.suggested_rule,
            timeout_seconds=timeout,
            expires_at=expires_at,
        )
    )
    approver = run.approver or Unattended()
    answer = ApprovalAnswer("timeout", by="timeout", message=f"no answer within {timeout:g} s")
    async with anyio.create_task_group() as tg:
        tg.start_soon(
            functools.partial(
                hooks.fire,
                "OnApprovalRequested",
                {
                    "tool_name": call.name,
                    "tool_input": call.args,
                    "reason": verdict.reason,
                    "suggested_rule": question.suggested_rule,
                },
                tool=call.name,
                call_id=call.id,
            )
        )
        with anyio.move_on_after(timeout):
            answer = await approver.ask(question)
    saved = ""
    if answer.decision == "allow_always" and run.rulebook is not None:
        for spec in question.suggested_rules:
            run.rulebook.create(
                Effect.ALLOW.value,
                spec,
                scope=answer.scope.value,
                workspace=run.scope_root,
                session_id=run.session_id,
            )
        saved = question.suggested_rule
    channel.emit(
        ApprovalResolved(
            run_id=run.run_id,
            call_id=call.id,
            decision=answer.decision,
            by=answer.by,
            message=answer.message,
            rule=saved,
            scope=answer.scope.value if saved else "",
        )
    )
    return answer


def denial_text(answer: ApprovalAnswer) -> str:
    if answer.decision == "timeout":
        return f"denied: nobody answered the approval request ({answer.message})"
    text = f"denied by {answer.by or 'the user'}"
    return f"{text}: {answer.message}" if answer.message else text
