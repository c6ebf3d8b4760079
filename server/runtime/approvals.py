"""The approvals a live run waits on, and the answers any surface gives.

One ``ApprovalDesk`` per runtime: a run asks through its own ``Approver``
(only that run pauses), and the window, a browser or the CLI answer by run id
and call id. The first answer wins; a late one finds nothing to answer."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio

from server.engine.approvals import ApprovalAnswer, ApprovalQuestion, Approver


class NothingToAnswer(LookupError):
    """No call of that run waits for an answer (never asked, answered, or timed out)."""


@dataclass
class _Waiting:
    question: ApprovalQuestion
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: ApprovalAnswer | None = None


class ApprovalDesk:
    def __init__(self) -> None:
        self._waiting: dict[tuple[str, str], _Waiting] = {}

    def approver_for(self, run_id: str) -> Approver:
        return _RunApprover(self, run_id)

    def waiting(self, run_id: str) -> int:
        """How many calls of ``run_id`` wait for an answer."""
        return sum(1 for rid, _ in self._waiting if rid == run_id)

    def pending(self, run_id: str) -> list[ApprovalQuestion]:
        """The questions of ``run_id`` that wait for an answer now, oldest first:
        what a surface that missed their events (a socket that dropped) asks again."""
        return [
            waiting.question
            for (rid, _), waiting in self._waiting.items()
            if rid == run_id and waiting.answer is None
        ]

    def answer(self, run_id: str, call_id: str, answer: ApprovalAnswer) -> ApprovalQuestion:
        waiting = self._waiting.get((run_id, call_id))
        if waiting is None or waiting.answer is not None:
            raise NothingToAnswer(f"no call {call_id} of run {run_id} is waiting for an answer")
        waiting.answer = answer
        waiting.answered.set()
        return waiting.question

    async def _ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        key = (question.run_id, question.call_id)
        waiting = self._waiting[key] = _Waiting(question)
        try:
            await waiting.answered.wait()
        finally:
            self._waiting.pop(key, None)
        assert waiting.answer is not None
        return waiting.answer


class _RunApprover:
    def __init__(self, desk: ApprovalDesk, run_id: str) -> None:
        self._desk = desk
        self._run_id = run_id

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        return await self._desk._ask(question)
