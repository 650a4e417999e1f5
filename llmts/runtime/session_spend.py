"""The session's spending: running token and cost totals per provider and model, and its ``budget``.

Totals start over with every configure and reset (``restart_locked``, under the session's lock). ``check``
refuses a request once the totals have reached a cap (so the request that crosses a cap is answered, and
the next one is refused); ``spend`` prices an answered request and adds it (docs/configuration.md,
``budget``; docs/journal.md, "Usage and cost").
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any

from llmts.errors import BudgetExhausted
from llmts.runtime.pricing import PriceBook, cost_usd, shown_usd
from llmts.schema.config import SessionConfig
from llmts.schema.economics import Budget

__all__ = ["OTHER_MODELS", "USAGE_ROWS", "SessionSpend"]

# Rows of per-(provider, model) totals a session keeps: model names are the client's, so bounded; past it
# a provider's further models add up in one row named ``OTHER_MODELS`` (docs/journal.md).
USAGE_ROWS = 256
OTHER_MODELS = "(other models)"


@dataclass(slots=True)
class _Row:
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    # Answered requests of this row without a price (their cost is unknown, not zero).
    unpriced_requests: int = 0

    def add(self, usage: tuple[int, int, int, int], cost: float | None) -> None:
        self.requests += 1
        self.input_tokens += usage[0]
        self.output_tokens += usage[1]
        self.cached_tokens += usage[2]
        self.cache_write_tokens += usage[3]
        if cost is None:
            self.unpriced_requests += 1
        else:
            self.cost_usd += cost

    def merge(self, other: _Row) -> None:
        self.requests += other.requests
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cached_tokens += other.cached_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.cost_usd += other.cost_usd
        self.unpriced_requests += other.unpriced_requests

    def public(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "total_tokens": self.input_tokens + self.output_tokens,
            # Unknown while any request was unpriced: a partial sum would read as the whole cost.
            "cost_usd": shown_usd(self.cost_usd) if self.unpriced_requests == 0 else None,
            "priced_cost_usd": shown_usd(self.cost_usd),
            "unpriced_requests": self.unpriced_requests,
        }


class SessionSpend:
    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock
        self._prices = PriceBook({})
        self._budget: Budget | None = None
        self._rows: dict[tuple[str, str], _Row] = {}
        self._total = _Row()
        self._refused = 0

    def restart_locked(self, config: SessionConfig | None) -> None:
        """A new configuration's prices and budget, and totals from zero (lock held)."""
        if config is not None:
            self._prices = PriceBook(config.pricing)
            self._budget = config.budget
        else:
            self._prices = PriceBook({})
            self._budget = None
        self._rows = {}
        self._total = _Row()
        self._refused = 0

    def check(self) -> None:
        """Refuse the request (``BudgetExhausted``) when the totals have reached a cap of the budget."""
        budget = self._budget
        if budget is None:
            return
        with self._lock:
            reason = self._exhausted_locked()
            if reason is None:
                return
            self._refused += 1
        raise BudgetExhausted(
            # Neutral wording: each provider's error renderer answers in its own (OpenAI's quota sentence,
            # Anthropic's credit balance); the others show this one.
            f"the session's budget is used up: {reason}",
            details=[{"budget": budget.model_dump(), "reason": reason}],
        )

    def _exhausted_locked(self) -> str | None:
        """Which cap the totals have reached, or None (lock held)."""
        budget, total = self._budget, self._total
        if budget is None:
            return None
        spent_tokens = total.input_tokens + total.output_tokens
        if budget.max_cost_usd is not None and total.cost_usd >= budget.max_cost_usd:
            return f"{total.cost_usd:.6f} USD spent of max_cost_usd {budget.max_cost_usd}"
        if budget.max_total_tokens is not None and spent_tokens >= budget.max_total_tokens:
            return f"{spent_tokens} tokens used of max_total_tokens {budget.max_total_tokens}"
        return None

    def spend(self, provider: str, model: str | None, usage: tuple[int, int, int, int]) -> float | None:
        """Price an answered request's (input, output, cached, cache write) tokens and add them to the
        totals; the cost in USD, or None when the model is unpriced."""
        price = self._prices.price_of(provider, model)
        cost = cost_usd(price, usage) if price is not None else None
        key = (provider, model or "")
        with self._lock:
            row = self._rows.get(key)
            if row is None:
                if len(self._rows) >= USAGE_ROWS:
                    key = (provider, OTHER_MODELS)
                row = self._rows.setdefault(key, _Row())
            row.add(usage, cost)
            if self._budget is not None:  # the running total only a budget's check needs at once
                self._total.add(usage, cost)
        return cost

    def summary(self) -> dict[str, Any]:
        """``GET /admin-api/usage``: totals per provider and model, per provider and in all; the budget."""
        with self._lock:
            rows = {key: replace(row) for key, row in self._rows.items()}
            budget, refused, exhausted = self._budget, self._refused, self._exhausted_locked()
        total = _Row()
        for row in rows.values():
            total.merge(row)
        providers: dict[str, _Row] = {}
        for (provider, _model), row in rows.items():
            providers.setdefault(provider, _Row()).merge(row)
        return {
            "models": [
                {"provider": provider, "model": model or None, **row.public()}
                for (provider, model), row in sorted(rows.items())
            ],
            "providers": [{"provider": name, **row.public()} for name, row in sorted(providers.items())],
            "totals": total.public(),
            "budget": None
            if budget is None
            else {**budget.model_dump(), "exhausted": exhausted, "refused_requests": refused},
        }
