"""The hard stops that end a run whatever the autonomy: the budget, three
failures in a row of one tool (``MAX_TURNS`` and the workspace boundary are
judged in the loop and the gate)."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.core.settings import BudgetSettings
from server.providers.base import Usage
from server.providers.pricing import Pricer

FAILURES_IN_A_ROW = 3


class HardStop(Exception):
    """Ends the run with status ``stopped``; the message is the user's reason."""


@dataclass
class Budget:
    limits: BudgetSettings
    model: str
    # What a response costs; None: not known (a local model, a proxy, no price data).
    pricer: Pricer | None = None
    tokens: int = 0
    cost_usd: float = 0.0

    def check_start(self) -> None:
        if self.limits.max_cost_usd > 0 and self.pricer is None:
            raise HardStop(
                f"budget: max_cost_usd is set but the cost of the model '{self.model}' is not "
                "known (no price data for it at this endpoint): give its price in "
                "[budget.prices], or remove the limit"
            )

    def cost_of(self, usage: Usage) -> float | None:
        return self.pricer(usage) if self.pricer is not None else None

    def spend(self, usage: Usage, cost: float | None) -> None:
        """Count one response (and its cost, when known); HardStop past a limit."""
        self.tokens += usage.context_tokens + usage.output_tokens
        if cost is not None:
            self.cost_usd += cost
        limit = self.limits.max_tokens
        if limit and self.tokens > limit:
            raise HardStop(f"budget exceeded: {self.tokens:,} tokens used, the limit is {limit:,}")
        cost_limit = self.limits.max_cost_usd
        if cost_limit and self.cost_usd > cost_limit:
            raise HardStop(
                f"budget exceeded: ${self.cost_usd:.4f} spent, the limit is ${cost_limit:.4f}"
            )


@dataclass
class FailureStreaks:
    """Consecutive failures per tool; a success of that tool starts it over."""

    counts: dict[str, int] = field(default_factory=dict)

    def record(self, tool: str, ok: bool) -> None:
        if ok:
            self.counts.pop(tool, None)
            return
        count = self.counts[tool] = self.counts.get(tool, 0) + 1
        if count >= FAILURES_IN_A_ROW:
            raise HardStop(f"the tool {tool} failed {count} times in a row")
