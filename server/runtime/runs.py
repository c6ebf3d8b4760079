"""The live runs: start, cancel, several at once, each in its own task.

The manager is an async context: its task group owns every run, and leaving it
(the app shutting down, the window closing) cancels them all, each ending with
``run_finished`` in its transcript and its row in the store."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup

from server.core.events import Event
from server.core.paths import Paths
from server.core.settings import Settings, SettingsError, load_settings
from server.engine.bus import EventBus, Subscription
from server.engine.channel import RunChannel, RunHistory
from server.engine.loop import AgentRun, RunControl, run_agent
from server.engine.store import RunInfo, Store, new_id
from server.engine.tools.registry import default_tools
from server.engine.transcript import BadLine, TranscriptRecorder, read_transcript
from server.engine.workspace import WorkspaceError, open_workspace
from server.providers.base import Provider
from server.providers.registry import UnknownModel, make_provider
from server.providers.scripted import ScriptError

if TYPE_CHECKING:
    from server.engine.checkpoints import CheckpointStore

SHUTDOWN_REASON = "cancelled: Sparrow was closed while the run was going"


class RunRequestError(ValueError):
    """A run that cannot start as asked; the message is for the user."""


@dataclass
class RunRequest:
    workspace: str
    task: str
    model: str = "demo"
    script: object | None = None
    provider: Provider | None = None  # an explicit model, for tests and embedding


@dataclass
class _LiveRun:
    info: RunInfo
    history: RunHistory
    control: RunControl = field(default_factory=RunControl)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)


class RunManager:
    def __init__(
        self, *, paths: Paths, store: Store, bus: EventBus, demo_delay: float | None = None
    ) -> None:
        self.paths = paths
        self.store = store
        self.bus = bus
        self._demo_delay = demo_delay
        self._live: dict[str, _LiveRun] = {}
        self._tg: TaskGroup | None = None

    async def __aenter__(self) -> RunManager:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        self.cancel_all(SHUTDOWN_REASON)
        assert self._tg is not None
        result = await self._tg.__aexit__(kind, exc, tb)
        self._tg = None
        return result

    def _settings(self, workspace_root: Path) -> Settings:
        try:
            return load_settings(self.paths.config_file, workspace_root)
        except SettingsError as exc:
            raise RunRequestError(str(exc)) from exc

    def start(self, request: RunRequest) -> RunInfo:
        if self._tg is None:
            raise RuntimeError("the run manager is not running")
        try:
            workspace = open_workspace(request.workspace)
        except WorkspaceError as exc:
            raise RunRequestError(str(exc)) from exc
        task = request.task.strip()
        if not task:
            raise RunRequestError("the task is empty: say what the agent should do")
        settings = self._settings(workspace.root)
        delay = settings.demo.chunk_delay_seconds if self._demo_delay is None else self._demo_delay
        try:
            provider = request.provider or make_provider(
                request.model, request.script, demo_delay=delay
            )
        except (UnknownModel, ScriptError) as exc:
            raise RunRequestError(str(exc)) from exc

        run_id = new_id("r")
        root = str(workspace.root)
        session_id = self.store.create_session(root, title=task)
        transcript = self.paths.transcript(run_id)
        info = self.store.create_run(
            run_id=run_id,
            session_id=session_id,
            workspace=root,
            task=task,
            model=provider.name,
            transcript=transcript,
        )
        live = _LiveRun(info=info, history=RunHistory())
        recorder = TranscriptRecorder(transcript)
        channel = RunChannel(run_id, self.bus, [recorder, live.history])
        agent = AgentRun(
            run_id=run_id,
            session_id=session_id,
            task=task,
            workspace=workspace,
            provider=provider,
            tools=default_tools(),
            settings=settings,
            checkpoints=self.checkpoints_for(settings),
        )
        self._live[run_id] = live
        self._tg.start_soon(self._drive, agent, channel, live, recorder)
        return info

    async def _drive(
        self, agent: AgentRun, channel: RunChannel, live: _LiveRun, recorder: TranscriptRecorder
    ) -> None:
        status, reason, turns = "cancelled", live.control.cancel_reason, 0
        try:
            with live.scope:
                outcome = await run_agent(agent, channel, live.control)
                status, reason, turns = outcome.status, outcome.reason, outcome.turns
        finally:
            if status == "cancelled":
                reason, turns = live.control.cancel_reason, live.control.turns
            recorder.close()
            self.store.finish_run(agent.run_id, status=status, reason=reason, turns=turns)
            self._live.pop(agent.run_id, None)
            live.done.set()

    def checkpoints_for(self, settings: Settings | None = None) -> CheckpointStore:
        """The checkpoint store, with the limits of ``settings`` (a workspace's own)."""
        from server.engine.checkpoints import CheckpointStore  # pygit2: ~20 MB, load late

        if settings is None:
            settings = load_settings(self.paths.config_file)
        return CheckpointStore(self.paths, settings.checkpoints, self.store)

    def cancel(self, run_id: str, reason: str = "cancelled by the user") -> bool:
        live = self._live.get(run_id)
        if live is None:
            return False
        live.control.cancel_reason = reason
        live.scope.cancel()
        return True

    def cancel_all(self, reason: str) -> None:
        for run_id in list(self._live):
            self.cancel(run_id, reason)

    async def wait(self, run_id: str) -> RunInfo | None:
        live = self._live.get(run_id)
        if live is not None:
            await live.done.wait()
        return self.store.get_run(run_id)

    def is_live(self, run_id: str) -> bool:
        return run_id in self._live

    def get(self, run_id: str) -> RunInfo | None:
        return self.store.get_run(run_id)

    def recent(self, limit: int = 50) -> list[RunInfo]:
        return self.store.recent_runs(limit)

    def events(self, run_id: str) -> list[Event] | None:
        """The run's events so far; None for a run this store does not know."""
        live = self._live.get(run_id)
        if live is not None:
            return list(live.history.events)
        info = self.store.get_run(run_id)
        if info is None:
            return None
        return load_events(info)

    def follow(self, run_id: str) -> tuple[list[Event], Subscription]:
        """The run's events so far and a subscription to the ones to come, taken
        together so that none falls between the two."""
        subscription = self.bus.subscribe({run_id})
        return self.events(run_id) or [], subscription


def load_events(info: RunInfo) -> list[Event]:
    path = Path(info.transcript)
    if not path.exists():
        return []
    return [item for item in read_transcript(path) if not isinstance(item, BadLine)]
