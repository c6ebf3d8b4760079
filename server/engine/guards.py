"""The hard stops that end a run whatever the autonomy: the budget, three
failures in a row of one tool (``MAX_TURNS`` and the workspace boundary are
judged in the loop and the gate)."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.core.settings import BudgetSettings
from server.providers.base import Usage

FAILURES_IN_A_ROW = 3


class HardStop(Exception):
    """Ends the run with status ``stopped``; the message is the user's reason."""


def price_of(budget: BudgetSettings, model: str) -> list[float] | None:
    """The price of the longest model-name prefix that has one."""
    best = None
    for prefix, price in budget.prices.items():
        if model.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, price)
    return best[1] if best else None


@dataclass
class Budget:
    limits: BudgetSettings
    model: str
    tokens: int = 0
    cost_usd: float = 0.0

    def check_start(self) -> None:
        if self.limits.max_cost_usd > 0 and price_of(self.limits, self.model) is None:
            raise HardStop(
                f"budget: max_cost_usd is set but [budget.prices] has no price for the model "
                f"'{self.model}', so its cost cannot be kept under the limit"
            )

    def spend(self, usage: Usage) -> None:
        spent_in = (
            usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
        )
        self.tokens += spent_in + usage.output_tokens
        price = price_of(self.limits, self.model)
        if price is not None:
            self.cost_usd += (spent_in * price[0] + usage.output_tokens * price[1]) / 1_000_000
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
