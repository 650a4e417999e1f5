"""Sessions are partitions: parallel sessions never see each other's queues or wait on each other."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
import pytest

from llmts import ConfigBuilder, LlmTestServer, SessionClient
from tests.helpers import USER_HI

pytestmark = pytest.mark.sdk


def _ask(client: Any) -> str:
    return client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI).choices[0].message.content


def test_parallel_sessions_each_see_only_their_own_queue_in_order(llmts_server: LlmTestServer) -> None:
    sessions = [llmts_server.create_session() for _ in range(10)]
    try:
        for index, session in enumerate(sessions):
            builder = ConfigBuilder().scenario()
            for turn in range(15):
                builder.text(f"s{index}-t{turn}", chunks=[f"s{index}", f"-t{turn}"])
            session.configure(builder.build())
        barrier = threading.Barrier(len(sessions))

        def drive(index: int) -> list[str]:
            client = sessions[index].openai_client(max_retries=0, _strict_response_validation=True)
            barrier.wait()
            answers = []
            for turn in range(15):
                if turn % 2:
                    stream = client.chat.completions.create(
                        model="gpt-4.1-mini", messages=USER_HI, stream=True
                    )
                    answers.append("".join(c.choices[0].delta.content or "" for c in stream if c.choices))
                else:
                    answers.append(_ask(client))
            return answers

        with ThreadPoolExecutor(len(sessions)) as pool:
            results = list(pool.map(drive, range(len(sessions))))

        for index, answers in enumerate(results):
            assert answers == [f"s{index}-t{turn}" for turn in range(15)]
    finally:
        for session in sessions:
            session.delete()


def test_one_sessions_delay_does_not_slow_another(llmts_server: LlmTestServer) -> None:
    slow, fast = llmts_server.create_session(), llmts_server.create_session()
    try:
        slow.configure(ConfigBuilder().scenario().text("slow", delay_ms=1500).build())
        fast.configure(ConfigBuilder().scenario(terminal_policy="repeat_last_response").text("fast").build())
        fast_client = fast.openai_client(max_retries=0)
        _ask(fast_client)  # warm the connection
        slow_result: dict[str, Any] = {}

        def run_slow() -> None:
            started = time.monotonic()
            slow_result["answer"] = _ask(slow.openai_client(max_retries=0))
            slow_result["elapsed"] = time.monotonic() - started

        thread = threading.Thread(target=run_slow)
        thread.start()
        time.sleep(0.1)  # the slow request is now waiting inside the server
        started = time.monotonic()
        answers = [_ask(fast_client) for _ in range(20)]
        fast_elapsed = time.monotonic() - started
        thread.join(10)

        assert answers == ["fast"] * 20
        assert fast_elapsed < 1.0, f"20 requests took {fast_elapsed:.2f}s while another session waited"
        assert slow_result["answer"] == "slow"
        assert slow_result["elapsed"] >= 1.5
    finally:
        slow.delete()
        fast.delete()


def test_delayed_answer_does_not_block_the_same_sessions_next_request(llmts_session: SessionClient) -> None:
    llmts_session.configure(ConfigBuilder().scenario().text("delayed", delay_ms=1000).text("prompt").build())
    client = llmts_session.openai_client(max_retries=0)
    with ThreadPoolExecutor(1) as pool:
        delayed = pool.submit(_ask, client)
        time.sleep(0.15)
        started = time.monotonic()
        assert _ask(client) == "prompt"  # admitted second, so it gets the second answer, right away
        assert time.monotonic() - started < 0.5
        assert delayed.result(5) == "delayed"


@pytest.mark.parametrize("action", ["reset", "configure", "delete"])
def test_pending_delay_is_superseded_by_reset_configure_or_delete(
    llmts_server: LlmTestServer, action: str
) -> None:
    session = llmts_server.create_session()
    try:
        session.configure(ConfigBuilder().scenario().text("too late", delay_ms=5000).build())
        client = session.openai_client(max_retries=0)
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(_ask, client)
            time.sleep(0.2)
            started = time.monotonic()
            if action == "reset":
                session.reset()
            elif action == "configure":
                session.configure(ConfigBuilder().scenario().text("new").build())
            else:
                session.delete()
            with pytest.raises(openai.ConflictError) as caught:
                pending.result(5)
            assert time.monotonic() - started < 1.0
        assert caught.value.code == "llm_test_server_request_superseded"
    finally:
        if action != "delete":
            session.delete()
