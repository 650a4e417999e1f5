"""List prices of well-known models, as plain data (docs/prices.md has the table, its date and sources).

Each provider's ``info.py`` declares which of these tables its models are billed by
(``ProviderInfo.list_prices``); the runtime's price book (llmts/runtime/pricing.py) matches a model name
against them: the exact name first, then the longest ``model`` that is a prefix of it ending at a ``-``,
``:`` or ``@`` (``gpt-4o-2024-08-06`` is billed as ``gpt-4o``). Prices are US dollars per million tokens.
``cached_input`` is what a token read from the prompt cache costs, ``cache_write`` what a token written to
it costs; where the provider does not charge cache writes apart from input (OpenAI, Gemini) it is the
input price.

Standard library only: the catalog is read without the runtime (llmts/catalog/__init__.py).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ANTHROPIC_PRICES",
    "BEDROCK_PRICES",
    "COHERE_PRICES",
    "GEMINI_PRICES",
    "LOCAL_MODELS_FREE",
    "OPENAI_PRICES",
    "PRICES_AS_OF",
    "ListPrice",
]

# The date of the list prices below (docs/prices.md says which rows were re-checked since, and where).
PRICES_AS_OF = "2025-11-30"


@dataclass(frozen=True, slots=True)
class ListPrice:
    """One model (or model family, matched as a prefix) and its prices in USD per million tokens."""

    model: str
    input: float
    output: float
    cached_input: float
    cache_write: float


def _flat(model: str, input_price: float, output: float, cached: float | None = None) -> ListPrice:
    """A model whose cache writes cost what input costs (OpenAI, Gemini, Cohere): reads at ``cached``,
    or at the input price when the provider gives no discount."""
    return ListPrice(model, input_price, output, input_price if cached is None else cached, input_price)


def _anthropic(model: str, input_price: float, output: float) -> ListPrice:
    """Anthropic's rule for every Claude model: a cache read costs 0.1x input, a (5-minute) cache write
    1.25x input."""
    return ListPrice(model, input_price, output, round(input_price * 0.1, 6), round(input_price * 1.25, 6))


# https://openai.com/api/pricing/ and https://platform.openai.com/docs/pricing (standard tier).
OPENAI_PRICES: tuple[ListPrice, ...] = (
    _flat("gpt-5", 1.25, 10.0, 0.125),
    _flat("gpt-5.1", 1.25, 10.0, 0.125),
    _flat("gpt-5-mini", 0.25, 2.0, 0.025),
    _flat("gpt-5-nano", 0.05, 0.40, 0.005),
    _flat("gpt-4.1", 2.0, 8.0, 0.50),
    _flat("gpt-4.1-mini", 0.40, 1.60, 0.10),
    _flat("gpt-4.1-nano", 0.10, 0.40, 0.025),
    _flat("gpt-4o", 2.50, 10.0, 1.25),
    _flat("gpt-4o-mini", 0.15, 0.60, 0.075),
    _flat("o1", 15.0, 60.0, 7.50),
    _flat("o1-mini", 1.10, 4.40, 0.55),
    _flat("o1-pro", 150.0, 600.0),
    _flat("o3", 2.0, 8.0, 0.50),
    _flat("o3-mini", 1.10, 4.40, 0.55),
    _flat("o3-pro", 20.0, 80.0),
    _flat("o4-mini", 1.10, 4.40, 0.275),
    _flat("gpt-4-turbo", 10.0, 30.0),
    _flat("gpt-4", 30.0, 60.0),
    _flat("gpt-3.5-turbo", 0.50, 1.50),
    _flat("text-embedding-3-small", 0.02, 0.0),
    _flat("text-embedding-3-large", 0.13, 0.0),
    _flat("text-embedding-ada-002", 0.10, 0.0),
)

# https://www.anthropic.com/pricing#api and https://docs.anthropic.com/en/docs/about-claude/pricing.
# The Sonnet 4 family has one price for every version; Opus changed with 4.5.
ANTHROPIC_PRICES: tuple[ListPrice, ...] = (
    # Checked against https://platform.claude.com/docs/en/about-claude/pricing on 2026-12-01: the Claude 5
    # generation, whose newer models read the cache at less than 0.1x input.
    ListPrice("claude-fable-5-1", 10.0, 50.0, 0.25, 12.5),
    _anthropic("claude-fable-5", 10.0, 50.0),
    ListPrice("claude-opus-5-5", 4.0, 20.0, 0.20, 5.0),
    _anthropic("claude-opus-5", 5.0, 25.0),
    ListPrice("claude-sonnet-5-5", 2.0, 10.0, 0.10, 2.5),
    _anthropic("claude-sonnet-5", 2.0, 10.0),
    _anthropic("claude-haiku-5-5", 0.10, 0.50),
    _anthropic("claude-opus-4-8", 5.0, 25.0),
    _anthropic("claude-opus-4-7", 5.0, 25.0),
    _anthropic("claude-opus-4-6", 5.0, 25.0),
    _anthropic("claude-opus-4-5", 5.0, 25.0),
    _anthropic("claude-opus-4-1", 15.0, 75.0),
    _anthropic("claude-opus-4-0", 15.0, 75.0),
    _anthropic("claude-opus-4-20250514", 15.0, 75.0),
    _anthropic("claude-sonnet-4", 3.0, 15.0),
    _anthropic("claude-haiku-4-5", 1.0, 5.0),
    _anthropic("claude-3-7-sonnet", 3.0, 15.0),
    _anthropic("claude-3-5-sonnet", 3.0, 15.0),
    _anthropic("claude-3-5-haiku", 0.80, 4.0),
    _anthropic("claude-3-opus", 15.0, 75.0),
    _anthropic("claude-3-haiku", 0.25, 1.25),
)

# https://ai.google.dev/gemini-api/docs/pricing (paid tier, prompts up to 200k tokens; Google bills cache
# storage by the hour, which a test server does not model, so a cache write costs input).
GEMINI_PRICES: tuple[ListPrice, ...] = (
    _flat("gemini-2.5-pro", 1.25, 10.0, 0.31),
    _flat("gemini-2.5-flash", 0.30, 2.50, 0.075),
    _flat("gemini-2.5-flash-lite", 0.10, 0.40, 0.025),
    _flat("gemini-2.0-flash", 0.10, 0.40, 0.025),
    _flat("gemini-2.0-flash-lite", 0.075, 0.30),
    _flat("gemini-1.5-pro", 1.25, 5.0, 0.3125),
    _flat("gemini-1.5-flash", 0.075, 0.30, 0.01875),
    _flat("gemini-embedding-001", 0.15, 0.0),
)

# https://cohere.com/pricing.
COHERE_PRICES: tuple[ListPrice, ...] = (
    _flat("command-a", 2.50, 10.0),
    _flat("command-r-plus", 2.50, 10.0),
    _flat("command-r", 0.15, 0.60),
    _flat("command-r7b", 0.0375, 0.15),
    _flat("embed-v4.0", 0.12, 0.0),
    _flat("embed-english-v3.0", 0.10, 0.0),
    _flat("embed-multilingual-v3.0", 0.10, 0.0),
)

# https://aws.amazon.com/bedrock/pricing/ (on-demand, us-east-1). Claude on Bedrock costs what it costs at
# Anthropic; cross-region inference profiles (``us.``, ``eu.``, ``apac.``, ``global.``) cost the same.
_BEDROCK_BASE: tuple[ListPrice, ...] = (
    *(
        ListPrice("anthropic." + p.model, p.input, p.output, p.cached_input, p.cache_write)
        for p in ANTHROPIC_PRICES
    ),
    _flat("amazon.nova-premier", 2.50, 12.50, 0.625),
    _flat("amazon.nova-pro", 0.80, 3.20, 0.20),
    _flat("amazon.nova-lite", 0.06, 0.24, 0.015),
    _flat("amazon.nova-micro", 0.035, 0.14, 0.00875),
    _flat("meta.llama3-3-70b-instruct", 0.72, 0.72),
    _flat("meta.llama3-1-70b-instruct", 0.72, 0.72),
    _flat("meta.llama3-1-8b-instruct", 0.22, 0.22),
    _flat("cohere.command-r-plus", 3.0, 15.0),
    _flat("cohere.command-r", 0.50, 1.50),
    _flat("cohere.embed-english-v3", 0.10, 0.0),
    _flat("mistral.mistral-large-2402", 4.0, 12.0),
)
BEDROCK_PRICES: tuple[ListPrice, ...] = tuple(
    ListPrice(region + p.model, p.input, p.output, p.cached_input, p.cache_write)
    for region in ("", "us.", "eu.", "apac.", "global.")
    for p in _BEDROCK_BASE
)

# A local runtime (Ollama) bills nothing: the empty prefix matches every model name.
LOCAL_MODELS_FREE: tuple[ListPrice, ...] = (ListPrice("", 0.0, 0.0, 0.0, 0.0),)
