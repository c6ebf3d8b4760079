"""The parts a run is made of, each from its request and the settings that hold
for its workspace (``run_request.settings_for``): an agent file's own budget,
the permission contract, the model's provider, the hooks and the sandbox. Every
part that cannot be made as asked says so as a ``RunRequestError``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from server.core.hook_config import HookConfigError
from server.core.paths import Paths
from server.core.settings import Settings
from server.engine.hooks.runner import HookSet, load_hooks
from server.engine.permissions.modes import Contract, ContractError
from server.engine.permissions.rulebook import RuleBook
from server.engine.sandbox.base import Sandbox, SandboxError
from server.engine.sandbox.factory import open_sandbox
from server.engine.workspace import Workspace
from server.providers.base import Provider
from server.providers.pricing import ModelFacts
from server.providers.registry import UnknownModel, make_provider
from server.runtime.keys import lookup_key
from server.runtime.model_choice import ModelChoice
from server.runtime.run_request import RunRequest, RunRequestError


def with_budget(settings: Settings, limits: dict[str, float]) -> Settings:
    """``settings`` with the limits a request gives in place of [budget]'s own."""
    own = settings.budget
    budget = dataclasses.replace(
        own,
        max_tokens=int(limits.get("max_tokens", own.max_tokens)),
        max_cost_usd=float(limits.get("max_cost_usd", own.max_cost_usd)),
        max_wall_seconds=float(limits.get("max_wall_seconds", own.max_wall_seconds)),
    )
    return dataclasses.replace(settings, budget=budget)


def contract_of(
    rulebook: RuleBook, request: RunRequest, settings: Settings
) -> Callable[[], Contract]:
    """The run's own contract when the request gives one, else the shared one, live."""
    if request.mode is None and request.autonomy is None:
        return lambda: rulebook.contract(settings.autonomy)
    try:
        shared = rulebook.contract(settings.autonomy)
        fixed = shared.changed(mode=request.mode, level=request.autonomy)
    except ContractError as exc:
        raise RunRequestError(str(exc)) from exc
    return lambda: fixed


def provider_for(
    request: RunRequest, choice: ModelChoice, settings: Settings, demo_delay: float | None
) -> tuple[Provider, ModelFacts | None]:
    if request.provider is not None:
        return request.provider, None
    delay = settings.demo.chunk_delay_seconds if demo_delay is None else demo_delay
    try:
        return make_provider(
            choice.model, settings, keys=lookup_key, script=request.script, demo_delay=delay
        )
    except UnknownModel as exc:
        raise RunRequestError(str(exc)) from exc


def hooks_for(settings: Settings, workspace_root: Path) -> HookSet:
    try:
        return load_hooks(settings.hooks, workspace_root)
    except HookConfigError as exc:
        raise RunRequestError(str(exc)) from exc


def sandbox_for(
    request: RunRequest, settings: Settings, workspace: Workspace, run_id: str, paths: Paths
) -> Sandbox:
    try:
        return open_sandbox(
            request.sandbox or settings.permissions.sandbox,
            workspace,
            run_id=run_id,
            worktrees_dir=paths.state / "worktrees",
        )
    except SandboxError as exc:
        raise RunRequestError(str(exc)) from exc
