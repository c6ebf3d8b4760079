"""Settings: defaults in code, overridden by ``<config>/config.toml`` and then by
the workspace's ``.sparrow/config.toml``.

Every setting has a default, so a missing file is normal. A file that is not
valid TOML, names a setting that does not exist, or gives it the wrong type is
an error naming the file and the key: silently ignoring a typo in a safety
setting is worse than refusing to start.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

from server.core.config_keys import config_key
from server.core.hook_config import HookConfig, HookConfigError, parse_hook_config

# The permission modes of autonomy-and-safety.md ("Gate Decisions"), as typed in settings.
PERMISSION_MODES: Final = (
    "read-only",
    "plan",
    "supervised",
    "trusted",
    "autonomous",
    "emergency-stop",
)
SANDBOXES: Final = ("local", "local-hardened", "worktree")
# The wire formats an endpoint of [providers.NAME] can speak (``kind``).
PROVIDER_KINDS: Final = ("anthropic", "openai", "openai-chat")
THINKING_LEVELS: Final = ("", "off", "low", "medium", "high")
TASK_CLASSES: Final = ("question", "small_edit", "large_change", "long_running")


class SettingsError(ValueError):
    """A settings file that cannot be used as written."""


@dataclass(frozen=True)
class ShellSettings:
    timeout_seconds: float = 120.0
    output_limit_bytes: int = 64_000


@dataclass(frozen=True)
class FileSettings:
    read_limit_bytes: int = 256_000
    list_limit_entries: int = 500


@dataclass(frozen=True)
class ServerSettings:
    port: int = 0


@dataclass(frozen=True)
class DemoSettings:
    # Slow enough to watch the demo stream, fast enough not to bore.
    chunk_delay_seconds: float = 0.02


@dataclass(frozen=True)
class TraySettings:
    # Closing the window while runs go on keeps them running in the tray.
    close_to_tray: bool = True
    # Quit waits this long for the runs to stop at a safe point, then quits anyway.
    quit_wait_seconds: float = 30.0
    # A run's context past this share of its window is notified (once per run).
    context_warning: float = 0.8


@dataclass(frozen=True)
class ContextThresholds:
    """A tool's levels: above 1 a count of tokens, 1 or less a fraction of the window."""

    warning: float
    critical: float


@dataclass(frozen=True)
class MonitorSettings:
    """The session monitor (``[monitor]``; thresholds in ``[monitor.claude_code]``
    and ``[monitor.codex]``, shares of the model's window unless above 1;
    ``[monitor.windows]`` maps model-name prefixes to their context windows, e.g.
    ``"claude-sonnet-4-5" = 1000000``, where the price data does not know one)."""

    check_frequency: int = 5  # the hook reads the transcript on the 1st and every Nth tool call
    fallback_tool_count: int = 500  # tool calls that make a warning when no usage is readable
    poll_seconds: float = 0.5  # a poll of 1,000 idle-ish files costs ~5 ms
    active_within_hours: float = 24.0  # sessions written to since then are shown and read
    claude_code: ContextThresholds = field(
        default_factory=lambda: ContextThresholds(warning=0.5, critical=0.65)
    )
    codex: ContextThresholds = field(
        default_factory=lambda: ContextThresholds(warning=0.5, critical=0.65)
    )
    windows: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckpointSettings:
    # Files over this size are not captured (listed as skipped).
    max_file_bytes: int = 10 * 1024 * 1024
    # What one checkpoint may hold in all; new files past it are skipped.
    max_total_bytes: int = 2 * 1024 * 1024 * 1024
    # Pruning by settings: checkpoints older than this many days (0 = keep all) ...
    keep_days: float = 30.0
    # ... and beyond the newest this many per workspace (0 = no limit).
    keep_count: int = 500


@dataclass(frozen=True)
class SessionSettings:
    """``[sessions]``: sessions last active longer ago than this many days are
    deleted (transcripts, index, their own checkpoints) when Sparrow starts; 0
    keeps them all."""

    keep_days: float = 0.0


@dataclass(frozen=True)
class AutonomySettings:
    """The dial and the mode until they are set from the app or ``sparrow autonomy``
    (which the store remembers, and which then win over these)."""

    level: float = 0.2  # Supervised
    mode: str = "supervised"


@dataclass(frozen=True)
class PermissionSettings:
    # An approval nobody answers within this time is a deny.
    approval_timeout_seconds: float = 300.0
    sandbox: str = "local"


@dataclass(frozen=True)
class BudgetSettings:
    """Hard stops of a run; 0 means no limit."""

    max_tokens: int = 0  # input (with cache) + output, summed over the run's turns
    max_cost_usd: float = 0.0  # needs the model's price in [budget.prices]
    max_wall_seconds: float = 0.0
    # Model-name prefix -> [USD per million input tokens, USD per million output tokens].
    prices: dict[str, list[float]] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkspaceSettings:
    # Run after a run that changed files, when the model says it is done; a
    # failure goes back to the model. Usually in <workspace>/.sparrow/config.toml.
    verify_command: str = ""
    verify_timeout_seconds: float = 600.0


