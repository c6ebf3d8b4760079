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


def test_a_restored_rule_keeps_its_id_place_and_hits(book: RuleBook) -> None:
    first, second, third = (book.create("allow", f"read_file({n}/**)") for n in "abc")
    book.record_hit(second)
    book.record_hit(second)
    used = book.get(second.id)
    assert used is not None and used.hits == 2 and used.last_used_at is not None
    before = book.all_rules()
    assert book.delete(second.id)

    assert book.restore(used) == used
    assert book.all_rules() == before
    assert book.restore(used) == used  # twice is once
    assert book.all_rules() == before
    # Saved again since under another id: that one stands, no duplicate.
    assert book.delete(third.id)
    again = book.create("allow", "read_file(c/**)")
    assert book.restore(third) == again
    with pytest.raises(RuleError):
        book.restore(book.rules()[0])  # a default: never removed, never restored
    assert first in book.all_rules()


def test_the_contract_is_remembered_over_the_settings(book: RuleBook) -> None:
    defaults = AutonomySettings(level=0.2, mode="supervised")
    assert book.contract(defaults) == Contract(Mode.SUPERVISED, 0.2)
    book.set_contract(Contract(Mode.TRUSTED, 0.5))
    assert book.contract(defaults) == Contract(Mode.TRUSTED, 0.5)
