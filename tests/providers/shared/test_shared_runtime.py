"""One session, one scenario, every provider: the runtime is shared, only the adapters differ."""

from __future__ import annotations

from typing import Any

import pytest

from llmts import SessionClient

pytestmark = pytest.mark.sdk

# ~7.5k characters: over the 1,024 cacheable tokens both estimated and in o200k_base (1,300 tokens).
LONG_PROMPT = "Please consider this long and very stable system prompt. " * 130


def test_one_queue_consumed_in_order_across_providers(llmts_session: SessionClient) -> None:
    models = ["shared-model"]
    llmts_session.configure(
        {
            "models": models,
            "azure_deployments": {"prod": "shared-model"},
            "scenarios": [{"id": "shared", "responses": [{"text": f"answer {i}"} for i in range(1, 11)]}],
        }
    )
    user = [{"role": "user", "content": "Hi"}]
    # genai clients close their transport when garbage-collected: keep them referenced.
    gemini, gemini_beta = llmts_session.gemini_client(), llmts_session.gemini_client(api_version="v1beta")

    answers = [
        llmts_session.openai_client(max_retries=0)
        .chat.completions.create(model="shared-model", messages=user)
        .choices[0]
        .message.content,
        llmts_session.openai_client(max_retries=0)
        .responses.create(model="shared-model", input="Hi")
        .output_text,
        llmts_session.anthropic_client(max_retries=0)
        .messages.create(model="shared-model", max_tokens=32, messages=user)
        .content[0]
        .text,
        gemini.models.generate_content(model="shared-model", contents="Hi").text,
        llmts_session.azure_openai_client(max_retries=0)
        .chat.completions.create(model="prod", messages=user)
        .choices[0]
        .message.content,
        gemini_beta.models.generate_content(model="shared-model", contents="Hi").text,
        llmts_session.ollama_client().chat(model="shared-model", messages=user).message.content,
        llmts_session.sdk_client("ollama_openai_client", max_retries=0)
        .chat.completions.create(model="shared-model", messages=user)
        .choices[0]
        .message.content,
        llmts_session.cohere_client(max_retries=0)
        .chat(model="shared-model", messages=user)
        .message.content[0]
        .text,
        llmts_session.bedrock_client().converse(
            modelId="shared-model", messages=[{"role": "user", "content": [{"text": "Hi"}]}]
        )["output"]["message"]["content"][0]["text"],
    ]

    assert answers == [f"answer {i}" for i in range(1, 11)]
    journal = llmts_session.requests(order="asc")
    assert [(e["provider"], e["scenario"], e["response_index"]) for e in journal] == [
        ("openai", "shared", 0),
        ("openai", "shared", 1),
        ("anthropic", "shared", 2),
        ("gemini", "shared", 3),
        ("azure-openai", "shared", 4),
        ("gemini", "shared", 5),
        ("ollama", "shared", 6),
        ("ollama", "shared", 7),
        ("cohere", "shared", 8),
        ("bedrock", "shared", 9),
    ]


def test_provider_filtered_scenarios_route_each_provider(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": ["m"],
            "scenarios": [
                {"provider": "anthropic", "responses": [{"text": "from anthropic scenario"}]},
                {"provider": "gemini", "responses": [{"text": "from gemini scenario"}]},
                {"responses": [{"text": "from the catch-all"}]},
            ],
        }
    )

    gemini_client = app_session.gemini_client()
    gemini = gemini_client.models.generate_content(model="m", contents="Hi").text
    anthropic = (
        app_session.anthropic_client(max_retries=0)
        .messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": "Hi"}])
        .content[0]
        .text
    )
    openai_text = (
        app_session.openai_client(max_retries=0)
        .chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}])
        .choices[0]
        .message.content
    )

    assert (gemini, anthropic, openai_text) == (
        "from gemini scenario",
        "from anthropic scenario",
        "from the catch-all",
    )


def test_openai_chat_prompt_cache_counts_a_repeated_prefix(app_session: SessionClient) -> None:
    app_session.configure(
        {"scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"text": "ok"}]}]}
    )
    client = app_session.openai_client(_strict_response_validation=True, max_retries=0)
    messages: list[Any] = [{"role": "system", "content": LONG_PROMPT}, {"role": "user", "content": "first"}]

    first = client.chat.completions.create(model="gpt-4.1-mini", messages=messages).usage
    second = client.chat.completions.create(
        model="gpt-4.1-mini", messages=[*messages[:1], {"role": "user", "content": "second question"}]
    ).usage

    assert first.prompt_tokens_details.cached_tokens == 0
    cached = second.prompt_tokens_details.cached_tokens
    assert cached >= 1024 and cached % 128 == 0  # the shared system prefix, in 128-token blocks
    assert cached <= second.prompt_tokens

    app_session.reset()  # the cache is session state
    third = client.chat.completions.create(model="gpt-4.1-mini", messages=messages).usage
    assert third.prompt_tokens_details.cached_tokens == 0


def test_prompt_caches_are_per_session(llmts_app_server: Any) -> None:
    first, second = llmts_app_server.create_session(), llmts_app_server.create_session()
    try:
        messages = [{"role": "system", "content": LONG_PROMPT}, {"role": "user", "content": "q"}]
        for session in (first, second):
            session.configure(
                {"scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"text": "ok"}]}]}
            )
        first.openai_client(max_retries=0).chat.completions.create(model="gpt-4.1-mini", messages=messages)
        usage = (
            second.openai_client(max_retries=0)
            .chat.completions.create(model="gpt-4.1-mini", messages=messages)
            .usage
        )
        assert usage.prompt_tokens_details.cached_tokens == 0
    finally:
        first.delete()
        second.delete()
