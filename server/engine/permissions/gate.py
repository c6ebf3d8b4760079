"""The gate every tool call passes before it runs, in the order of
autonomy-and-safety.md: the mode's absolute stops, the workspace boundary and
its protected paths, the user's rules (deny, then ask, then allow), the mode's
read-only limit, then the autonomy table.

Pure: it reads the workspace's file system (to resolve symlinks) but changes
nothing; the loop acts on the verdict."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from server.engine.permissions.autonomy import Decision, autonomy_verdict, needs_checkpoint
from server.engine.permissions.commands import mentioned_anywhere, split_command
from server.engine.permissions.modes import BAND_OF_MODE, Contract, Mode
from server.engine.permissions.protected import protected_part, protected_word, word_pieces
from server.engine.permissions.rules import DEFAULT_RULES, Effect, Rule
from server.engine.tools.base import Risk
from server.engine.workspace import Workspace

# The arguments that name a workspace path, by tool; glob's pattern is checked
# for protected names only (it is a pattern, not a path).
PATH_ARGS: Final = ("path",)
_DEFAULT_BY_NAME: Final = {rule.pattern: rule for rule in DEFAULT_RULES}


@dataclass(frozen=True)
class CallFacts:
    tool: str
    risk: Risk
    args: dict[str, Any]
    workspace: Workspace
    session_id: str
    provider: str
    surface: str
    # The workspace the rules are scoped to (a worktree run works in a copy of it).
    scope_root: str = ""


@dataclass(frozen=True)
class GateVerdict:
    decision: Decision
    reason: str
    decided_by: str  # boundary | mode | rule | autonomy
    needs_checkpoint: bool = False
    notify: bool = False
    sandboxed: bool = False
    rule: Rule | None = None
    # Set when the call is not merely refused but ends the run (a hard stop).
    hard_stop: str | None = None


def judge(facts: CallFacts, contract: Contract, rules: Sequence[Rule]) -> GateVerdict:
    if contract.mode == Mode.EMERGENCY_STOP:
        return GateVerdict(Decision.DENY, "emergency stop: every tool call is denied", "mode")
    if contract.mode == Mode.PLAN:
        return GateVerdict(Decision.DENY, "plan mode: tools are not run while planning", "mode")
    boundary = _boundary(facts)
    if boundary is not None:
        return boundary
    applicable = [
        rule
        for rule in rules
        if rule.names_tool(facts.tool)
        and rule.applies_to(
            workspace=facts.scope_root or str(facts.workspace.root),
            session_id=facts.session_id,
            provider=facts.provider,
            surface=facts.surface,
        )
    ]
    by_rule = _by_rules(facts, applicable)
    if by_rule is not None:
        # Read-only stays read-only: a rule may refuse more, never allow more.
        read_only = contract.mode == Mode.READ_ONLY and facts.risk != Risk.READ_ONLY
        if read_only and by_rule.decision != Decision.DENY:
            return _read_only(facts)
        return by_rule
    if contract.mode == Mode.READ_ONLY:
        if facts.risk == Risk.READ_ONLY:
            return GateVerdict(Decision.ALLOW, "read-only mode: reading is allowed", "mode")
        return _read_only(facts)
    band = BAND_OF_MODE[contract.mode]
    verdict = autonomy_verdict(band, facts.risk)
    return GateVerdict(
        verdict.decision,
        verdict.reason,
        "autonomy",
        needs_checkpoint=verdict.needs_checkpoint,
        notify=verdict.notify,
        sandboxed=verdict.sandboxed,
    )


def _read_only(facts: CallFacts) -> GateVerdict:
    return GateVerdict(Decision.DENY, f"read-only mode: {facts.risk} tools are denied", "mode")


def _boundary(facts: CallFacts) -> GateVerdict | None:
    """The workspace's edge and its protected paths: no rule, mode or level opens them."""
    writes = facts.risk in (Risk.MUTATING, Risk.DESTRUCTIVE)
    for name in PATH_ARGS:
        raw = facts.args.get(name)
        if not isinstance(raw, str):
            continue
        verdict = _check_path(facts.workspace, raw, writes)
        if verdict is not None:
            return verdict
    pattern = facts.args.get("pattern")
    if facts.tool == "glob" and isinstance(pattern, str):
        found = protected_part(pattern)
        if found is not None:
            return _protected(found, pattern)
    command = facts.args.get("command")
    if facts.risk == Risk.EXEC and isinstance(command, str):
        for word in split_command(command).words:
            found = protected_word(word)
            if found is not None:
                return _protected(found, word)
            own = _own_word(facts.workspace, word)
            if own is not None:
                return _own(own, word)
    return None


def _own_word(workspace: Workspace, word: str) -> str | None:
    """What a shell word names when it points into one of Sparrow's own folders
    (``~/.local/state/sparrow``, ``$HOME/...`` as written, or a path under the
    workspace), judged by its words like the protected names."""
    if not workspace.own:
        return None
    for text in word_pieces(word):
        if "/" not in text and not text.startswith("~"):
            continue
        for prefix in ("$HOME", "${HOME}"):
            if text.startswith(prefix):
                text = "~" + text[len(prefix):]
        text = os.path.expanduser(text)
        full = Path(os.path.normpath(workspace.root / text))
        own = workspace.own_folder_of(full)
        if own is not None:
            return own
    return None


