"""``cost_usd`` on journal entries, ``GET /admin-api/usage`` per provider and model, the ``pricing`` and
``budget`` sections' validation, and verification by cost (``max_cost_usd``), in process."""

from __future__ import annotations

from typing import Any

import pytest

from llmts import ServerError, SessionClient

HI: Any = [{"role": "user", "content": "hi"}]


def _scenario(model: str, *usages: dict[str, int]) -> dict[str, Any]:
    return {"id": model, "model": model, "responses": [{"text": "ok", "usage": usage} for usage in usages]}


def _configure(session: SessionClient, **extra: Any) -> None:
    session.configure(
        {
            "models": ["gpt-4.1", "claude-sonnet-4-5", "my-fine-tune"],
            "scenarios": [
                # 8,000 input tokens of which 4,096 read from the cache; 500 output.
                _scenario("gpt-4.1", {"input_tokens": 8000, "output_tokens": 500, "cached_tokens": 4096}),
                # 10,000 input: 6,000 read from the cache, 2,000 written to it; 1,000 output.
                _scenario(
                    "claude-sonnet-4-5",
                    {
                        "input_tokens": 10000,
                        "output_tokens": 1000,
                        "cached_tokens": 6000,
                        "cache_write_tokens": 2000,
                    },
                ),
                _scenario("my-fine-tune", {"input_tokens": 10, "output_tokens": 10}),
            ],
            **extra,
        }
    )


def _drive(session: SessionClient) -> None:
    session.openai_client(max_retries=0).chat.completions.create(model="gpt-4.1", messages=HI)
    session.anthropic_client(max_retries=0).messages.create(
        model="claude-sonnet-4-5", max_tokens=8, messages=HI
    )
    session.openai_client(max_retries=0).chat.completions.create(model="my-fine-tune", messages=HI)


GPT_COST = (3904 * 2.0 + 4096 * 0.5 + 500 * 8.0) / 1e6
SONNET_COST = (2000 * 3.0 + 6000 * 0.3 + 2000 * 3.75 + 1000 * 15.0) / 1e6


def test_entries_are_priced_and_usage_totals_each_provider_and_model(app_session: SessionClient) -> None:
    _configure(app_session)
    _drive(app_session)
    costs = {entry["model"]: entry["cost_usd"] for entry in app_session.requests()}
    assert costs == {
        "gpt-4.1": pytest.approx(GPT_COST),
        "claude-sonnet-4-5": pytest.approx(SONNET_COST),
        "my-fine-tune": None,  # no price: unknown, not zero
    }
    usage = app_session.usage()
    assert usage["list_prices_as_of"] == "2025-11-30"
    rows = {(row["provider"], row["model"]): row for row in usage["models"]}
    assert set(rows) == {
        ("openai", "gpt-4.1"),
        ("anthropic", "claude-sonnet-4-5"),
        ("openai", "my-fine-tune"),
    }
    sonnet = rows[("anthropic", "claude-sonnet-4-5")]
    assert sonnet == {
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "requests": 1,
        "input_tokens": 10000,
        "output_tokens": 1000,
        "cached_tokens": 6000,
        "cache_write_tokens": 2000,
        "total_tokens": 11000,
        "cost_usd": pytest.approx(SONNET_COST),
        "priced_cost_usd": pytest.approx(SONNET_COST),
        "unpriced_requests": 0,
    }
    providers = {row["provider"]: row for row in usage["providers"]}
    assert providers["openai"]["requests"] == 2 and providers["openai"]["cost_usd"] is None
    assert providers["openai"]["priced_cost_usd"] == pytest.approx(GPT_COST)
    totals = usage["totals"]
    assert (totals["requests"], totals["cost_usd"], totals["unpriced_requests"]) == (3, None, 1)
    assert totals["priced_cost_usd"] == pytest.approx(GPT_COST + SONNET_COST)
    assert usage["budget"] is None
    app_session.reset()
    assert app_session.usage()["totals"]["requests"] == 0


def test_session_pricing_prices_its_own_models_and_overrides_list_prices(app_session: SessionClient) -> None:
    pricing = {
        "my-fine-tune": {"input_per_mtok": 1000, "output_per_mtok": 2000},
        "gpt-4.1": {"input_per_mtok": 1, "output_per_mtok": 1, "cached_input_per_mtok": 0},
    }
    _configure(app_session, pricing=pricing)
    assert app_session.configuration()["pricing"] == pricing
    _drive(app_session)
    totals = app_session.usage()["totals"]
    assert totals["cost_usd"] == pytest.approx((10 * 1000 + 10 * 2000 + 3904 + 500) / 1e6 + SONNET_COST)


def test_verify_max_cost_usd(app_session: SessionClient) -> None:
    _configure(app_session)
    _drive(app_session)
    # The priced requests alone (scoped to their provider) pass under a bound and fail under another.
    assert app_session.verify(scope={"provider": "anthropic"}, max_cost_usd=0.031).passed
    over = app_session.verify(scope={"provider": "anthropic"}, max_cost_usd=0.01)
    assert not over.passed
    (failure,) = over.failures
    assert (failure.kind, failure.expectation) == ("cost", "max_cost_usd")
    assert failure.actual == {"cost_usd": pytest.approx(SONNET_COST), "requests": 1}
    assert "cost 0.030300 USD, over max_cost_usd 0.01" in over.report()
    # An unpriced request leaves the cost unknown: the bound cannot be shown.
    unknown = app_session.verify(max_cost_usd=100)
    assert [f.kind for f in unknown.failures] == ["cost_unpriced"]
    assert "openai/my-fine-tune" in unknown.failures[0].message


@pytest.mark.parametrize(
    ("section", "path"),
    [
        ({"pricing": {"m": {"input_per_mtok": -1, "output_per_mtok": 1}}}, "pricing.m.input_per_mtok"),
        ({"pricing": {"m": {"input_per_mtok": 1}}}, "pricing.m.output_per_mtok"),
        (
            {"pricing": {"m": {"input_per_mtok": 1, "output_per_mtok": 1, "per_call": 1}}},
            "pricing.m.per_call",
        ),
        ({"pricing": {"m": {"input_per_mtok": 100_001, "output_per_mtok": 1}}}, "pricing.m.input_per_mtok"),
        ({"budget": {}}, "budget"),
        ({"budget": {"max_cost_usd": 0}}, "budget.max_cost_usd"),
        ({"budget": {"max_total_tokens": 0}}, "budget.max_total_tokens"),
        ({"budget": {"max_cost": 1}}, "budget.max_cost"),
    ],
)
def test_bad_pricing_and_budgets_are_400s_naming_the_field(
    app_session: SessionClient, section: dict[str, Any], path: str
) -> None:
    with pytest.raises(ServerError) as caught:
        app_session.configure(section)
    assert caught.value.status == 400
    assert path in [detail["path"] for detail in caught.value.details]


def test_an_azure_deployment_is_billed_as_the_model_it_serves(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": ["gpt-4o"],
            "azure_deployments": {"prod-chat": "gpt-4o"},
            "scenarios": [
                {"responses": [{"text": "ok", "usage": {"input_tokens": 1000, "output_tokens": 100}}]}
            ],
        }
    )
    client = app_session.azure_openai_client(max_retries=0)
    client.chat.completions.create(model="prod-chat", messages=HI)
    (entry,) = app_session.requests()
    assert (entry["provider"], entry["model"], entry["cost_usd"]) == ("azure-openai", "gpt-4o", 0.0035)
    (row,) = app_session.usage()["models"]
    assert (row["provider"], row["model"], row["cost_usd"]) == ("azure-openai", "gpt-4o", 0.0035)
