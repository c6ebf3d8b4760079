"""What a response cost and how large the model's context window is.

Prices come from ``[budget.prices]`` when the user set one for the model
(their own deal wins), else from genai-prices' offline data — but only where
the endpoint is the vendor's own: a proxy or a local server that speaks the
same format may charge anything, or nothing. Otherwise the cost is unknown,
and shown so; never a guess. genai-prices is loaded on first use (~0.2 s)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from server.core.settings import BudgetSettings, Settings
from server.providers.base import Usage

Pricer = Callable[[Usage], float]


@dataclass(frozen=True)
class ModelFacts:
    context_window: int | None
    window_source: str  # "settings", "price data", "the endpoint", "" (unknown)
    pricer: Pricer | None  # None: the cost of its responses is not known
    price_source: str  # "settings", "price data", "" (unknown)


def by_prefix(table: Mapping[str, Any], model_id: str) -> Any | None:
    """The value of the longest key that starts ``model_id`` or its model name."""
    _, _, name = model_id.partition(":")
    best: tuple[str, Any] | None = None
    for prefix, value in table.items():
        if (model_id.startswith(prefix) or (name and name.startswith(prefix))) and (
            best is None or len(prefix) > len(best[0])
        ):
            best = (prefix, value)
    return best[1] if best else None


def _settings_pricer(budget: BudgetSettings, model_id: str) -> Pricer | None:
    price = by_prefix(budget.prices, model_id)
    if price is None:
        return None
    per_input, per_output = float(price[0]), float(price[1])

    def cost(usage: Usage) -> float:
        return (usage.context_tokens * per_input + usage.output_tokens * per_output) / 1_000_000

    return cost


@functools.cache
def _model_info(price_id: str | None, model: str) -> Any | None:
    """``price_id`` None: the provider whose models match ``model``'s name."""
    from genai_prices import data_snapshot

    try:
        _, info = data_snapshot.get_snapshot().find_provider_model(model, None, price_id, None)
    except LookupError:
        return None
    return info


def context_window_of(model: str, price_id: str | None = None) -> int | None:
    """The context window genai-prices' data gives ``model`` (of ``price_id``, else
    of whichever provider's models match its name), or None. The first call loads
    the data (~0.5 s): callers on an event loop run it in a worker thread."""
    info = _model_info(price_id, model)
    if info is None and price_id is not None:
        info = _model_info(None, model)  # a proxy's model: another vendor's
    window = getattr(info, "context_window", None) if info is not None else None
    return int(window) if isinstance(window, int) and window > 0 else None


def _data_pricer(price_id: str, model: str) -> Pricer | None:
    if _model_info(price_id, model) is None:
        return None

    def cost(usage: Usage) -> float:
        from genai_prices import Usage as PriceUsage
        from genai_prices import calc_price

        # genai-prices counts the cache inside input_tokens, as the vendors bill it.
        priced = PriceUsage(
            input_tokens=usage.context_tokens,
            cache_read_tokens=usage.cache_read_input_tokens,
            cache_write_tokens=usage.cache_creation_input_tokens,
            output_tokens=usage.output_tokens,
        )
        return float(calc_price(priced, model, provider_id=price_id).total_price)

    return cost


def model_facts(
    model_id: str,
    settings: Settings,
    *,
    price_id: str | None,
    configured_window: int = 0,
    reported_window: int | None = None,
    known_price_id: str | None = None,
) -> ModelFacts:
    """``price_id``: the genai-prices provider whose prices apply (the vendor's own
    endpoint), or None. ``known_price_id``: where to look up the window even when
    prices do not apply (a proxy of the same vendor still serves the same model)."""
    _, _, model = model_id.partition(":")
    pricer, price_source = _settings_pricer(settings.budget, model_id), "settings"
    if pricer is None and price_id is not None:
        pricer, price_source = _data_pricer(price_id, model), "price data"
    if pricer is None:
        price_source = ""

    window = by_prefix(settings.models.windows, model_id)
    if window:
        return ModelFacts(int(window), "settings", pricer, price_source)
    if configured_window:
        return ModelFacts(configured_window, "settings", pricer, price_source)
    if reported_window:
        return ModelFacts(reported_window, "the endpoint", pricer, price_source)
    lookup = price_id or known_price_id
    info = _model_info(lookup, model) if lookup else None
    if info is not None and info.context_window:
        return ModelFacts(int(info.context_window), "price data", pricer, price_source)
    return ModelFacts(None, "", pricer, price_source)
