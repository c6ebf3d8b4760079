# ruff: noqa: RUF001, E501  (the reference's tables, verbatim: en dashes, long rows)
"""The reference's tables, cell by cell (autonomy-and-safety.md, "Gate Decisions").

The tables are copied here verbatim (the reference lives outside the
repository); each cell and each row is checked against the gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.engine.permissions.autonomy import TABLE, Decision, autonomy_verdict
from server.engine.permissions.gate import CallFacts, judge
from server.engine.permissions.modes import BANDS, Band, Contract, Mode, band_of
from server.engine.permissions.rules import DEFAULT_RULES, make_rule
from server.engine.tools.base import Risk
from server.engine.tools.registry import default_tools
from server.engine.workspace import open_workspace

AUTONOMY_TABLE = """
| Risk | Supervised | Trusted | Autonomous |
|---|---|---|---|
| ReadOnly | Allow | Allow | Allow |
| Mutating | Ask | Notify+Checkpoint | Allow+Checkpoint |
| Exec | Ask | Notify (sandbox) | Allow (sandbox) |
| Destructive | Deny | Ask | Ask |
| Network | Ask | Allow | Allow |
"""

LEVELS_TABLE = """
| Level | Value | Description |
|---|---|---|
| Supervised | 0.0–0.33 | Every mutating/exec/destructive action asks the user |
| Trusted | 0.34–0.66 | Mutating/exec actions auto-approved with checkpoint+notify |
| Autonomous | 0.67–1.0 | Most actions auto-approved; only destructive asks |
"""


def _rows(table: str) -> list[list[str]]:
    lines = [line for line in table.strip().splitlines()[2:]]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


CELLS = [
    (Risk(row[0]), Band(band), text)
    for row in _rows(AUTONOMY_TABLE)
    for band, text in zip(("Supervised", "Trusted", "Autonomous"), row[1:], strict=True)
]
# One call of each risk, on an ordinary file of the workspace.
CALLS = {
    Risk.READ_ONLY: ("read_file", {"path": "a.txt"}),
    Risk.MUTATING: ("write_file", {"path": "a.txt", "content": "x"}),
    Risk.EXEC: ("run_shell", {"command": "make test"}),
    Risk.DESTRUCTIVE: ("delete_file", {"path": "a.txt"}),
    Risk.NETWORK: ("fetch_url", {"url": "https://example.com/"}),
}
MODE_OF = {Band.SUPERVISED: Mode.SUPERVISED, Band.TRUSTED: Mode.TRUSTED}
MODE_OF[Band.AUTONOMOUS] = Mode.AUTONOMOUS


def test_the_table_has_every_risk_and_band() -> None:
    assert len(CELLS) == 15
    assert {risk for risk, _, _ in CELLS} == set(Risk)
    assert set(TABLE) == set(Risk) and all(set(row) == set(Band) for row in TABLE.values())


def facts(workspace: Path, risk: Risk) -> CallFacts:
    tool, args = CALLS[risk]
    tools = default_tools()
    found = tools.get(tool)
    assert found is not None and found.risk == risk
    return CallFacts(
        tool=tool,
        risk=risk,
        args=args,
        workspace=open_workspace(workspace),
        session_id="s",
        provider="demo",
        surface="web",
    )


@pytest.mark.parametrize(("risk", "band", "text"), CELLS, ids=lambda v: str(v))
def test_every_cell_of_the_autonomy_table(
    risk: Risk, band: Band, text: str, workspace: Path
) -> None:
    verdict = autonomy_verdict(band, risk)
    assert TABLE[risk][band].text() == text
    expected = {"Ask": Decision.ASK, "Deny": Decision.DENY}.get(text, Decision.ALLOW)
    assert verdict.decision == expected
    assert verdict.notify == text.startswith("Notify")
    assert verdict.sandboxed == text.endswith("(sandbox)")
    # architecture.md: every Mutating / Exec / Destructive call that may run is checkpointed.
    changes = risk in (Risk.MUTATING, Risk.EXEC, Risk.DESTRUCTIVE)
    assert verdict.needs_checkpoint == (changes and expected != Decision.DENY)
    if "Checkpoint" in text:
        assert verdict.needs_checkpoint
    assert verdict.reason == f"{band} · {risk}: {text}"
    # Through the whole gate, in the mode of that band, with no rule but the defaults.
    contract = Contract.of(MODE_OF[band].value, 0.5)
    gated = judge(facts(workspace, risk), contract, DEFAULT_RULES)
    assert (gated.decision, gated.decided_by, gated.notify) == (
        expected,
        "autonomy",
        verdict.notify,
    )
    assert gated.needs_checkpoint == verdict.needs_checkpoint


@pytest.mark.parametrize("row", _rows(LEVELS_TABLE), ids=lambda r: r[0])
def test_the_levels_table_bands(row: list[str]) -> None:
    low, high = (float(v) for v in row[1].split("–"))
    band = Band(row[0])
    assert (band, low, high) in BANDS
    for level in (low, high, round((low + high) / 2, 2)):
        assert band_of(level) == band
    # Between the table's two-decimal ranges: rounded to the nearer one.
    assert band_of(0.334) == Band.SUPERVISED and band_of(0.336) == Band.TRUSTED
    assert band_of(0.664) == Band.TRUSTED and band_of(0.666) == Band.AUTONOMOUS


def test_the_levels_descriptions_hold(workspace: Path) -> None:
    def decision(band: Band, risk: Risk) -> Decision:
        contract = Contract.of(MODE_OF[band].value, 0.5)
        return judge(facts(workspace, risk), contract, DEFAULT_RULES).decision

    # Supervised: every mutating/exec/destructive action asks (destructive: denied outright).
    assert all(
        decision(Band.SUPERVISED, r) in (Decision.ASK, Decision.DENY)
        for r in (Risk.MUTATING, Risk.EXEC, Risk.DESTRUCTIVE)
    )
    # Trusted: mutating/exec auto-approved with checkpoint + notify.
    for risk in (Risk.MUTATING, Risk.EXEC):
        verdict = judge(facts(workspace, risk), Contract(Mode.TRUSTED, 0.5), DEFAULT_RULES)
        assert (verdict.decision, verdict.needs_checkpoint, verdict.notify) == (
            Decision.ALLOW,
            True,
            True,
        )
    # Autonomous: only destructive asks.
    asks = [r for r in Risk if decision(Band.AUTONOMOUS, r) == Decision.ASK]
    assert asks == [Risk.DESTRUCTIVE]


MODES_TABLE = """
| Permission mode | Behavior |
|---|---|
| Read-only | Allows read-only tools; denies mutating, exec, network, and destructive tools |
| Plan | Denies tool execution entirely; use for planning-only sessions |
| Supervised | Defers to the Supervised autonomy gate unless an explicit permission rule matches |
| Trusted | Defers to the Trusted autonomy gate, still protected by denied paths and checkpoints |
| Autonomous | Defers to the Autonomous autonomy gate, still protected by denied paths and budget hard stops |
| Emergency stop | Denies every tool execution |
"""
MODE_ROWS = {row[0]: row[1] for row in _rows(MODES_TABLE)}


def _mode(name: str) -> Contract:
    return Contract.of(name.lower().replace(" ", "-"), 0.5)


def test_the_modes_table_names_every_mode() -> None:
    assert {_mode(name).mode for name in MODE_ROWS} == set(Mode)


def test_read_only_allows_reading_and_denies_the_rest(workspace: Path) -> None:
    contract = _mode("Read-only")
    for risk in Risk:
        verdict = judge(facts(workspace, risk), contract, DEFAULT_RULES)
        expected = Decision.ALLOW if risk == Risk.READ_ONLY else Decision.DENY
        assert verdict.decision == expected, risk
    # An allow rule cannot open a write in read-only mode.
    allow = make_rule("allow", "write_file", ["write_file"])
    verdict = judge(facts(workspace, Risk.MUTATING), contract, [*DEFAULT_RULES, allow])
    assert verdict.decision == Decision.DENY and verdict.decided_by == "mode"


@pytest.mark.parametrize("name", ["Plan", "Emergency stop"])
def test_plan_and_emergency_stop_deny_every_tool(name: str, workspace: Path) -> None:
    contract = _mode(name)
    allow_all = make_rule("allow", "*", [])
    for risk in Risk:
        verdict = judge(facts(workspace, risk), contract, [allow_all])
        assert (verdict.decision, verdict.decided_by) == (Decision.DENY, "mode")


def test_supervised_defers_to_its_gate_unless_a_rule_matches(workspace: Path) -> None:
    contract = _mode("Supervised")
    call = facts(workspace, Risk.MUTATING)
    assert judge(call, contract, DEFAULT_RULES).decision == Decision.ASK
    rule = make_rule("allow", "write_file(a.txt)", ["write_file"])
    verdict = judge(call, contract, [*DEFAULT_RULES, rule])
    assert (verdict.decision, verdict.decided_by, verdict.rule) == (Decision.ALLOW, "rule", rule)
    assert verdict.needs_checkpoint  # allowed by a rule, still checkpointed


@pytest.mark.parametrize("name", ["Trusted", "Autonomous"])
def test_trusted_and_autonomous_keep_the_denied_paths(name: str, workspace: Path) -> None:
    contract = _mode(name)
    allow_all = make_rule("allow", "*", [])
    for path in (".env", ".git/config", "sub/.ssh/id_rsa", "id_ed25519", ".env.local"):
        call = facts(workspace, Risk.MUTATING)
        call = CallFacts(**{**call.__dict__, "args": {"path": path, "content": "x"}})
        verdict = judge(call, contract, [*DEFAULT_RULES, allow_all])
        assert (verdict.decision, verdict.decided_by) == (Decision.DENY, "boundary"), path
    # ... and checkpoints (Trusted) for what they allow.
    verdict = judge(facts(workspace, Risk.EXEC), contract, DEFAULT_RULES)
    assert verdict.decision == Decision.ALLOW and verdict.needs_checkpoint
