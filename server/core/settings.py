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
class Settings:
    shell: ShellSettings = field(default_factory=ShellSettings)
    files: FileSettings = field(default_factory=FileSettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    demo: DemoSettings = field(default_factory=DemoSettings)


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
