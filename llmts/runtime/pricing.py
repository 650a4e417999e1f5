"""What one answered request costs: a session's ``pricing`` over the providers' list prices (docs/prices.md).

A ``PriceBook`` is built once per configuration; on the request path ``price_of`` is a dict lookup (the
answer is memoised per (provider, model), bounded) and ``cost_usd`` a few multiplications.

Matching a model name (after the part up to its last ``/``, so ``models/gemini-2.5-flash`` and an ARN's
tail match too): the session's ``pricing`` by exact name, then the provider's list prices by exact name,
then the longest list entry that is a prefix of the name ending at ``-``, ``:`` or ``@`` (an empty entry
prices every model of the provider). No match: the model is unpriced and its cost is ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from llmts.catalog import registry as catalog
from llmts.catalog.prices import ListPrice
from llmts.schema.economics import ModelPrice

__all__ = ["Price", "PriceBook", "cost_usd", "shown_usd"]

# A prefix match must end at one of these (``gpt-4`` prices ``gpt-4-0613``, not ``gpt-4.5``).
_BOUNDARIES = frozenset("-:@")
# Memoised (provider, model) answers per configuration: model names are client-chosen, so bounded.
_MEMO_ENTRIES = 4096
_PER_MTOK = 1_000_000


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens; ``source`` is ``"session"`` (the session's ``pricing``) or ``"list"``."""

    input: float
    output: float
    cached_input: float
    cache_write: float
    source: str


def _from_list(entry: ListPrice) -> Price:
    return Price(entry.input, entry.output, entry.cached_input, entry.cache_write, "list")


def _from_session(entry: ModelPrice) -> Price:
    cached = entry.cached_input_per_mtok
    write = entry.cache_write_per_mtok
    return Price(
        entry.input_per_mtok,
        entry.output_per_mtok,
        entry.input_per_mtok if cached is None else cached,
        entry.input_per_mtok if write is None else write,
        "session",
    )


@dataclass(frozen=True, slots=True)
class _ListTable:
    exact: dict[str, Price]
    # Longest first, so the first match is the most specific family.
    prefixes: tuple[tuple[str, Price], ...]

    def match(self, model: str) -> Price | None:
        found = self.exact.get(model)
        if found is not None:
            return found
        for prefix, price in self.prefixes:
            if not prefix or (model.startswith(prefix) and model[len(prefix)] in _BOUNDARIES):
                return price
        return None


def _table(entries: tuple[ListPrice, ...]) -> _ListTable:
    exact = {entry.model: _from_list(entry) for entry in entries}
    ordered = sorted(entries, key=lambda entry: len(entry.model), reverse=True)
    return _ListTable(exact, tuple((entry.model, _from_list(entry)) for entry in ordered))


# The registered providers' list prices, compiled once per process.
_LIST_TABLES: dict[str, _ListTable] = {
    info.namespace: _table(info.list_prices) for info in catalog.CATALOG.providers
}


def _bare(model: str) -> str:
    """``models/gemini-2.5-flash`` -> ``gemini-2.5-flash``; an inference profile ARN -> its id."""
    cut = model.rfind("/")
    return model[cut + 1 :] if cut >= 0 else model


class PriceBook:
    """A configuration's prices: its ``pricing`` over the providers' list prices."""

    def __init__(self, pricing: Mapping[str, ModelPrice]) -> None:
        self._session = {model: _from_session(price) for model, price in pricing.items()}
        self._memo: dict[tuple[str, str], Price | None] = {}

    def price_of(self, provider: str, model: str | None) -> Price | None:
        """The model's prices, or None when neither the session nor the list prices it."""
        if model is None:
            return None
        key = (provider, model)
        memo = self._memo
        if key in memo:
            return memo[key]
        price = self._session.get(model)
        if price is None:
            bare = _bare(model)
            price = self._session.get(bare)
            table = _LIST_TABLES.get(provider)
            if price is None and table is not None:
                price = table.match(bare)
        if len(memo) < _MEMO_ENTRIES:  # a dict insert is atomic under the GIL; a lost race costs a repeat
            memo[key] = price
        return price


def cost_usd(price: Price, usage: tuple[int, int, int, int]) -> float:
    """The cost of (input, output, cached, cache write) tokens, where input counts the cached and written
    tokens too (the neutral usage): those are billed at their own prices, the rest of the input at input's.
    Not rounded: it runs per request, where ``round(x, 10)`` was a quarter of the pricing's instructions;
    what shows a cost rounds it there (``shown_usd``)."""
    input_tokens, output_tokens, cached, written = usage
    plain = max(0, input_tokens - cached - written)
    total = (
        plain * price.input
        + cached * price.cached_input
        + written * price.cache_write
        + output_tokens * price.output
    )
    return total / _PER_MTOK


def shown_usd(cost: float) -> float:
    """A cost as the journal, the usage totals and verification show it: rounded to 10 decimals, so sums of
    per-token prices read as the amounts they are (0.00003, not 3.0000000000000004e-05)."""
    return round(cost, 10)
