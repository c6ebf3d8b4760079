"""The autonomy gate: (band, risk) -> verdict, exactly the table of
autonomy-and-safety.md ("Gate Decisions"):

    | Risk        | Supervised | Trusted            | Autonomous        |
    | ReadOnly    | Allow      | Allow              | Allow             |
    | Mutating    | Ask        | Notify+Checkpoint  | Allow+Checkpoint  |
    | Exec        | Ask        | Notify (sandbox)   | Allow (sandbox)   |
    | Destructive | Deny       | Ask                | Ask               |
    | Network     | Ask        | Allow              | Allow             |

"Notify" allows and tells the user. Beyond the cells, architecture.md's
invariant holds: every Mutating / Exec / Destructive call that may run is
checkpointed first, so ``needs_checkpoint`` is set for all of them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from server.engine.permissions.modes import Band
from server.engine.tools.base import Risk


class Decision(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


CHANGES_WORKSPACE: Final = frozenset({Risk.MUTATING, Risk.EXEC, Risk.DESTRUCTIVE})


def needs_checkpoint(risk: Risk, decision: Decision) -> bool:
    """architecture.md: every Mutating / Exec / Destructive call that may run."""
    return risk in CHANGES_WORKSPACE and decision != Decision.DENY


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    needs_checkpoint: bool
    notify: bool
    reason: str
    sandboxed: bool = False  # the cell says "(sandbox)": the call runs in the run's sandbox


@dataclass(frozen=True)
class Cell:
    decision: Decision
    notify: bool = False
    checkpoint: bool = False  # the cell names the checkpoint ("+Checkpoint")
    sandbox: bool = False

    def text(self) -> str:
        words = [self.decision.value.capitalize()]
        if self.notify:
            words = ["Notify"]
        if self.checkpoint:
            words.append("Checkpoint")
        text = "+".join(words)
        return f"{text} (sandbox)" if self.sandbox else text


_A, _Q, _D = Decision.ALLOW, Decision.ASK, Decision.DENY
TABLE: Final[dict[Risk, dict[Band, Cell]]] = {
    Risk.READ_ONLY: {
        Band.SUPERVISED: Cell(_A),
        Band.TRUSTED: Cell(_A),
        Band.AUTONOMOUS: Cell(_A),
    },
    Risk.MUTATING: {
        Band.SUPERVISED: Cell(_Q),
        Band.TRUSTED: Cell(_A, notify=True, checkpoint=True),
        Band.AUTONOMOUS: Cell(_A, checkpoint=True),
    },
    Risk.EXEC: {
        Band.SUPERVISED: Cell(_Q),
        Band.TRUSTED: Cell(_A, notify=True, sandbox=True),
        Band.AUTONOMOUS: Cell(_A, sandbox=True),
    },
    Risk.DESTRUCTIVE: {
        Band.SUPERVISED: Cell(_D),
        Band.TRUSTED: Cell(_Q),
        Band.AUTONOMOUS: Cell(_Q),
    },
    Risk.NETWORK: {
        Band.SUPERVISED: Cell(_Q),
        Band.TRUSTED: Cell(_A),
        Band.AUTONOMOUS: Cell(_A),
    },
}


def autonomy_verdict(band: Band, risk: Risk) -> Verdict:
    cell = TABLE[risk][band]
    return Verdict(
        decision=cell.decision,
        needs_checkpoint=needs_checkpoint(risk, cell.decision),
        notify=cell.notify,
        reason=f"{band} · {risk}: {cell.text()}",
        sandboxed=cell.sandbox,
    )
