"""Every stream delivery fault mode on both Bedrock streaming routes (``converse-stream`` and
``invoke-with-response-stream``, the latter with each body family: Anthropic, Amazon Nova, Amazon Titan
Text): what boto3 sees and the journal's evidence (docs/stream-delivery.md).

The two routes differ in one thing: ConverseStream ends with ``messageStop``/``metadata`` (terminal
frames), InvokeModelWithResponseStream ends at EOF with no marker, so ``terminal_marker_observed`` is
never true for it (verification that requires the marker is refused, see test_bedrock_verify.py).
"""

from __future__ import annotations

import json
import time
from typing import Any

import botocore.config
import botocore.eventstream
import botocore.exceptions
import pytest
import urllib3.exceptions

from llmts import SessionClient

pytestmark = pytest.mark.sdk

MODEL = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
NOVA = "us.amazon.nova-lite-v1:0"
TITAN = "amazon.titan-text-express-v1"
ROUTES = ("converse-stream", "invoke-with-response-stream", "invoke-nova", "invoke-titan")
# Events boto3 yields for a whole answer of two text chunks, per route.
WHOLE = {
    "converse-stream": [
        "messageStart",
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    ],
    "invoke-with-response-stream": [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ],
    # Nova's chunks are the ConverseStream events as JSON; Titan's carry the text chunks themselves.
    "invoke-nova": [
        "messageStart",
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    ],
    "invoke-titan": ["First ", "second."],
}
# What boto3 had yielded when the plan acted after the first text frame.
FIRST = {
    "converse-stream": WHOLE["converse-stream"][:2],
    "invoke-with-response-stream": WHOLE["invoke-with-response-stream"][:3],
    "invoke-nova": WHOLE["invoke-nova"][:2],
    "invoke-titan": WHOLE["invoke-titan"][:1],
}
_FAMILY = {
    "invoke-with-response-stream": (
        MODEL,
        {
            "anthropic_version": "bedrock-2023-05-31",
            "max_tokens": 9,
            "messages": [{"role": "user", "content": "Hi"}],
        },
        lambda event: event["type"],
    ),
    "invoke-nova": (
        NOVA,
        {"messages": [{"role": "user", "content": [{"text": "Hi"}]}]},
        lambda e: next(iter(e)),
    ),
    "invoke-titan": (TITAN, {"inputText": "Hi"}, lambda event: event["outputText"]),
}


def _events(
    session: SessionClient, route: str, plan: dict[str, Any], read_timeout: float = 30
) -> tuple[list[str], BaseException | None]:
    """The events boto3 delivered and what it raised; a short ``read_timeout`` only where the test is about
    it (a busy CI machine can take a second to answer)."""
    session.configure(
        {
            "models": [MODEL, NOVA, TITAN],
            "scenarios": [
                {
                    "responses": [
                        {"text": "First second.", "chunks": ["First ", "second."], "stream_delivery": plan}
                    ]
                }
            ],
        }
    )
    config = botocore.config.Config(retries={"total_max_attempts": 1}, read_timeout=read_timeout)
    client = session.bedrock_client(config=config)
    seen: list[str] = []
    try:
        if route == "converse-stream":
            response = client.converse_stream(
                modelId=MODEL, messages=[{"role": "user", "content": [{"text": "Hi"}]}]
            )
            seen.extend(next(iter(event)) for event in response["stream"])
        else:
            model, body, name = _FAMILY[route]
            response = client.invoke_model_with_response_stream(modelId=model, body=json.dumps(body))
            seen.extend(name(json.loads(event["chunk"]["bytes"])) for event in response["body"])
    except Exception as error:  # what boto3 raised is the test's subject
        return seen, error
    return seen, None


def _entry(session: SessionClient) -> dict[str, Any]:
    deadline = time.monotonic() + 5
    while True:
        entries = session.requests()
        if entries and entries[0]["completed"]:
            return dict(entries[0])
        assert time.monotonic() < deadline, f"no completed entry: {entries}"
        time.sleep(0.01)


