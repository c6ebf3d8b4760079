"""The rules and the contract (mode + dial) as the store keeps them.

Read fresh at every tool call: a rule added from the CLI, or the dial turned
in the window, takes effect at a live run's next call, in any process."""

from __future__ import annotations

import functools
import json
import operator
import time
from collections.abc import Callable, Collection
from dataclasses import replace

from peewee import fn

from server.core.settings import AutonomySettings
from server.engine.permissions.modes import Contract, ContractError
from server.engine.permissions.rules import (
    DEFAULT_RULES,
    Effect,
    Rule,
    RuleError,
    Scope,
    make_rule,
)
from server.engine.store import Store, new_id
from server.engine.store.rule_records import PreferenceRecord, RuleRecord

_MODE_KEY = "permissions.mode"
_LEVEL_KEY = "autonomy.level"
# Where a saved rule comes from; the defaults are never stored, so never restored.
_RESTORABLE_SOURCES = frozenset({"user", "claude-settings"})


def _to_rule(row: RuleRecord) -> Rule:
    return Rule(
        effect=Effect(row.effect),
        tool=row.tool,
        pattern=row.pattern,
        scope=Scope(row.scope),
        workspace=row.workspace,
        session_id=row.session_id,
        provider=row.provider,
        surface=row.surface,
        id=row.id,
        source=row.source,
        hits=row.hits,
        last_used_at=row.last_used_at,
        created_at=row.created_at,
    )


def _columns(rule: Rule) -> dict[str, str | None]:
    """The columns that say what a rule is (not its id, origin or use)."""
    return {
        "effect": rule.effect.value,
        "tool": rule.tool,
        "pattern": rule.pattern,
        "scope": rule.scope.value,
        "workspace": rule.workspace,
        "session_id": rule.session_id,
        "provider": rule.provider,
        "surface": rule.surface,
    }