@dataclass(frozen=True)
class ProviderSettings:
    """One ``[providers.NAME]`` table: an endpoint of the user's own, or a
    built-in provider moved (``base_url``) or described further."""

    base_url: str = ""
    kind: str = ""  # anthropic | openai (Responses API) | openai-chat (Chat Completions)
    label: str = ""
    api_key_env: str = ""  # an environment variable that holds its key
    context_window: int = 0  # tokens, for its models when nothing else says (0: unknown)
    models: list[str] = field(default_factory=list)  # offered when the endpoint lists none


@dataclass(frozen=True)
class ModelSettings:
    """``[models]``: which model runs when none is chosen, and how it is called."""

    default: str = ""  # a model id, "provider:model"; "" until one is chosen
    thinking: str = ""  # off | low | medium | high; "": the model's own default
    max_output_tokens: int = 0  # 0: the model's own default
    max_retries: int = 4  # for rate limits, overload and server errors
    request_timeout_seconds: float = 600.0
    # Context windows by model-id prefix, where the price data is silent or wrong.
    windows: dict[str, int] = field(default_factory=dict)
    # Which models take images, by model-id prefix ("ollama:llava" = true), where
    # Sparrow does not know (capabilities.py) or knows wrong.
    images: dict[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class RoutingSettings:
    """``[routing]``: the model for each class of task ("": the default model)."""

    question: str = ""
    small_edit: str = ""
    large_change: str = ""
    long_running: str = ""


@dataclass(frozen=True)
class ContextSettings:
    # The project's instruction file (AGENTS.md, …) is cut after this many bytes.
    instructions_limit_bytes: int = 32_000
    # Tokens kept free for the answer: a request past window - reserve is compacted
    # first (at most a quarter of the window, for small local models).
    reserve_tokens: int = 16_000
    # The conversation is compacted too when its messages pass this many characters.
    compact_chars: int = 120_000


@dataclass(frozen=True)
class AttachmentSettings:
    """``[attachments]``: files and folders given with a message."""

    # A text file is inlined up to this many characters, then cut with a notice.
    text_limit_chars: int = 50_000
    # An image larger than this is refused (the vendors take about 5 MB).
    image_limit_bytes: int = 5 * 1024 * 1024
    # A folder attaches as a listing of at most this many entries.
    listing_limit_entries: int = 300
    # What one upload (a browser's drop, a pasted image) may weigh.
    upload_limit_bytes: int = 20 * 1024 * 1024
    # Uploads older than this are deleted (at the next upload).
    upload_keep_hours: float = 24.0


@dataclass(frozen=True)
class Settings:
    shell: ShellSettings = field(default_factory=ShellSettings)
    files: FileSettings = field(default_factory=FileSettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    demo: DemoSettings = field(default_factory=DemoSettings)
    tray: TraySettings = field(default_factory=TraySettings)
    checkpoints: CheckpointSettings = field(default_factory=CheckpointSettings)
    monitor: MonitorSettings = field(default_factory=MonitorSettings)
    autonomy: AutonomySettings = field(default_factory=AutonomySettings)
    permissions: PermissionSettings = field(default_factory=PermissionSettings)
    budget: BudgetSettings = field(default_factory=BudgetSettings)
    workspace: WorkspaceSettings = field(default_factory=WorkspaceSettings)
    hooks: HookConfig = field(default_factory=HookConfig)
    models: ModelSettings = field(default_factory=ModelSettings)
    routing: RoutingSettings = field(default_factory=RoutingSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    sessions: SessionSettings = field(default_factory=SessionSettings)
    attachments: AttachmentSettings = field(default_factory=AttachmentSettings)
    providers: dict[str, ProviderSettings] = field(
        default_factory=dict, metadata={"table_of": ProviderSettings}
    )


T = TypeVar("T")


def _apply(current: T, table: dict[str, Any], file: str, tables: tuple[str, ...] = ()) -> T:
    """``current`` with ``table`` applied: the table at ``tables`` of ``file``."""
    assert dataclasses.is_dataclass(current) and not isinstance(current, type)
    changes: dict[str, Any] = {}
    known = {f.name: f for f in dataclasses.fields(current)}
    for key, value in table.items():
        at = config_key(file, tables, key)
        if key not in known:
            raise SettingsError(f"{at}: unknown setting (known: {', '.join(known)})")
        old = getattr(current, key)
        table_of = known[key].metadata.get("table_of")
        if table_of is not None:
            if not isinstance(value, dict):
                raise SettingsError(f"{at}: must be a table")
            entries = dict(old)
            for name, entry in value.items():
                if not isinstance(entry, dict):
                    raise SettingsError(
                        f"{config_key(file, (*tables, key), name)}: must be a table"
                    )
                entries[name] = _apply(
                    entries.get(name, table_of()), entry, file, (*tables, key, name)
                )
            changes[key] = entries
            continue
        if isinstance(old, HookConfig):
            if not isinstance(value, dict):
                raise SettingsError(f"{at}: must be a table")
            try:
                changes[key] = parse_hook_config(old, value, file)
            except HookConfigError as exc:
                raise SettingsError(str(exc)) from exc
            continue
        if dataclasses.is_dataclass(old):
            if not isinstance(value, dict):
                raise SettingsError(f"{at}: must be a table")
            changes[key] = _apply(old, value, file, (*tables, key))
            continue
        expected = type(old)
        ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            raise SettingsError(f"{at}: expected {expected.__name__}, got {type(value).__name__}")
        changes[key] = value
    return dataclasses.replace(current, **changes)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from exc
    except OSError as exc:
        raise SettingsError(f"{path}: cannot be read: {exc.strerror}") from exc


def _check(settings: Settings, file: str) -> Settings:
    """The values a type check cannot judge: choices and ranges."""
    level = settings.autonomy.level
    if not 0.0 <= level <= 1.0:
        raise SettingsError(
            f"{config_key(file, ('autonomy',), 'level')}: must be from 0.0 to 1.0, not {level}"
        )
    if settings.sessions.keep_days < 0:
        raise SettingsError(
            f"{config_key(file, ('sessions',), 'keep_days')}: must be 0 (keep every session) "
            f"or a number of days, not {settings.sessions.keep_days}"
        )
    if settings.tray.quit_wait_seconds < 0 or not 0 < settings.tray.context_warning <= 1:
        raise SettingsError(
            f"{config_key(file, ('tray',), 'quit_wait_seconds')} must be 0 or more and "
            f"{config_key(file, ('tray',), 'context_warning')} from 0 (excluded) to 1"
        )
    if settings.autonomy.mode not in PERMISSION_MODES:
        raise SettingsError(
            f"{config_key(file, ('autonomy',), 'mode')}: must be one of "
            f"{', '.join(PERMISSION_MODES)}, not {settings.autonomy.mode!r}"
        )
    if settings.permissions.sandbox not in SANDBOXES:
        raise SettingsError(
            f"{config_key(file, ('permissions',), 'sandbox')}: must be one of "
            f"{', '.join(SANDBOXES)}, not {settings.permissions.sandbox!r}"
        )
    if settings.models.thinking not in THINKING_LEVELS:
        raise SettingsError(
            f"{config_key(file, ('models',), 'thinking')}: must be one of off, low, medium, "
            f"high, not {settings.models.thinking!r}"
        )
    if not all(isinstance(v, bool) for v in settings.models.images.values()):
        raise SettingsError(
            f"{config_key(file, ('models',), 'images')}: must map model-id prefixes to "
            'true or false ("ollama:llava" = true)'
        )
    for name, provider in settings.providers.items():
        if not all(isinstance(m, str) for m in provider.models):
            raise SettingsError(
                f"{config_key(file, ('providers', name), 'models')}: must be a list of model names"
            )
        if provider.kind and provider.kind not in PROVIDER_KINDS:
            raise SettingsError(
                f"{config_key(file, ('providers', name), 'kind')}: must be one of "
                f"{', '.join(PROVIDER_KINDS)}, not {provider.kind!r}"
            )
    for model, price in settings.budget.prices.items():
        if not (
            isinstance(price, list)
            and len(price) == 2
            and all(isinstance(p, int | float) and not isinstance(p, bool) for p in price)
        ):
            raise SettingsError(
                f"{config_key(file, ('budget', 'prices'), model)}: must be [input, output] in "
                "USD per million tokens, e.g. [3.0, 15.0]"
            )
    return settings


def load_settings(config_file: Path, workspace: Path | None = None) -> Settings:
    settings = _check(
        _apply(Settings(), _read_toml(config_file), str(config_file)), str(config_file)
    )
    if workspace is not None:
        local = workspace / ".sparrow" / "config.toml"
        table = _read_toml(local)
        if "autonomy" in table:
            # A folder (a cloned repository, say) must not raise its own autonomy.
            raise SettingsError(
                f"{local}: [autonomy] cannot be set by a workspace; use the app's dial, "
                "`sparrow autonomy`, or your own config.toml"
            )
        if "providers" in table:
            # A cloned repository must not point a provider at its own server:
            # Sparrow would send it the user's API key.
            raise SettingsError(
                f"{local}: [providers] cannot be set by a workspace (it would decide where "
                "your API keys are sent); set endpoints in your own config.toml"
            )
        if "hooks" in table and not settings.hooks.workspace_hooks:
            raise SettingsError(
                f"{local}: [hooks] in a workspace would run its commands on this machine; "
                "allow workspace hooks with `workspace_hooks = true` under [hooks] in your "
                "own config.toml"
            )
        settings = _check(_apply(settings, table, str(local)), str(local))
    return settings
