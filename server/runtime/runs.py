"""The live runs: start, cancel, several at once, each in its own task.

The manager is an async context: its task group owns every run, and leaving it
(the app shutting down, the window closing) cancels them all, each ending with
``run_finished`` in its transcript and its row in the store."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from server.core.credentials import register_env_keys
from server.core.events import Event
from server.core.paths import Paths
from server.core.settings import Settings, load_settings
from server.engine.approvals import ApprovalAnswer
from server.engine.bus import EventBus, Subscription
from server.engine.channel import RunHistory
from server.engine.memory import Memory
from server.engine.permissions.modes import Contract, ContractError, Mode
from server.engine.permissions.rulebook import RuleBook
from server.engine.run_control import RunControl
from server.engine.store import RunInfo, Store, new_id
from server.runtime.approvals import ApprovalDesk
from server.runtime.run_records import load_events, request_sent
from server.runtime.run_request import (
    COMPACT_COMMAND,
    RunRequest,
    RunRequestError,
    conversation_of,
    handoff_preamble,
    open_workspace_or_none,
    settings_for,
    task_of,
    workspace_of,
)

if TYPE_CHECKING:
    from server.engine.channel import RunChannel
    from server.engine.checkpoints import CheckpointStore
    from server.engine.loop import AgentRun
    from server.engine.sandbox.base import Sandbox
    from server.engine.transcript import TranscriptRecorder
    from server.runtime.agents import AgentRuntime
    from server.runtime.follower import Elsewhere, RunFollower
    from server.runtime.model_directory import ModelDirectory

# The request and its record were split out of this module; the many surfaces
# that import them from here still do.
__all__ = [
    "COMPACT_COMMAND",
    "EMERGENCY_REASON",
    "EMERGENCY_REFUSAL",
    "SHUTDOWN_REASON",
    "RunManager",
    "RunRequest",
    "RunRequestError",
    "load_events",
    "open_workspace_or_none",
]

KEY_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_SECRET_KEY")
SHUTDOWN_REASON = "cancelled: Sparrow was closed while the run was going"
EMERGENCY_REASON = "stopped by the emergency stop"
EMERGENCY_REFUSAL = (
    "Emergency stop is on: no run can start while every tool call is denied; "
    "choose another mode first (the Safety panel, or `sparrow autonomy --mode supervised`)"
)


def _tool_names() -> list[str]:
    from server.engine.tools.registry import default_tools

    return default_tools().names()


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
        # Any key in the environment is blanked from every event, used or not.
        register_env_keys(name for name in os.environ if name.endswith(KEY_SUFFIXES))
        self.rulebook = RuleBook(store, _tool_names)
        self.approvals = ApprovalDesk()
        self.memory = Memory(paths, store)
        # The app's follower of runs in other processes (none in `sparrow run`).
        self.follower: RunFollower | None = None

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

    @functools.cached_property
    def models(self) -> ModelDirectory:
        """What models there are (made at first use: the window does not need it to show)."""
        from server.runtime.model_directory import ModelDirectory

        return ModelDirectory(self.store)

    @functools.cached_property
    def agents(self) -> AgentRuntime:
        """The agents defined as files (their tables made at first use)."""
        from server.runtime.agents import AgentRuntime

        return AgentRuntime(self)

    def _settings(self, workspace_root: Path | None) -> Settings:
        return settings_for(self.paths, workspace_root)

    def start(self, request: RunRequest) -> RunInfo:
        if self._tg is None:
            raise RuntimeError("the run manager is not running")
        # What makes and drives a run (the loop, its tools' calls, the provider, the
        # sandbox, attachments) loads with the first run: the server starts without it.
        from server.engine.channel import RunChannel
        from server.engine.conversation import load_history
        from server.engine.loop import AgentRun
        from server.engine.store.session_index import SessionIndexer
        from server.engine.tools.registry import default_tools
        from server.engine.transcript import TranscriptRecorder
        from server.engine.workspace import Workspace
        from server.runtime.attaching import AttachmentError, for_run, restore
        from server.runtime.model_choice import choose_model, default_model, routes
        from server.runtime.run_parts import (
            contract_of,
            hooks_for,
            provider_for,
            sandbox_for,
            with_budget,
        )

        task = task_of(request)
        preamble = handoff_preamble(request)
        follows = conversation_of(self.store, request) if request.continue_from else None
        own = self.paths.own_folders()
        workspace = workspace_of(request, follows, own)
        settings = self._settings(workspace.root)
        if request.budget:
            settings = with_budget(settings, request.budget)
        contract = contract_of(self.rulebook, request, settings)
        # The shared stop holds whatever mode a run asks for: it is the kill switch.
        if Mode.EMERGENCY_STOP in (self.rulebook.contract(settings.autonomy).mode, contract().mode):
            raise RunRequestError(EMERGENCY_REFUSAL)
        choice = choose_model(
            request.model,
            task=task,
            workspace=workspace.root,
            default=default_model(self.store, settings),
            routing=routes(self.store, settings),
            previous=follows[-1].model if follows else None,
        )
        provider, facts = provider_for(request, choice, settings, self._demo_delay)
        try:
            attachments = for_run(request.attachments, self.paths, settings, provider)
        except AttachmentError as exc:
            raise RunRequestError(str(exc)) from exc
        hooks = hooks_for(settings, workspace.root)
        history = load_history(Path(r.transcript) for r in follows) if follows else []
        if history:
            history = restore(history, self.paths, settings, provider)

        run_id = new_id("r")
        sandbox = sandbox_for(request, settings, workspace, run_id, self.paths)
        root = str(workspace.root)
        session_id = (
            follows[0].session_id
            if follows
            else self.store.create_session(root, task, parent=request.parent)
        )
        transcript = self.paths.transcript(run_id)
        info = self.store.create_run(
            run_id=run_id,
            session_id=session_id,
            workspace=root,
            task=task,
            model=provider.name,
            transcript=transcript,
            surface=request.surface,
        )
        live = _LiveRun(info=info, history=RunHistory())
        recorder = TranscriptRecorder(transcript)
        indexer = SessionIndexer(self.store.db, session_id, run_id)
        channel = RunChannel(run_id, self.bus, [recorder, live.history, indexer])
        works_in = workspace if sandbox.root == workspace.root else Workspace(sandbox.root, own)
        agent = AgentRun(
            run_id=run_id,
            session_id=session_id,
            task=task,
            workspace=works_in,
            provider=provider,
            tools=default_tools(),
            settings=settings,
            checkpoints=self.checkpoints_for(settings),
            rulebook=self.rulebook,
            contract=contract,
            approver=request.approver or self.approvals.approver_for(run_id),
            hooks=hooks,
            sandbox=sandbox,
            surface=request.surface,
            transcript=transcript,
            home=workspace.root,
            history=history,
            continues=follows[-1].id if follows else "",
            model_reason=choice.reason,
            model_facts=facts,
            compact_only=bool(follows) and task == COMPACT_COMMAND,
            preamble=preamble,
            attachments=attachments,
            memory=self.memory.at(workspace.root),
        )
        self._live[run_id] = live
        self._tg.start_soon(self._drive, agent, channel, live, recorder, sandbox)
        return info

    # --- the shared contract, the emergency stop, approvals ---------------------

    def contract(self) -> Contract:
        return self.rulebook.contract(self._settings(None).autonomy)

    def set_contract(self, *, mode: str | None = None, level: object = None) -> Contract:
        try:
            contract = self.contract().changed(mode=mode, level=level)
        except ContractError as exc:
            raise RunRequestError(str(exc)) from exc
        return self.rulebook.set_contract(contract)

    def emergency_stop(self) -> list[str]:
        """Every tool call denied from now on, and every live run cancelled."""
        self.rulebook.set_contract(self.contract().with_mode(Mode.EMERGENCY_STOP))
        stopped = list(self._live)
        self.cancel_all(EMERGENCY_REASON)
        return stopped

    def answer(self, run_id: str, call_id: str, answer: ApprovalAnswer) -> None:
        """Raises NothingToAnswer when no such call waits."""
        self.approvals.answer(run_id, call_id, answer)

    async def _drive(
        self,
        agent: AgentRun,
        channel: RunChannel,
        live: _LiveRun,
        recorder: TranscriptRecorder,
        sandbox: Sandbox,
    ) -> None:
        from server.engine.loop import run_agent

        status, reason, turns = "cancelled", live.control.cancel_reason, 0
        try:
            with live.scope:
                outcome = await run_agent(agent, channel, live.control)
                status, reason, turns = outcome.status, outcome.reason, outcome.turns
        finally:
            if status == "cancelled":
                reason, turns = live.control.cancel_reason, live.control.turns
            recorder.close()
            sandbox.close()
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
            return self.follower is not None and self.follower.cancel(run_id)
        live.control.cancel_reason = reason
        live.scope.cancel()
        return True

    def compact(self, run_id: str, surface: str = "api") -> RunInfo:
        """Compact a conversation: a live run does it before its next request; a
        finished one gets a follow-up run that only compacts (``/compact``)."""
        live = self._live.get(run_id)
        if live is not None:
            live.control.compact_requested = True
            return live.info
        return self.start(RunRequest(workspace="", task=COMPACT_COMMAND,
                                     continue_from=run_id, surface=surface))

    def cancel_all(self, reason: str) -> None:
        for run_id in list(self._live):
            self.cancel(run_id, reason)

    async def wait(self, run_id: str) -> RunInfo | None:
        live = self._live.get(run_id)
        if live is not None:
            await live.done.wait()
        return self.store.get_run(run_id)

    def elsewhere(self, info: RunInfo) -> Elsewhere | None:
        """Who runs ``info`` when another Sparrow process does (None: this one, or none)."""
        return self.follower.elsewhere(info) if self.follower is not None else None

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
        followed = self.follower.events(run_id) if self.follower is not None else None
        if followed is not None:
            return followed
        info = self.store.get_run(run_id)
        if info is None:
            return None
        return load_events(info)

    def request_of(self, run_id: str, turn: int) -> dict[str, Any] | None:
        """What run ``run_id`` sent to its model for ``turn``; None when unknown."""
        info = self.store.get_run(run_id)
        if info is None:
            return None

        def settings() -> Settings:
            try:
                return self._settings(Path(info.workspace))
            except RunRequestError:
                return Settings()  # a broken settings file: the view still shows the rest

        return request_sent(self.store, self.paths, info, turn, settings)

    def follow(self, run_id: str) -> tuple[list[Event], Subscription]:
        """The run's events so far and a subscription to the ones to come, taken
        together so that none falls between the two."""
        subscription = self.bus.subscribe({run_id})
        return self.events(run_id) or [], subscription

