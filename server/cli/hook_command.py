"""``sparrow hook claude-code``: Claude Code's PostToolUse hook. ``sparrow hook
install``: adds it to Claude Code's settings (``--uninstall`` removes it).

The hook reads the hook's JSON on stdin (``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name``...), reads the session's context from the tail of
its transcript and, at or above a level, answers

    {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "..."}}

which the model reads. Below the levels it prints nothing. Whatever happens
(bad JSON, no transcript, an exception) it exits 0: the session is never
blocked. It runs after every tool call, so it imports little: no platformdirs
on Linux, settings only when a config file exists, no dataclasses otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import Any, TextIO

from server.monitor.levels import (
    CRITICAL,
    FROM_TOOL_CALLS,
    RANK,
    WARNING,
    Assessment,
    MonitorConfig,
    assess,
    should_check,
)
from server.monitor.reader import read_transcript
from server.monitor.state import CLAUDE_CODE, SessionState
from server.monitor.windows import Lookup, state_lookup

HOOK_EVENT = "PostToolUse"
HOOK_ARGS = "hook claude-code"
HOOK_TIMEOUT_SECONDS = 10
APP_NAME = "sparrow"
HOME_ENV = "SPARROW_HOME"


def handle(args: argparse.Namespace) -> int:
    if args.hook_action == "install":
        return install_command(args)
    return run_hook(sys.stdin, sys.stdout)


# --- the hook ---------------------------------------------------------------------


def run_hook(stdin: TextIO, stdout: TextIO, env: dict[str, str] | None = None) -> int:
    """Answer one hook call. Always returns 0."""
    try:
        text = stdin.read()
        payload = json.loads(text) if text.strip() else None
        if isinstance(payload, dict):
            answer = respond(payload, dict(os.environ) if env is None else env)
            if answer is not None:
                stdout.write(json.dumps(answer) + "\n")
                stdout.flush()
    except (Exception, KeyboardInterrupt) as exc:
        with contextlib.suppress(Exception):
            sys.stderr.write(f"sparrow hook: {type(exc).__name__}: {exc}\n")
    return 0


def respond(payload: dict[str, Any], env: dict[str, str]) -> dict[str, Any] | None:
    """The hook's answer to ``payload``, or None to say nothing."""
    if payload.get("hook_event_name") != HOOK_EVENT:
        return None
    session_id = _text(payload.get("session_id")) or "unknown"
    transcript = _text(payload.get("transcript_path"))
    cwd = _text(payload.get("cwd"))
    folder = state_dir(env)
    # The window the price data gives, as the app or an earlier call kept it: the
    # price data itself loads in ~0.7 s, once per model.
    config = load_config(env, cwd, state_lookup(folder))
    count = _count_call(folder, session_id)
    if not should_check(count, config.check_frequency):
        return None
    if transcript:
        state, _ = read_transcript(transcript, CLAUDE_CODE, session_id=session_id)
    else:
        state = SessionState(CLAUDE_CODE, "", session_id)
    # The transcript's own tool count covers only its tail: the hook counts every call.
    found = assess(state, config, tool_calls=count)
    if RANK[found.level] < RANK[WARNING]:
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": HOOK_EVENT,
            "additionalContext": message(found, state, count, config, cwd),
        }
    }


def message(
    found: Assessment, state: SessionState, calls: int, config: MonitorConfig, cwd: str
) -> str:
    """What the agent reads: the figures, and at critical, the request for a handoff."""
    if found.source == FROM_TOOL_CALLS:
        return (
            f"[Sparrow context monitor] No token usage could be read from this session's "
            f"transcript. The session has made {calls:,} tool calls "
            f"(the warning level starts at {config.fallback_tool_count:,})."
        )
    tokens = found.tokens or 0
    model = f", model {state.model}" if state.model else ""
    if found.window is None:
        figures = f"{tokens:,} tokens (the model's context window is not known)"
    else:
        figures = f"{tokens:,} of {found.window:,} tokens ({tokens / found.window:.0%})"
    text = f"[Sparrow context monitor] Context: {figures}{model}. Level: {found.level}"
    bounds = []
    if found.warning_at is not None:
        bounds.append(f"warning from {found.warning_at:,} tokens")
    if found.critical_at is not None:
        bounds.append(f"critical from {found.critical_at:,}")
    text += f" ({', '.join(bounds)})." if bounds else "."
    if found.level == CRITICAL:
        folder = os.path.join(cwd, ".sparrow", "handoff") if cwd else ".sparrow/handoff"
        text += (
            " Write a handoff document now, before the context is compacted: the goal, "
            "what is done, what remains, decisions made and why, and the files involved. "
            f"Save it in {folder}/ (named by the current date and time), then tell the user."
        )
    return text


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def load_config(env: dict[str, str], cwd: str = "", lookup: Lookup | None = None) -> MonitorConfig:
    """The monitor settings: the defaults unless a config file exists (then parsed).
    ``lookup``: where a window nothing else states comes from (None: nowhere)."""
    config_file = os.path.join(config_dir(env), "config.toml")
    local = os.path.join(cwd, ".sparrow", "config.toml") if cwd else ""
    if not os.path.isfile(config_file) and not (local and os.path.isfile(local)):
        return MonitorConfig(lookup=lookup)
    from pathlib import Path

    from server.core.settings import load_settings

    settings = load_settings(Path(config_file), Path(cwd) if local else None)
    return MonitorConfig.from_settings(settings.monitor, lookup=lookup)


