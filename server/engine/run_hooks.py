"""A run's hooks: the common payload fields, and a ``hook_ran`` event for
every hook that ran, so the transcript shows what vetoed or failed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from server.core.events import HookRan
from server.engine.channel import RunChannel

if TYPE_CHECKING:
    from server.engine.hooks.runner import HookOutcome, HookSet


class RunHooks:
    def __init__(
        self,
        hooks: HookSet | None,
        channel: RunChannel,
        *,
        run_id: str,
        session_id: str,
        workspace: Path,
        transcript: Path | None,
    ) -> None:
        self._hooks = hooks
        self._channel = channel
        self._common: dict[str, Any] = {
            "session_id": session_id,
            "run_id": run_id,
            "transcript_path": str(transcript) if transcript else "",
            "cwd": str(workspace),
            "workspace": str(workspace),
        }
        self._cwd = workspace

    def any_for(self, event: str, tool: str | None = None) -> bool:
        return self._hooks is not None and bool(self._hooks.matching(event, tool))

    async def fire(
        self, event: str, payload: dict[str, Any], *, tool: str | None = None, call_id: str = ""
    ) -> HookOutcome | None:
        """Run the hooks of ``event`` (for ``tool``); None when there are none."""
        if not self.any_for(event, tool):
            return None
        assert self._hooks is not None
        full = {"hook_event_name": event, **self._common, **payload}
        outcome = await self._hooks.run(event, full, tool=tool, cwd=self._cwd)
        for ran in outcome.runs:
            self._channel.emit(
                HookRan(
                    run_id=self._channel.run_id,
                    hook_event=event,
                    command=ran.spec.command,
                    exit_code=ran.exit_code,
                    blocked=ran.blocked,
                    reason=ran.reason or ran.problem,
                    timed_out=ran.timed_out,
                    duration_ms=ran.duration_ms,
                    call_id=call_id,
                )
            )
        return outcome
