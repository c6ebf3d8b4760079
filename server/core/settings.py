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
from typing import Any, TypeVar


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
class ContextThresholds:
    """A tool's levels: above 1 a count of tokens, 1 or less a fraction of the window."""

    warning: float
    critical: float


@dataclass(frozen=True)
class MonitorSettings:
    """The session monitor (``[monitor]``; thresholds in ``[monitor.claude_code]``
    and ``[monitor.codex]``; ``[monitor.windows]`` maps model-name prefixes to
    their context windows, e.g. ``"claude-sonnet-4-5" = 1000000``)."""

    check_frequency: int = 5  # the hook reads the transcript on the 1st and every Nth tool call
    fallback_tool_count: int = 500  # tool calls that make a warning when no usage is readable
    poll_seconds: float = 0.5  # a poll of 1,000 idle-ish files costs ~5 ms
    active_within_hours: float = 24.0  # sessions written to since then are shown and read
    claude_code: ContextThresholds = field(
        default_factory=lambda: ContextThresholds(warning=100_000.0, critical=130_000.0)
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
class Settings:
    shell: ShellSettings = field(default_factory=ShellSettings)
    files: FileSettings = field(default_factory=FileSettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    demo: DemoSettings = field(default_factory=DemoSettings)
    checkpoints: CheckpointSettings = field(default_factory=CheckpointSettings)
    monitor: MonitorSettings = field(default_factory=MonitorSettings)


T = TypeVar("T")


def _apply(current: T, table: dict[str, Any], where: str) -> T:
    assert dataclasses.is_dataclass(current) and not isinstance(current, type)
    changes: dict[str, Any] = {}
    known = {f.name: f for f in dataclasses.fields(current)}
    for key, value in table.items():
        if key not in known:
            raise SettingsError(f"{where}: unknown setting '{key}' (known: {', '.join(known)})")
        old = getattr(current, key)
        if dataclasses.is_dataclass(old):
            if not isinstance(value, dict):
                raise SettingsError(f"{where}: '{key}' must be a table")
            changes[key] = _apply(old, value, f"{where}.{key}")
            continue
        expected = type(old)
        ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            raise SettingsError(
                f"{where}.{key}: expected {expected.__name__}, got {type(value).__name__}"
            )
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


def load_settings(config_file: Path, workspace: Path | None = None) -> Settings:
    settings = _apply(Settings(), _read_toml(config_file), str(config_file))
    if workspace is not None:
        local = workspace / ".sparrow" / "config.toml"
        settings = _apply(settings, _read_toml(local), str(local))
    return settings
