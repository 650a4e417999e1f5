"""Stream delivery plans on Gemini streams: what google-genai sees, and the journal's evidence."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import pytest
from google.genai import types

from llmts import SessionClient
from tests.helpers import transport_errors
from tests.support.configure import delivery

pytestmark = pytest.mark.sdk

MODEL = "gemini-2.5-flash"


_configure = partial(delivery, models=[MODEL], then="Next.")


def _entry(session: SessionClient) -> dict[str, Any]:
    """The newest journal entry of a streamed generate call, once its delivery is over."""
    deadline = time.monotonic() + 5
    while True:
        entries = session.requests(operation="stream_generate_content.sse", streaming=True)
        if entries and entries[0]["completed"]:
            return dict(entries[0])
        assert time.monotonic() < deadline, f"no completed entry: {entries}"
        time.sleep(0.01)


def test_complete_stream_records_the_terminal_chunk(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "delay_then_continue", "after_content_frames": 1, "delay_ms": 50})
    client = llmts_session.gemini_client()

    chunks = list(client.models.generate_content_stream(model=MODEL, contents="Hi"))

    assert "".join(c.text or "" for c in chunks) == "First second."
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    entry = _entry(llmts_session)
    assert entry["transport_outcome"] == "completed" and entry["terminal_marker_observed"] is True
    assert entry["emitted_content_frames"] == 2 and entry["stream_delivery_applied"] is True


@pytest.mark.parametrize("after", [1, 2])
def test_early_clean_end_after_each_text_chunk_omits_the_final_chunk(
    llmts_session: SessionClient, after: int
) -> None:
    _configure(llmts_session, {"mode": "early_clean_end", "after_content_frames": after})
    client = llmts_session.gemini_client()

    chunks = list(client.models.generate_content_stream(model=MODEL, contents="Hi"))

    assert [c.text for c in chunks] == ["First ", "second."][:after]
    assert all(c.candidates[0].finish_reason is None and c.usage_metadata is None for c in chunks)
    entry = _entry(llmts_session)
    assert entry["transport_outcome"] == "early_end" and entry["terminal_marker_observed"] is False
    assert entry["emitted_content_frames"] == after
    # google-genai does not retry a stream: the next scripted answer is untouched.
    assert client.models.generate_content(model=MODEL, contents="Hi").text == "Next."


def test_abort_connection_mid_stream_raises_after_the_first_chunk(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "abort_connection", "after_content_frames": 1})
    client = llmts_session.gemini_client()
    received: list[str] = []

    # google-genai leaks the transport's exception: httpx2.ReadError on 3.x, httpx.ReadError on 2.x.
    with pytest.raises(transport_errors()) as caught:
        for chunk in client.models.generate_content_stream(model=MODEL, contents="Hi"):
            received.append(chunk.text or "")

    assert received == ["First "]
    assert type(caught.value).__name__ == "ReadError" and "reset" in str(caught.value).lower()
    entry = _entry(llmts_session)
    assert entry["transport_outcome"] == "aborted" and entry["terminal_marker_observed"] is False
