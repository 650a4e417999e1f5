"""Conversation steps in flight: busy identities, cancellation, reset/configure/delete, capacity."""

from __future__ import annotations

import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import openai
import pytest

from llmts import ConfigBuilder, LlmTestServer, SessionClient

pytestmark = pytest.mark.sdk

MODEL = "gpt-4.1-mini"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def ask(client: Any, *messages: dict[str, Any]) -> str:
    reply = client.chat.completions.create(model=MODEL, messages=list(messages))
    return str(reply.choices[0].message.content)


def error_code(client: Any, *messages: dict[str, Any]) -> str:
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model=MODEL, messages=list(messages))
    return str(caught.value.code)


def slow_graph(delay_ms: int = 1500) -> ConfigBuilder:
    return (
        ConfigBuilder()
        .conversation("slow")
        .step("hello")
        .when(turn=1)
        .text("Hello")
        .then("slow")
        .step("slow")
        .when(turn=2)
        .text("Finally", delay_ms=delay_ms)
        .complete()
        .config
    )


HISTORY = [user("hi"), assistant("Hello"), user("and now?")]


def test_a_second_request_while_a_step_is_in_flight_is_busy(llmts_session: SessionClient) -> None:
    llmts_session.configure(slow_graph())
    chat = llmts_session.for_conversation("c").openai_client(max_retries=0)
    assert ask(chat, user("hi")) == "Hello"

    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(ask, chat, *HISTORY)
        time.sleep(0.3)
        started = time.monotonic()
        assert error_code(chat, *HISTORY) == "conversation_busy"
        assert error_code(chat, user("hi")) == "conversation_busy"  # even a replay waits for the step
        assert time.monotonic() - started < 1.0
        during = llmts_session.conversations("c")[0]
        # Another identity of the same graph is not blocked.
        other = llmts_session.for_conversation("other").openai_client(max_retries=0)
        assert ask(other, user("hi")) == "Hello"
        assert pending.result(5) == "Finally"

    assert (during["state"], during["busy"], during["in_flight_step"]) == ("in_flight", True, "slow")
    after = llmts_session.conversations("c")[0]
    assert (after["state"], after["busy"], after["executed_steps"]) == ("completed", False, ["hello", "slow"])


def _send_and_leave(session: SessionClient, conversation: str, messages: list[dict[str, Any]]) -> None:
    """A raw request that the client abandons (socket closed) during the step's delay."""
    parts = urlsplit(session.provider_base)
    body = json.dumps({"model": MODEL, "messages": messages})
    request = (
        f"POST {parts.path}/openai/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer llmts-test-key\r\nX-Llm-Test-Server-Conversation: {conversation}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=5) as sock:
        sock.sendall(request)
        time.sleep(0.3)


def _wait_for(predicate: Any, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def test_cancellation_during_a_delayed_step_rolls_back(llmts_session: SessionClient) -> None:
    llmts_session.configure(slow_graph(delay_ms=3000))
    chat = llmts_session.for_conversation("c").openai_client(max_retries=0)
    assert ask(chat, user("hi")) == "Hello"

    _send_and_leave(llmts_session, "c", HISTORY)
    _wait_for(lambda: not llmts_session.conversations("c")[0]["busy"])

    state = llmts_session.conversations("c")[0]
    assert (state["state"], state["executed_steps"], state["next_steps"]) == ("awaiting", ["hello"], ["slow"])
    assert [e["status"] for e in llmts_session.requests(order="asc")] == [200, 499]


def test_cancelling_the_first_step_leaves_no_state(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        ConfigBuilder().conversation("g").step("only").text("late", delay_ms=3000).complete()
    )
    _send_and_leave(llmts_session, "gone", [user("hi")])
    _wait_for(lambda: llmts_session.conversations() == [])
    assert llmts_session.requests()[0]["status"] == 499


@pytest.mark.parametrize("action", ["reset", "configure", "delete"])
def test_reset_configure_or_delete_supersede_a_pending_step(llmts_server: LlmTestServer, action: str) -> None:
    session = llmts_server.create_session()
    try:
        session.configure(slow_graph(delay_ms=5000))
        chat = session.openai_client(max_retries=0)
        assert ask(chat, user("hi")) == "Hello"
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(error_code, chat, *HISTORY)
            time.sleep(0.3)
            started = time.monotonic()
            if action == "reset":
                session.reset()
            elif action == "configure":
                session.configure(slow_graph(delay_ms=0))
            else:
                session.delete()
            assert pending.result(5) == "llm_test_server_request_superseded"
            assert time.monotonic() - started < 1.0
        if action != "delete":
            # State is gone: the graph starts over, and the superseded step never committed.
            assert session.conversations() == []
            assert ask(chat, user("hi")) == "Hello"
            assert session.conversations()[0]["executed_steps"] == ["hello"]
    finally:
        if action != "delete":
            session.delete()


def test_conversation_count_capacity(app_session: SessionClient) -> None:
    app_session.configure(slow_graph(delay_ms=0).conversation_capacity(max_conversations=1))
    first = app_session.for_conversation("a").openai_client(max_retries=0)
    second = app_session.for_conversation("b").openai_client(max_retries=0)

    assert ask(first, user("hi")) == "Hello"
    assert error_code(second, user("hi")) == "conversation_capacity_exceeded"
    assert ask(first, *HISTORY) == "Finally"  # existing state keeps working
    assert [s["conversation_id"] for s in app_session.conversations()] == ["a"]

    app_session.configure(slow_graph(delay_ms=0).conversation_capacity(max_conversations=0))
    assert error_code(first, user("hi")) == "conversation_capacity_exceeded"
    assert app_session.conversations() == []


def test_conversation_byte_capacity(app_session: SessionClient) -> None:
    app_session.configure(slow_graph(delay_ms=0))
    first = app_session.for_conversation("a").openai_client(max_retries=0)
    second = app_session.for_conversation("b").openai_client(max_retries=0)
    ask(first, user("hi"))
    one_state = app_session.conversations()[0]["retained_bytes"]
    assert one_state > 0

    # Room for one such state, not two.
    app_session.configure(slow_graph(delay_ms=0).conversation_capacity(max_bytes=2 * one_state - 1))
    assert ask(first, user("hi")) == "Hello"
    assert error_code(second, user("hi")) == "conversation_capacity_exceeded"

    app_session.configure(slow_graph(delay_ms=0).conversation_capacity(max_bytes=0))
    assert error_code(first, user("hi")) == "conversation_capacity_exceeded"


def test_growth_is_checked_before_a_delayed_step_starts(llmts_session: SessionClient) -> None:
    config = (
        ConfigBuilder()
        .conversation("grow")
        .step("small")
        .text("ok")
        .then("big")
        .step("big")
        .text("x" * 5000, delay_ms=5000)
        .complete()
        .config
    )
    llmts_session.configure(config)
    chat = llmts_session.openai_client(max_retries=0)
    ask(chat, user("hi"))
    small = llmts_session.conversations()[0]["retained_bytes"]
    llmts_session.configure(config.conversation_capacity(max_bytes=small + 1000))
    assert ask(chat, user("hi")) == "ok"

    started = time.monotonic()
    assert error_code(chat, user("hi"), assistant("ok"), user("more")) == "conversation_capacity_exceeded"
    assert time.monotonic() - started < 1.0
    state = llmts_session.conversations()[0]
    assert (state["executed_steps"], state["busy"], state["retained_bytes"]) == (["small"], False, small)