def _own(what: str, where: str) -> GateVerdict:
    return GateVerdict(
        Decision.DENY,
        f"denied: '{where}' is in {what}; no tool reads or writes Sparrow's own files",
        "boundary",
    )


def _check_path(workspace: Workspace, raw: str, writes: bool) -> GateVerdict | None:
    """The workspace's edge first (a write across it ends the run), then the
    protected names, in the path as written and in the path it resolves to."""
    literal = os.path.normpath(raw.replace("\\", "/")) if raw else "."
    lexically_inside = not os.path.isabs(literal) and literal.split(os.sep)[0] != ".."
    try:
        resolved = workspace.resolve(raw)
    except PermissionError as exc:  # OutsideWorkspace, or a NUL byte
        if lexically_inside and "\x00" not in raw:
            stop = f"sandbox escape signal: '{raw}' leads outside the workspace through a symlink"
            return GateVerdict(Decision.DENY, stop, "boundary", hard_stop=stop)
        if writes:
            stop = f"write outside the workspace: '{raw}'"
            return GateVerdict(Decision.DENY, stop, "boundary", hard_stop=stop)
        return GateVerdict(Decision.DENY, str(exc), "boundary")
    except OSError as exc:  # a symlink loop, or a path the file system refuses
        return GateVerdict(Decision.DENY, str(exc), "boundary")
    for path in (_as_written(workspace, raw), workspace.relative(resolved)):
        found = protected_part(path)
        if found is not None:
            return _protected(found, raw)
    own = workspace.own_folder_of(resolved)
    if own is not None:
        return _own(own, raw)
    return None


def _as_written(workspace: Workspace, raw: str) -> str:
    """``raw`` as a workspace-relative path, before symlinks are followed. An
    absolute path is judged below the workspace's root only: the folders the
    workspace itself sits in are the user's business, not the rules'."""
    written = Path(os.path.normpath(raw.replace("\\", "/")) if raw else ".")
    if written.is_absolute():
        root = workspace.root
        written = written.relative_to(root) if written.is_relative_to(root) else Path(".")
    return written.as_posix()


def _protected(name: str, where: str) -> GateVerdict:
    rule = _DEFAULT_BY_NAME.get(name) or _DEFAULT_BY_NAME.get(name.lower())
    return GateVerdict(
        Decision.DENY,
        f"denied: '{where}' is a protected path ({name}); no rule or level opens it",
        "boundary",
        rule=rule,
    )


def _by_rules(facts: CallFacts, rules: Sequence[Rule]) -> GateVerdict | None:
    """Deny wins over everything, then ask, then allow; None when no rule matches."""
    if facts.risk == Risk.EXEC and isinstance(facts.args.get("command"), str):
        return _by_command_rules(facts, rules)
    paths = _rule_paths(facts)
    url = facts.args.get("url")
    host = urlsplit(url).hostname if isinstance(url, str) else None
    for effect in (Effect.DENY, Effect.ASK, Effect.ALLOW):
        for rule in rules:
            if rule.effect == effect and _matches(rule, paths, host):
                return _rule_verdict(facts, rule)
    return None


def _rule_paths(facts: CallFacts) -> tuple[str, ...]:
    """The call's path as rules see it, resolved and as written; () for none.
    Worked out once per call: resolving touches the file system."""
    raw = facts.args.get("path")
    if not isinstance(raw, str):
        return ()
    try:
        relative = facts.workspace.relative(facts.workspace.resolve(raw))
    except OSError:  # refused by the boundary already
        return ()
    return (relative, _as_written(facts.workspace, raw))


def _matches(rule: Rule, paths: tuple[str, ...], host: str | None) -> bool:
    if rule.pattern is None:
        return True
    if rule.kind == "domain":
        return host is not None and rule.matches_domain(host)
    if rule.kind == "command":
        return False  # only the command path below judges commands
    return any(rule.matches_path(path) for path in paths)


def _by_command_rules(facts: CallFacts, rules: Sequence[Rule]) -> GateVerdict | None:
    command = facts.args["command"]
    line = split_command(command)
    command_rules = [r for r in rules if r.pattern is None or r.kind == "command"]

    def first(effect: Effect, part: str) -> Rule | None:
        for rule in command_rules:
            if rule.effect != effect:
                continue
            if rule.pattern is None or rule.matches_command(part):
                return rule
            if line.opaque and mentioned_anywhere(rule.pattern, command):
                return rule
        return None

    for effect in (Effect.DENY, Effect.ASK):
        for part in line.parts or (command,):
            rule = first(effect, part)
            if rule is not None:
                return _rule_verdict(facts, rule, part)
    # Allowed only when every part is: one allowed command must not carry another.
    if not line.parts or (line.opaque and not any(r.pattern is None for r in command_rules)):
        return None
    chosen = [first(Effect.ALLOW, part) for part in line.parts]
    if any(rule is None for rule in chosen):
        return None
    assert chosen[0] is not None
    return _rule_verdict(facts, chosen[0])


def _rule_verdict(facts: CallFacts, rule: Rule, part: str | None = None) -> GateVerdict:
    decision = Decision(rule.effect.value)
    what = f" ('{part}')" if part is not None and part != facts.args.get("command") else ""
    verb = {"allow": "allowed", "ask": "asks", "deny": "denied"}[rule.effect.value]
    return GateVerdict(
        decision,
        f"{verb} by rule {rule.spec}{what}",
        "rule",
        needs_checkpoint=needs_checkpoint(facts.risk, decision),
        rule=rule,
    )
