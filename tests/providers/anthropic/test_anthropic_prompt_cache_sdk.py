"""Anthropic prompt caching through the official ``anthropic`` SDK (strict response validation) against a
real server: cache writes then reads at ``cache_control`` breakpoints, the counters in streams, and
``max_tokens: 0`` requests that only warm the cache. ``tox -e anthropic1`` runs it with anthropic 1.x."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from llmts import SessionClient
from tests.providers.anthropic.sdk_support import (
    HI,
    MODEL,
    WEATHER,
    config_builder,
    create_message,
    # the ``client`` fixture: pytest finds it by name once it is imported here
    strict_anthropic_client,  # noqa: F401
)

pytestmark = pytest.mark.sdk

# Over 1024 estimated tokens (4 characters each): long enough to be cached at a breakpoint.
LONG_SYSTEM = "You are a careful assistant who answers in one short sentence. " * 72


# --- prompt cache -------------------------------------------------------------------------------


def _cached_system() -> list[dict[str, Any]]:
    return [{"type": "text", "text": LONG_SYSTEM, "cache_control": {"type": "ephemeral"}}]


def test_prompt_cache_write_then_read(app_session: SessionClient, client: Any) -> None:
    app_session.configure(
        config_builder().scenario(terminal_policy="repeat_last_response").text("ok").build()
    )
    prefix = 3 + (len(LONG_SYSTEM) + 3) // 4  # the preamble segment: request overhead + system text

    first = create_message(client, system=_cached_system()).usage
    second = create_message(client, system=_cached_system()).usage

    assert prefix > 1024
    assert (first.cache_creation_input_tokens, first.cache_read_input_tokens) == (prefix, 0)
    assert (second.cache_creation_input_tokens, second.cache_read_input_tokens) == (0, prefix)
    # input_tokens is only the uncached part (the message "Hi"): the three add up to the whole prompt.
    assert first.input_tokens == second.input_tokens == 4 + 1
    # A later turn with a moved breakpoint reads the system prefix and writes the rest.
    marked_turn = [{"type": "text", "text": "more", "cache_control": {"type": "ephemeral"}}]
    history = [*HI, {"role": "assistant", "content": "ok"}, {"role": "user", "content": marked_turn}]
    third = create_message(client, system=_cached_system(), messages=history).usage
    assert third.cache_read_input_tokens == prefix
    assert third.cache_creation_input_tokens == 3 * (4 + 1)  # three short messages
    assert third.input_tokens == 0


def test_prompt_cache_counters_in_stream(app_session: SessionClient, client: Any) -> None:
    app_session.configure(
        config_builder().scenario(terminal_policy="repeat_last_response").text("ok").build()
    )
    create_message(client, system=_cached_system())

    with client.messages.stream(model=MODEL, max_tokens=64, messages=HI, system=_cached_system()) as stream:
        final = stream.get_final_message()

    assert final.usage.cache_read_input_tokens > 1024
    assert final.usage.cache_creation_input_tokens == 0


def test_max_tokens_zero_only_warms_the_cache(app_session: SessionClient, client: Any) -> None:
    app_session.configure(config_builder().scenario().text("the only answer").build())

    warm = create_message(client, max_tokens=0, system=_cached_system())
    again = create_message(client, max_tokens=0, system=_cached_system())
    real = create_message(client, system=_cached_system())

    assert warm.content == [] and warm.stop_reason == "max_tokens" and warm.id.startswith("msg_")
    assert warm.usage.cache_creation_input_tokens > 1024 and warm.usage.output_tokens == 0
    assert again.usage.cache_read_input_tokens == warm.usage.cache_creation_input_tokens
    # Neither warm-up consumed the single scripted answer, and the real request reads the warm cache.
    assert real.content[0].text == "the only answer"
    assert real.usage.cache_read_input_tokens == warm.usage.cache_creation_input_tokens


def test_max_tokens_zero_stream_and_unknown_model(app_session: SessionClient, client: Any) -> None:
    app_session.configure(config_builder().scenario().text("kept").build())

    with client.messages.stream(model=MODEL, max_tokens=0, messages=HI, system=_cached_system()) as stream:
        final = stream.get_final_message()
    with pytest.raises(anthropic.NotFoundError):
        create_message(client, model="claude-imaginary", max_tokens=0)

    assert final.content == [] and final.stop_reason == "max_tokens"
    assert final.usage.cache_creation_input_tokens > 1024
    assert create_message(client).content[0].text == "kept"


@pytest.mark.parametrize("placement", ["tool_result", "top_level"])
def test_prompt_cache_breakpoint_at_the_last_turn(
    app_session: SessionClient, client: Any, placement: str
) -> None:
    app_session.configure(
        config_builder().scenario(terminal_policy="repeat_last_response").text("ok").build()
    )
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}
    extra: dict[str, Any] = {}
    if placement == "tool_result":
        result["cache_control"] = {"type": "ephemeral"}
    else:
        extra["cache_control"] = {"type": "ephemeral"}
    history = [
        *HI,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}],
        },
        {"role": "user", "content": [result]},
    ]

    def usage() -> Any:
        return create_message(
            client, system=LONG_SYSTEM, tools=[WEATHER], messages=history, extra_body=extra
        ).usage

    first, second = usage(), usage()

    # The breakpoint closes the whole prompt: nothing is left uncached.
    assert first.input_tokens == second.input_tokens == 0
    assert first.cache_creation_input_tokens > 1024 and first.cache_read_input_tokens == 0
    assert (second.cache_creation_input_tokens, second.cache_read_input_tokens) == (
        0,
        first.cache_creation_input_tokens,
    )