def config_dir(env: dict[str, str]) -> str:
    return _app_dir(env, "config", "XDG_CONFIG_HOME", (".config",))


def state_dir(env: dict[str, str]) -> str:
    return _app_dir(env, "state", "XDG_STATE_HOME", (".local", "state"))


def _app_dir(env: dict[str, str], kind: str, xdg: str, default: tuple[str, ...]) -> str:
    """``server.core.paths.resolve_paths()``'s folder, without importing platformdirs
    (12-24 ms here) on Linux, where it follows the XDG variables."""
    home = env.get(HOME_ENV, "").strip()
    if home:
        return os.path.join(os.path.abspath(os.path.expanduser(home)), kind)
    if sys.platform.startswith("linux"):
        base = env.get(xdg, "").strip() or os.path.join(os.path.expanduser("~"), *default)
        return os.path.join(base, APP_NAME)
    from server.core.paths import resolve_paths

    return str(getattr(resolve_paths(env), kind))


def _count_call(folder: str, session_id: str) -> int:
    """Count this PostToolUse call for ``session_id`` in a small file; the new count."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:128]
    hooks = os.path.join(folder, "monitor", "hook")
    path = os.path.join(hooks, f"{safe}.json")
    count = 0
    try:
        with open(path, encoding="utf-8") as handle:
            count = int(json.load(handle).get("calls", 0))
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    count += 1
    try:
        os.makedirs(hooks, exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump({"calls": count}, handle)
        os.replace(temporary, path)
        if count == 1:  # a new session: forget the counts of long-gone ones
            _prune(hooks)
    except OSError:
        pass  # counting is best effort: never block the session for it
    return count


def _prune(folder: str, older_than_days: float = 14.0) -> None:
    import time

    limit = time.time() - older_than_days * 86400
    with os.scandir(folder) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.stat().st_mtime < limit:
                    os.remove(entry.path)


# --- install / uninstall ----------------------------------------------------------


class InstallError(Exception):
    """Claude Code's settings cannot be changed as asked; the message says why."""