def _terminal(route: str) -> bool:
    return route == "converse-stream"


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    "plan",
    [
        {"mode": "delay_then_continue", "after_content_frames": 1, "delay_ms": 50},
        {"mode": "slow_drip", "bytes_per_second": 4000},
    ],
)
def test_harmless_modes_deliver_the_whole_stream(
    llmts_session: SessionClient, route: str, plan: dict[str, Any]
) -> None:
    seen, error = _events(llmts_session, route, plan)

    assert (seen, error) == (WHOLE[route], None)
    entry = _entry(llmts_session)
    assert (entry["transport_outcome"], entry["success"], entry["emitted_content_frames"]) == (
        "completed",
        True,
        2,
    )
    assert entry["terminal_marker_observed"] is _terminal(route)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    "plan",
    [
        {"mode": "early_clean_end", "after_content_frames": 1},
        {"mode": "truncate_bytes", "after_content_frames": 1, "cut_bytes": 10},
    ],
)
def test_clean_early_ends_are_silent_in_boto3(
    llmts_session: SessionClient, route: str, plan: dict[str, Any]
) -> None:
    """botocore's decoder keeps a partial message waiting for more bytes and stops quietly at EOF: the
    iteration just ends, so only the missing terminal events tell the caller."""
    seen, error = _events(llmts_session, route, plan)

    assert (seen, error) == (FIRST[route], None)
    entry = _entry(llmts_session)
    assert (entry["transport_outcome"], entry["success"], entry["terminal_marker_observed"]) == (
        "early_end",
        False,
        False,
    )
    assert entry["emitted_content_frames"] == 1


@pytest.mark.parametrize("route", ROUTES)
def test_malformed_frame_breaks_the_crc_and_boto3_raises(llmts_session: SessionClient, route: str) -> None:
    seen, error = _events(llmts_session, route, {"mode": "malformed_frame", "after_content_frames": 1})

    assert seen == FIRST[route]
    assert isinstance(error, botocore.eventstream.ChecksumMismatch)
    entry = _entry(llmts_session)
    assert (entry["success"], entry["emitted_content_frames"]) == (False, 2)
    # The server writes on after the bad frame; boto3 closes the connection as it raises. Whether the rest
    # of the stream left before that close is a race (on a loaded machine it often does not).
    assert entry["transport_outcome"] in ("completed", "client_gone")
    if entry["transport_outcome"] == "completed":
        assert entry["terminal_marker_observed"] is _terminal(route)


@pytest.mark.parametrize("route", ROUTES)
def test_abort_connection_mid_stream(llmts_session: SessionClient, route: str) -> None:
    seen, error = _events(llmts_session, route, {"mode": "abort_connection", "after_content_frames": 1})

    assert seen == FIRST[route]
    assert isinstance(error, urllib3.exceptions.ProtocolError)
    entry = _entry(llmts_session)
    assert (entry["transport_outcome"], entry["success"], entry["terminal_marker_observed"]) == (
        "aborted",
        False,
        False,
    )


@pytest.mark.parametrize("route", ROUTES)
def test_stall_hits_botocores_read_timeout(llmts_session: SessionClient, route: str) -> None:
    seen, error = _events(
        llmts_session, route, {"mode": "stall", "after_content_frames": 1, "delay_ms": 5000}, read_timeout=1
    )

    assert seen == FIRST[route]
    assert isinstance(error, urllib3.exceptions.ReadTimeoutError)
    entry = _entry(llmts_session)
    assert (entry["transport_outcome"], entry["terminal_marker_observed"]) == ("client_gone", False)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("mode", ["reset_before_headers", "empty_response"])
def test_connection_drops_before_headers(llmts_session: SessionClient, route: str, mode: str) -> None:
    seen, error = _events(llmts_session, route, {"mode": mode})

    assert seen == []
    assert isinstance(error, botocore.exceptions.ConnectionClosedError)
    assert _entry(llmts_session)["transport_outcome"] == "aborted"


@pytest.mark.parametrize("route", ROUTES)
def test_http_error_page_is_a_client_error_with_the_status(llmts_session: SessionClient, route: str) -> None:
    seen, error = _events(llmts_session, route, {"mode": "http_error_page", "status": 503})

    assert seen == []
    assert isinstance(error, botocore.exceptions.ClientError)
    assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    assert error.response["Error"]["Code"] == "503"
    entry = _entry(llmts_session)
    assert (entry["status"], entry["success"]) == (503, False)


def test_botocore_retries_a_connection_dropped_before_headers(llmts_session: SessionClient) -> None:
    """Standard retry mode retries a connection closed before any response; the next scripted answer wins."""
    llmts_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {"text": "lost", "stream_delivery": {"mode": "empty_response"}},
                        {"text": "Second try."},
                    ]
                }
            ],
        }
    )
    client = llmts_session.bedrock_client(
        config=botocore.config.Config(retries={"mode": "standard", "total_max_attempts": 2})
    )

    response = client.converse_stream(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "Hi"}]}])
    texts = [e["contentBlockDelta"]["delta"]["text"] for e in response["stream"] if "contentBlockDelta" in e]

    assert texts == ["Second try."]
    assert [e["transport_outcome"] for e in llmts_session.requests(order="asc")] == ["aborted", "completed"]
