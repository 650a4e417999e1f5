"""What a session's requests cost and how much it may spend (docs/configuration.md, ``pricing`` and
``budget``; docs/prices.md).

``pricing`` maps a model name to its prices in USD per million tokens, beside (and over) the built-in
list prices; ``budget`` caps the session's running cost and tokens: once the totals reach a cap, every
inference request is refused with the provider's own out-of-quota answer and consumes nothing.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from llmts.schema.model_base import STRICT, OmitsNone

__all__ = ["ECONOMICS_LIMITS", "Budget", "ModelPrice"]

# Documented in docs/configuration.md with the other LIMITS.
ECONOMICS_LIMITS: dict[str, int] = {
    "pricing_models": 256,
    "price_per_mtok_usd": 100_000,
    "budget_max_cost_usd": 1_000_000,
    "budget_max_total_tokens": 1_000_000_000_000,
}

_PRICE = ECONOMICS_LIMITS["price_per_mtok_usd"]


class ModelPrice(OmitsNone):
    """A model's prices in USD per million tokens. Left out, a cache read and a cache write cost what an
    input token costs."""

    model_config = STRICT

    input_per_mtok: float = Field(ge=0, le=_PRICE)
    output_per_mtok: float = Field(ge=0, le=_PRICE)
    cached_input_per_mtok: float | None = Field(default=None, ge=0, le=_PRICE)
    cache_write_per_mtok: float | None = Field(default=None, ge=0, le=_PRICE)


class Budget(OmitsNone):
    """Caps on the session's running totals (since the last configure or reset); at least one."""

    model_config = STRICT

    max_cost_usd: float | None = Field(default=None, gt=0, le=ECONOMICS_LIMITS["budget_max_cost_usd"])
    max_total_tokens: int | None = Field(default=None, ge=1, le=ECONOMICS_LIMITS["budget_max_total_tokens"])

    @model_validator(mode="after")
    def _caps_something(self) -> Budget:
        if self.max_cost_usd is None and self.max_total_tokens is None:
            raise ValueError("a budget needs max_cost_usd and/or max_total_tokens")
        return self