def install_command(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    try:
        target = settings_file(args.project, env)
        if args.uninstall:
            changed = uninstall(target, state_dir(env))
            done = "removed Sparrow's hook from" if changed else "no Sparrow hook to remove in"
        else:
            command = hook_command()
            changed = install(target, command, state_dir(env))
            done = f"added `{command}` (PostToolUse) to" if changed else "already installed in"
    except InstallError as exc:
        print(f"sparrow: {exc}", file=sys.stderr)
        return 1
    print(f"{done} {target}")
    return 0


def settings_file(project: str | None, env: dict[str, str]) -> str:
    """``DIR/.claude/settings.json`` for a project, else the user's Claude Code
    settings (in ``$CLAUDE_CONFIG_DIR`` if set, else ``~/.claude``)."""
    if project:
        folder = os.path.abspath(os.path.expanduser(project))
        if not os.path.isdir(folder):
            raise InstallError(f"project folder not found: {folder}")
        return os.path.join(folder, ".claude", "settings.json")
    configured = [p.strip() for p in env.get("CLAUDE_CONFIG_DIR", "").split(",") if p.strip()]
    base = configured[0] if configured else os.path.join("~", ".claude")
    return os.path.join(os.path.abspath(os.path.expanduser(base)), "settings.json")


def hook_command() -> str:
    """The command line Claude Code runs: this ``sparrow`` script, by its full path."""
    import shlex
    import shutil

    script = sys.argv[0] if sys.argv and os.path.basename(sys.argv[0]) == "sparrow" else ""
    found = os.path.abspath(script) if script and os.path.isfile(script) else None
    found = found or shutil.which("sparrow", path=os.path.dirname(sys.executable))
    found = found or shutil.which("sparrow")
    return f"{shlex.quote(found) if found else 'sparrow'} {HOOK_ARGS}"


def is_ours(entry: object) -> bool:
    """A hook entry this command added: ``<...>/sparrow hook claude-code``."""
    if not isinstance(entry, dict) or entry.get("type") != "command":
        return False
    command = entry.get("command")
    if not isinstance(command, str) or not command.endswith(" " + HOOK_ARGS):
        return False
    program = command[: -len(HOOK_ARGS) - 1].strip().strip("'\"")
    return os.path.basename(program) == "sparrow"


def install(path: str, command: str, state: str) -> bool:
    """Add the hook to the settings file at ``path``; False if it is already there."""
    existed = os.path.exists(path)
    data = _load_settings(path)
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{path}: 'hooks' is not an object; not changing it")
    groups = hooks.get(HOOK_EVENT, [])
    if not isinstance(groups, list):
        raise InstallError(f"{path}: 'hooks.{HOOK_EVENT}' is not a list; not changing it")
    entry = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS}
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        for index, old in enumerate(inner if isinstance(inner, list) else []):
            if is_ours(old):
                if old == entry:
                    return False
                _backup(path)  # an older path to sparrow: point it at this one
                assert isinstance(inner, list)
                inner[index] = entry
                _write_json(path, data)
                return True
    record = {"file": not existed, "hooks": "hooks" not in data, "event": HOOK_EVENT not in hooks}
    if existed:
        _backup(path)
    groups.append({"matcher": "*", "hooks": [entry]})
    hooks[HOOK_EVENT] = groups
    data["hooks"] = hooks
    _write_json(path, data)
    _remember(state, path, record)
    return True


def uninstall(path: str, state: str) -> bool:
    """Remove exactly what ``install`` added to ``path``; False if there was nothing."""
    if not os.path.exists(path):
        _remember(state, path, None)
        return False
    data = _load_settings(path)
    hooks = data.get("hooks")
    groups = hooks.get(HOOK_EVENT) if isinstance(hooks, dict) else None
    if not isinstance(hooks, dict) or not isinstance(groups, list):
        return False
    kept, removed = [], False
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list) or not any(is_ours(h) for h in inner):
            kept.append(group)
            continue
        removed = True
        rest = [h for h in inner if not is_ours(h)]
        if rest or set(group) - {"matcher", "hooks"}:  # the user's own additions stay
            kept.append({**group, "hooks": rest})
    if not removed:
        return False
    record = _remember(state, path, None) or {}
    _backup(path)
    hooks[HOOK_EVENT] = kept
    if not kept and record.get("event"):
        del hooks[HOOK_EVENT]
    if not hooks and record.get("hooks"):
        del data["hooks"]
    if not data and record.get("file"):
        os.remove(path)
    else:
        _write_json(path, data)
    return True


def _load_settings(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InstallError(f"{path} cannot be read: {exc.strerror}") from exc
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); fix it first") from exc
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object; not changing it")
    return data


def _write_json(path: str, data: dict[str, Any]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.sparrow-{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
    os.replace(temporary, path)


def _backup(path: str) -> str | None:
    """Copy ``path`` next to itself before it changes: ``settings.json.sparrow-backup-<time>``."""
    if not os.path.exists(path):
        return None
    import shutil
    import time

    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup, n = f"{path}.sparrow-backup-{stamp}", 1
    while os.path.exists(backup):
        n += 1
        backup = f"{path}.sparrow-backup-{stamp}-{n}"
    shutil.copy2(path, backup)
    return backup


def _remember(state: str, path: str, record: dict[str, bool] | None) -> dict[str, bool] | None:
    """What ``install`` created in ``path`` (to remove no more than that), kept in
    Sparrow's state. ``record=None`` forgets it and returns what was there."""
    book = os.path.join(state, "monitor", "claude-hooks.json")
    try:
        with open(book, encoding="utf-8") as handle:
            known = json.load(handle)
        known = known if isinstance(known, dict) else {}
    except (OSError, ValueError):
        known = {}
    key = os.path.realpath(path)
    previous = known.pop(key, None)
    if record is not None:
        known[key] = record
    with contextlib.suppress(OSError):
        _write_json(book, known)
    return previous if isinstance(previous, dict) else None
