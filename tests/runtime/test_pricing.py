"""Prices and costs (llmts/runtime/pricing.py, llmts/catalog/prices.py): which price a model name gets,
what its tokens cost with cache reads and writes, and the session's running totals and budget
(llmts/runtime/session_spend.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from llmts import ConfigBuilder
from llmts.catalog import registry as catalog
from llmts.catalog.prices import PRICES_AS_OF
from llmts.errors import BudgetExhausted, ConfigurationInvalid
from llmts.runtime.pricing import Price, PriceBook, cost_usd
from llmts.runtime.session_spend import OTHER_MODELS, USAGE_ROWS, SessionSpend
from llmts.schema import parse_session_config
from llmts.schema.economics import ModelPrice

LIST = PriceBook({})


@pytest.mark.parametrize(
    ("provider", "model", "expected"),
    [
        ("openai", "gpt-4o", (2.50, 10.0, 1.25, 2.50)),
        # A dated snapshot is billed as its family; the longest family wins.
        ("openai", "gpt-4o-2024-08-06", (2.50, 10.0, 1.25, 2.50)),
        ("openai", "gpt-4o-mini-2024-07-18", (0.15, 0.60, 0.075, 0.15)),
        ("openai", "gpt-4-0613", (30.0, 60.0, 30.0, 30.0)),
        ("azure-openai", "gpt-4.1-mini", (0.40, 1.60, 0.10, 0.40)),
        # Anthropic: cache reads 0.1x input, cache writes 1.25x.
        ("anthropic", "claude-sonnet-4-5-20250929", (3.0, 15.0, 0.30, 3.75)),
        ("anthropic", "claude-3-5-haiku-latest", (0.80, 4.0, 0.08, 1.0)),
        ("anthropic", "claude-opus-4-5", (5.0, 25.0, 0.50, 6.25)),
        # Bedrock ids, a cross-region inference profile and an ARN's tail.
        ("bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0", (0.80, 4.0, 0.08, 1.0)),
        ("bedrock", "us.anthropic.claude-3-7-sonnet-20250219-v1:0", (3.0, 15.0, 0.30, 3.75)),
        (
            "bedrock",
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.amazon.nova-pro-v1:0",
            (0.80, 3.20, 0.20, 0.80),
        ),
        ("gemini", "models/gemini-2.5-flash", (0.30, 2.50, 0.075, 0.30)),
        ("gemini", "gemini-2.5-flash-lite", (0.10, 0.40, 0.025, 0.10)),
        ("cohere", "command-a-03-2025", (2.50, 10.0, 2.50, 2.50)),
        # A local runtime costs nothing, whatever the model.
        ("ollama", "llama3.2", (0.0, 0.0, 0.0, 0.0)),
    ],
)
def test_list_prices_match_exact_names_then_families(
    provider: str, model: str, expected: tuple[float, float, float, float]
) -> None:
    price = LIST.price_of(provider, model)
    assert price is not None
    assert (price.input, price.output, price.cached_input, price.cache_write, price.source) == (
        *expected,
        "list",
    )


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("openai", "gpt-4.5-preview"),  # "gpt-4" is a family only up to a "-", ":" or "@"
        ("openai", "my-fine-tune"),
        ("anthropic", "claude-opus-4-10"),  # not "claude-opus-4-1"
        ("openai", "claude-3-haiku"),  # each provider's own list
        ("openai", None),
    ],
)
def test_models_no_list_prices_is_unpriced(provider: str, model: str | None) -> None:
    assert LIST.price_of(provider, model) is None


def test_every_provider_has_list_prices_and_its_default_model_a_price() -> None:
    for info in catalog.CATALOG.providers:
        assert info.list_prices, info.namespace
    default = catalog.CATALOG.default
    assert LIST.price_of(default.namespace, default.default_model) is not None


def test_the_session_pricing_wins_and_defaults_cache_prices_to_input() -> None:
    book = PriceBook(
        {
            "gpt-4o": ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0, cached_input_per_mtok=0.5),
            "house-model": ModelPrice(input_per_mtok=4.0, output_per_mtok=8.0),
        }
    )
    assert book.price_of("openai", "gpt-4o") == Price(1.0, 2.0, 0.5, 1.0, "session")
    assert book.price_of("ollama", "house-model") == Price(4.0, 8.0, 4.0, 4.0, "session")
    assert book.price_of("gemini", "models/house-model") == Price(4.0, 8.0, 4.0, 4.0, "session")
    # An exact session name only: a dated snapshot falls back to the list price.
    snapshot = book.price_of("openai", "gpt-4o-2024-08-06")
    assert snapshot is not None and snapshot.source == "list"


def test_cost_bills_cache_reads_and_writes_at_their_own_prices() -> None:
    sonnet = LIST.price_of("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None
    # 10,000 input tokens of which 6,000 read from the cache and 2,000 written to it, 1,000 output:
    # 2,000 x $3 + 6,000 x $0.30 + 2,000 x $3.75 + 1,000 x $15 per million.
    assert cost_usd(sonnet, (10_000, 1_000, 6_000, 2_000)) == pytest.approx(0.0303)
    gpt = LIST.price_of("openai", "gpt-4.1")
    assert gpt is not None
    # 8,000 input, 4,096 of them cached at a quarter of the price; 500 output.
    assert cost_usd(gpt, (8_000, 500, 4_096, 0)) == pytest.approx(
        (3_904 * 2.0 + 4_096 * 0.5 + 500 * 8.0) / 1e6
    )
    # Counts that do not add up never bill a negative plain input.
    assert cost_usd(gpt, (10, 0, 100, 0)) == pytest.approx(100 * 0.5 / 1e6)


def _spend(config: dict[str, object]) -> SessionSpend:
    spend = SessionSpend(threading.Lock())
    spend.restart_locked(parse_session_config(config))
    return spend


def test_a_budget_refuses_once_the_totals_reach_it() -> None:
    spend = _spend({"budget": {"max_cost_usd": 0.003}})
    spend.check()
    assert spend.spend("openai", "gpt-4o", (1_000, 100, 0, 0)) == pytest.approx(0.0035)
    # The request that crossed the cap was answered; the next one is refused.
    with pytest.raises(BudgetExhausted) as refused:
        spend.check()
    assert refused.value.http_status == 429 and refused.value.code == "insufficient_quota"
    assert "0.003500 USD spent of max_cost_usd 0.003" in refused.value.message
    summary = spend.summary()
    assert summary["budget"]["refused_requests"] == 1
    assert summary["budget"]["exhausted"] == "0.003500 USD spent of max_cost_usd 0.003"
    spend.restart_locked(None)  # a reset: totals from zero, no budget
    spend.check()
    assert spend.summary()["totals"]["requests"] == 0


def test_a_token_budget_counts_input_and_output_even_when_unpriced() -> None:
    spend = _spend({"budget": {"max_total_tokens": 150}})
    assert spend.spend("openai", "my-fine-tune", (100, 40, 0, 0)) is None
    spend.check()
    spend.spend("openai", "my-fine-tune", (5, 5, 0, 0))
    with pytest.raises(BudgetExhausted, match="150 tokens used of max_total_tokens 150"):
        spend.check()


def test_unpriced_requests_leave_the_cost_unknown_not_zero() -> None:
    spend = _spend({})
    spend.spend("openai", "gpt-4o", (1_000_000, 0, 0, 0))
    spend.spend("openai", "my-fine-tune", (10, 10, 0, 0))
    summary = spend.summary()
    rows = {row["model"]: row for row in summary["models"]}
    assert rows["gpt-4o"]["cost_usd"] == pytest.approx(2.5)
    assert rows["my-fine-tune"]["cost_usd"] is None and rows["my-fine-tune"]["unpriced_requests"] == 1
    (openai,) = summary["providers"]
    assert (openai["cost_usd"], openai["priced_cost_usd"], openai["requests"]) == (None, 2.5, 2)
    assert summary["totals"]["total_tokens"] == 1_000_020
    assert summary["budget"] is None


def test_the_rows_are_bounded_and_further_models_add_up_in_one() -> None:
    spend = _spend({})
    for index in range(USAGE_ROWS + 5):
        spend.spend("ollama", f"model-{index}", (1, 1, 0, 0))
    summary = spend.summary()
    assert len(summary["models"]) == USAGE_ROWS + 1
    other = next(row for row in summary["models"] if row["model"] == OTHER_MODELS)
    assert other["requests"] == 5
    assert summary["totals"]["requests"] == USAGE_ROWS + 5


def _shown(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".") or "0"


def test_the_price_table_in_the_docs_is_the_catalog() -> None:
    """docs/prices.md shows every list price (Bedrock's cross-region copies aside) and their date."""
    text = (Path(__file__).parents[2] / "docs" / "prices.md").read_text(encoding="utf-8")
    assert f"checked on {PRICES_AS_OF}" in text
    missing = [
        entry.model
        for info in catalog.CATALOG.providers
        for entry in info.list_prices
        if entry.model and not entry.model.startswith(("us.", "eu.", "apac.", "global."))
        if f"| `{entry.model}` | {_shown(entry.input)} | {_shown(entry.output)} | "
        f"{_shown(entry.cached_input)} | {_shown(entry.cache_write)} |" not in text
    ]
    assert missing == []


def test_the_builder_sets_prices_and_a_budget() -> None:
    config = (
        ConfigBuilder()
        .price("house-model", input_per_mtok=1, output_per_mtok=2)
        .price("gpt-4o", input_per_mtok=2, output_per_mtok=8, cached_input_per_mtok=1, cache_write_per_mtok=3)
        .budget(max_cost_usd=0.5)
        .build()
    )
    assert config.model_dump(mode="json")["pricing"] == {
        "house-model": {"input_per_mtok": 1.0, "output_per_mtok": 2.0},
        "gpt-4o": {
            "input_per_mtok": 2.0,
            "output_per_mtok": 8.0,
            "cached_input_per_mtok": 1.0,
            "cache_write_per_mtok": 3.0,
        },
    }
    assert config.budget is not None and config.budget.model_dump() == {"max_cost_usd": 0.5}
    with pytest.raises(ConfigurationInvalid):
        ConfigBuilder().budget().build()