class RuleBook:
    def __init__(
        self, store: Store, known_tools: Collection[str] | Callable[[], Collection[str]]
    ) -> None:
        """``known_tools``: the tool names rules may name, or what gives them when a
        rule is first made (the server starts without loading the tools)."""
        self.store = store
        self._known_tools = known_tools
        store.db.bind([RuleRecord, PreferenceRecord])

    @functools.cached_property
    def known_tools(self) -> frozenset[str]:
        names = self._known_tools
        return frozenset(names() if callable(names) else names)

    # --- rules ---------------------------------------------------------------

    def rules(self, *, workspace: str | None = None, session_id: str | None = None) -> list[Rule]:
        """The defaults, the global rules, and those of ``workspace`` / ``session_id``."""
        query = RuleRecord.select().where(
            (RuleRecord.scope == Scope.GLOBAL.value)
            | ((RuleRecord.scope == Scope.WORKSPACE.value) & (RuleRecord.workspace == workspace))
            | ((RuleRecord.scope == Scope.SESSION.value) & (RuleRecord.session_id == session_id))
        )
        stored = [_to_rule(row) for row in query.order_by(RuleRecord.created_at)]
        return [*DEFAULT_RULES, *stored]

    def all_rules(self) -> list[Rule]:
        stored = RuleRecord.select().order_by(RuleRecord.created_at)
        return [*DEFAULT_RULES, *(_to_rule(row) for row in stored)]

    def get(self, rule_id: str) -> Rule | None:
        for rule in DEFAULT_RULES:
            if rule.id == rule_id:
                return rule
        row = RuleRecord.get_or_none(RuleRecord.id == rule_id)
        return _to_rule(row) if row is not None else None

    def add(self, rule: Rule) -> Rule:
        """Save ``rule``; an identical one already saved is returned instead."""
        same = self._identical(rule)
        if same is not None:
            return same
        saved = replace(rule, id=new_id("p"), created_at=time.time(), hits=0)
        RuleRecord.create(
            id=saved.id, source=saved.source, created_at=saved.created_at, **_columns(saved)
        )
        return saved

    def create(
        self,
        effect: str,
        spec: str,
        *,
        scope: str = "global",
        workspace: str | None = None,
        session_id: str | None = None,
        provider: str | None = None,
        surface: str | None = None,
        source: str = "user",
    ) -> Rule:
        rule = make_rule(
            effect,
            spec,
            self.known_tools,
            scope=scope,
            workspace=workspace,
            session_id=session_id,
            provider=provider,
            surface=surface,
            source=source,
        )
        return self.add(rule)

    def update(self, rule_id: str, **changes: str | None) -> Rule:
        current = self.get(rule_id)
        if current is None:
            raise KeyError(rule_id)
        if current.source == "default":
            raise RuleError("the default protected paths cannot be changed")
        fields = {
            "effect": current.effect.value,
            "spec": current.spec,
            "scope": current.scope.value,
            "workspace": current.workspace,
            "session_id": current.session_id,
            "provider": current.provider,
            "surface": current.surface,
        }
        fields.update({k: v for k, v in changes.items() if k in fields})
        effect, spec, scope = fields["effect"], fields["spec"], fields["scope"]
        if effect is None or spec is None:
            raise RuleError("a rule needs its effect and its spec")
        rule = make_rule(
            effect,
            spec,
            self.known_tools,
            scope=scope or "global",
            workspace=fields["workspace"],
            session_id=fields["session_id"],
            provider=fields["provider"],
            surface=fields["surface"],
            source=current.source,
        )
        RuleRecord.update(**_columns(rule)).where(RuleRecord.id == rule_id).execute()
        updated = self.get(rule_id)
        assert updated is not None
        return updated

    def restore(self, rule: Rule) -> Rule:
        """Put a deleted rule back as it was (the Undo of a delete): its id, its
        place in the list (``created_at``), its hits. One that is there already
        (an Undo sent twice, or the same rule saved again since) is returned instead."""
        if rule.source not in _RESTORABLE_SOURCES or rule.id.startswith("default:"):
            raise RuleError("only a rule that was saved can be restored")
        if not rule.id:
            raise RuleError("a restored rule needs the id it had")
        if rule.hits < 0:
            raise RuleError("a rule's hits cannot be negative")
        existing = self.get(rule.id) or self._identical(rule)
        if existing is not None:
            return existing
        RuleRecord.create(
            id=rule.id,
            source=rule.source,
            hits=rule.hits,
            last_used_at=rule.last_used_at,
            created_at=rule.created_at,
            **_columns(rule),
        )
        restored = self.get(rule.id)
        assert restored is not None
        return restored

    def delete(self, rule_id: str) -> bool:
        if rule_id.startswith("default:"):
            raise RuleError("the default protected paths cannot be removed")
        return bool(RuleRecord.delete().where(RuleRecord.id == rule_id).execute())

    def record_hit(self, rule: Rule) -> None:
        if rule.source == "default" or not rule.id:
            return
        RuleRecord.update(hits=RuleRecord.hits + 1, last_used_at=time.time()).where(
            RuleRecord.id == rule.id
        ).execute()

    def _identical(self, rule: Rule) -> Rule | None:
        # NULL never equals NULL in SQL: an absent pattern or scope target is "".
        same = [
            fn.COALESCE(getattr(RuleRecord, name), "") == (value or "")
            for name, value in _columns(rule).items()
        ]
        row = RuleRecord.get_or_none(functools.reduce(operator.and_, same))
        return _to_rule(row) if row is not None else None

    # --- the contract: mode and dial ------------------------------------------

    def contract(self, defaults: AutonomySettings) -> Contract:
        """What the store remembers, else the settings' defaults."""
        stored = {
            row.key: json.loads(row.value)
            for row in PreferenceRecord.select().where(
                PreferenceRecord.key.in_([_MODE_KEY, _LEVEL_KEY])
            )
        }
        mode = stored.get(_MODE_KEY, defaults.mode)
        level = stored.get(_LEVEL_KEY, defaults.level)
        try:
            return Contract.of(mode, level)
        except ContractError:  # a hand-edited database: the settings still stand
            return Contract.of(defaults.mode, defaults.level)

    def set_contract(self, contract: Contract) -> Contract:
        now = time.time()
        with self.store.db.atomic():
            for key, value in ((_MODE_KEY, contract.mode.value), (_LEVEL_KEY, contract.level)):
                PreferenceRecord.insert(
                    key=key, value=json.dumps(value), updated_at=now
                ).on_conflict(
                    conflict_target=[PreferenceRecord.key],
                    update={
                        PreferenceRecord.value: json.dumps(value),
                        PreferenceRecord.updated_at: now,
                    },
                ).execute()
        return contract
