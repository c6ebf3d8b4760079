"""The agents at run time: listed with their next and last runs, started (by
hand or by the scheduler) as ordinary conversations, stopped, and their files
read and written. The window, the CLI, the scheduler and the tray all go
through here, so an agent starts the same way whoever starts it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from server.engine.agents import (
    AgentDef,
    AgentFileError,
    AgentFolder,
    AgentListing,
    AgentRecords,
    InvalidAgent,
)
from server.engine.agents.cron import next_after
from server.engine.approvals import Approver
from server.engine.store import RunInfo
from server.runtime.runs import RunRequest, RunRequestError

if TYPE_CHECKING:
    from server.runtime.runs import RunManager

HAND = "hand"  # started by someone: the window, the CLI, the tray
SCHEDULE = "schedule"  # started by the scheduler at a cron time


@dataclass(frozen=True)
class AgentStatus:
    agent: AgentDef
    next_run: float | None  # None: no schedule
    last_run: RunInfo | None
    last_trigger: str | None

    @property
    def running(self) -> bool:
        return self.last_run is not None and self.last_run.status == "running"

    def to_dict(self) -> dict[str, Any]:
        last = self.last_run
        return self.agent.to_dict() | {
            "next_run": self.next_run,
            "running": self.running,
            "last_run": None if last is None else {
                "id": last.id,
                "status": last.status,
                "reason": last.reason,
                "created_at": last.created_at,
                "finished_at": last.finished_at,
                "trigger": self.last_trigger,
            },
        }


def run_request(agent: AgentDef, *, surface: str, approver: Approver | None) -> RunRequest:
    """The run an agent file asks for: its body is the task."""
    return RunRequest(
        workspace=agent.workspace,
        task=agent.task,
        model=agent.model,
        mode=agent.mode,
        autonomy=agent.autonomy,
        sandbox=agent.sandbox,
        surface=surface,
        approver=approver,
        budget=dict(agent.budget) or None,
    )


class AgentRuntime:
    def __init__(self, runs: RunManager) -> None:
        self.runs = runs
        self.folder = AgentFolder(runs.paths.agents)
        self.records = AgentRecords(runs.store)
        # Called after a file is written or deleted here (the scheduler wakes up).
        self.on_change: list[Callable[[], None]] = []

    # --- listing ---------------------------------------------------------------

    def listing(self) -> AgentListing:
        return self.folder.scan()

    def status_of(self, agent: AgentDef, now: float | None = None) -> AgentStatus:
        now = time.time() if now is None else now
        next_run = next_after(agent.schedule, now) if agent.schedule else None
        rows = self.records.runs_of(agent.name, limit=1)
        last = self.runs.store.get_run(rows[0].run_id) if rows else None
        return AgentStatus(agent, next_run, last, rows[0].trigger if rows else None)

    def statuses(self, now: float | None = None) -> tuple[list[AgentStatus], list[InvalidAgent]]:
        """Every valid agent with its next and last run, and the invalid files with
        their reasons: what the window, ``sparrow agent list`` and the tray show."""
        listing = self.listing()
        return [self.status_of(a, now) for a in listing.agents], listing.invalid

    def agent(self, name: str) -> AgentDef:
        """The valid agent ``name``; RunRequestError (with the file's reason) otherwise."""
        try:
            path = self.folder.path_of(name)
            if not path.exists():
                raise RunRequestError(f"no agent {name!r}: there is no {path}")
            return self.folder.load(path)
        except AgentFileError as exc:
            raise RunRequestError(f"the agent {name!r} is not valid: {exc}") from exc

    # --- runs --------------------------------------------------------------------

    def start(
        self,
        name: str,
        *,
        surface: str = "api",
        approver: Approver | None = None,
        trigger: str = HAND,
        fire_time: float | None = None,
    ) -> RunInfo:
        """Start the agent's run now: a new conversation. Refused while the agent's
        previous run still goes (here or in another Sparrow process)."""
        agent = self.agent(name)
        going = self.live_run(name)
        if going is not None:
            raise RunRequestError(
                f"the agent {name!r} is still running ({going.id}): stop it or wait for it"
            )
        info = self.runs.start(run_request(agent, surface=surface, approver=approver))
        self.records.record_run(info.id, name, trigger, fire_time)
        return info

    def live_run(self, name: str) -> RunInfo | None:
        rows = self.records.runs_of(name, limit=1)
        info = self.runs.store.get_run(rows[0].run_id) if rows else None
        return info if info is not None and info.status == "running" else None

    def stop(self, name: str, reason: str = "stopped by the user") -> RunInfo | None:
        """Cancel the agent's run going in this process; None when there is none."""
        info = self.live_run(name)
        if info is None or not self.runs.cancel(info.id, reason):
            return None
        return info

    def agents_of(self, run_ids: list[str]) -> dict[str, str]:
        return self.records.agents_of(run_ids)

    # --- the files -----------------------------------------------------------------

    def read(self, name: str) -> str | None:
        """The file's text; None when there is no such file."""
        try:
            return self.folder.read(name)
        except AgentFileError as exc:
            raise RunRequestError(str(exc)) from exc

    def write(self, name: str, text: str) -> AgentDef:
        """Checked, then written; AgentFileError (the file untouched) when not valid."""
        agent = self.folder.write(name, text)
        self._changed()
        return agent

    def delete(self, name: str) -> bool:
        """False when there is no such file. Refused (RunRequestError) while the
        agent's run goes, here or in another Sparrow process: its file is what
        says which agent the run belongs to, and what the tray lists to stop."""
        going = self.live_run(name)
        if going is not None:
            raise RunRequestError(
                f"the agent {name!r} is running ({going.id}): stop it or wait for it "
                "before you delete it"
            )
        gone = self.folder.delete(name)
        if gone:
            self._changed()
        return gone

    def _changed(self) -> None:
        for listener in self.on_change:
            listener()
