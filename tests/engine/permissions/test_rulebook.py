"""Rules and the contract as the store keeps them (real SQLite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.settings import AutonomySettings
from server.engine.permissions.modes import Contract, Mode
from server.engine.permissions.rulebook import RuleBook
from server.engine.permissions.rules import RuleError
from server.engine.store import Store


@pytest.fixture
def book(tmp_path: Path) -> RuleBook:
    return RuleBook(Store(tmp_path / "sessions.db"), ["read_file", "run_shell"])


def test_saving_the_same_rule_twice_keeps_one(book: RuleBook) -> None:
    first = book.create("allow", "read_file")
    assert book.create("allow", "read_file").id == first.id
    scoped = book.create("allow", "read_file", scope="workspace", workspace="/w")
    assert scoped.id != first.id
    assert book.create("allow", "read_file", scope="workspace", workspace="/w").id == scoped.id
    assert book.create("deny", "read_file").id != first.id
    assert book.create("allow", "read_file", provider="demo").id != first.id
    stored = [r for r in book.all_rules() if r.source == "user"]
    assert len(stored) == 4


def test_update_delete_and_the_defaults(book: RuleBook) -> None:
    rule = book.create("allow", "Bash(npm test:*)", scope="workspace", workspace="/w")
    changed = book.update(rule.id, effect="deny", scope="global")
    assert (changed.id, changed.effect.value, changed.scope.value, changed.workspace) == (
        rule.id,
        "deny",
        "global",
        None,
    )
    assert [r.spec for r in book.rules(workspace="/elsewhere") if r.source == "user"] == [
        "Bash(npm test:*)"
    ]
    with pytest.raises(RuleError):
        book.update("default:.env", effect="allow")
    with pytest.raises(RuleError):
        book.delete("default:.env")
    assert book.delete(rule.id) and not book.delete(rule.id)


def test_the_contract_is_remembered_over_the_settings(book: RuleBook) -> None:
    defaults = AutonomySettings(level=0.2, mode="supervised")
    assert book.contract(defaults) == Contract(Mode.SUPERVISED, 0.2)
    book.set_contract(Contract(Mode.TRUSTED, 0.5))
    assert book.contract(defaults) == Contract(Mode.TRUSTED, 0.5)
