"""A compaction in a live run: the PreCompact hook, the summary, the handoff
doc, the ``compacted`` event, the PostCompact hook, and the meter started over
from what the next request really holds."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio

from server.core.events import Compacted, Notice, UsageReported
from server.engine.channel import RunChannel
from server.engine.compaction import compacted, plan_cut, render, summarise
from server.engine.context_tracker import ContextTracker
from server.engine.conversation import Conversation
from server.engine.guards import Budget
from server.engine.run_hooks import RunHooks
from server.providers.codec import message_to_dict

if TYPE_CHECKING:
    from server.engine.loop import AgentRun

log = logging.getLogger(__name__)


class Compactor:
    def __init__(
        self,
        run: AgentRun,
        channel: RunChannel,
        conversation: Conversation,
        tracker: ContextTracker,
        hooks: RunHooks,
        budget: Budget,
    ) -> None:
        self.run = run
        self.channel = channel
        self.conversation = conversation
        self.tracker = tracker
        self.hooks = hooks
        self.budget = budget

    async def compact(self, turn: int, reason: str) -> bool:
        """Compact now; False when there is no middle to summarise yet (only the
        first message and the last ones): the next turn asks again."""
        run, messages = self.run, self.conversation.messages
        cut = plan_cut(messages)
        if cut is None:
            return False
        before = self.tracker.meter.transcript_chars
        await self.hooks.fire("PreCompact", {"trigger": "auto", "reason": reason})
        middle = messages[cut.start : cut.end]
        summary, by, usage = await summarise(run.provider, middle, self.tracker.summary_limit)
        if usage is not None:
            cost = self.budget.cost_of(usage)
            self.channel.emit(UsageReported(
                run_id=run.run_id, turn=turn, cost_usd=cost, **usage.__dict__))
            self.budget.spend(usage, cost)
        fresh = compacted(messages, cut, summary)
        handoff = await anyio.to_thread.run_sync(self._handoff, render(middle))
        self.conversation.replace(fresh)
        self.tracker.compacted(fresh)
        self.channel.emit(Compacted(
            run_id=run.run_id,
            turn=turn,
            reason=reason,
            before_chars=before,
            after_chars=self.tracker.meter.transcript_chars,
            dropped=cut.end - cut.start,
            summary=summary,
            summarised_by=by,
            handoff_path=handoff,
            messages=[message_to_dict(m) for m in fresh],
        ))
        await self.hooks.fire("PostCompact", {
            "trigger": "auto", "reason": reason, "handoff_path": handoff,
            "before_chars": before, "after_chars": self.tracker.meter.transcript_chars,
        })
        self.tracker.emit(turn)
        return True

    def _handoff(self, lines: list[str]) -> str:
        """The handoff doc of what was summarised; "" when it cannot be written."""
        from server.engine.handoff import distill, write_handoff

        doc = distill(lines, task=self.run.task, context=self.tracker.meter.summary())
        try:
            return str(write_handoff(doc, self.run.workspace.root))
        except OSError as exc:
            log.warning("handoff doc not written: %s", exc)
            self.channel.emit(Notice(run_id=self.run.run_id, turn=0,
                                     text=f"the handoff doc could not be written: {exc}"))
            return ""
