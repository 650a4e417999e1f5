"""What every InvokeModel body family shares on the wire: the ``chunk`` event of
``invoke-with-response-stream`` (``{"bytes": "<base64 of the model's JSON>"}``), its malformed twin,
``amazon-bedrock-invocationMetrics`` and the ``X-Amzn-Bedrock-*`` headers of ``invoke``.
"""

from __future__ import annotations

import base64
from typing import Any

from llmts.providers.bedrock.eventstream import event_message, with_broken_crc
from llmts.providers.bedrock.render import LATENCY_MS
from llmts.providers.bedrock.stream import EVENTSTREAM_HEADERS
from llmts.schema.neutral import Usage

__all__ = [
    "INVOKE",
    "INVOKE_STREAM",
    "MALFORMED_CHUNK",
    "chunk",
    "invocation_metrics",
    "invoke_headers",
    "stream_headers",
]

INVOKE = "invoke"
INVOKE_STREAM = "invoke-with-response-stream"


def chunk(event: bytes) -> bytes:
    """One ``chunk`` event-stream message carrying the model's JSON ``event``."""
    return event_message(b"chunk", b'{"bytes":"' + base64.b64encode(event) + b'"}')


# Well framed, wrong message CRC: botocore's decoder raises ``ChecksumMismatch`` (every body family).
MALFORMED_CHUNK = with_broken_crc(
    chunk(b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"')
)


def invocation_metrics(usage: Usage) -> dict[str, Any]:
    """``amazon-bedrock-invocationMetrics``: the service adds it to the last chunk of every family."""
    return {
        "inputTokenCount": usage.input_tokens,
        "outputTokenCount": usage.output_tokens,
        "invocationLatency": LATENCY_MS,
        "firstByteLatency": LATENCY_MS,
    }


def invoke_headers(usage: Usage, request_id: str) -> list[tuple[str, str]]:
    return [
        ("Content-Type", "application/json"),
        ("x-amzn-RequestId", request_id),
        ("X-Amzn-Bedrock-Invocation-Latency", str(LATENCY_MS)),
        ("X-Amzn-Bedrock-Input-Token-Count", str(usage.input_tokens)),
        ("X-Amzn-Bedrock-Output-Token-Count", str(usage.output_tokens)),
    ]


def stream_headers(request_id: str) -> list[tuple[str, str]]:
    """InvokeModelWithResponseStream's headers: botocore's model marks ``X-Amzn-Bedrock-Content-Type`` (the
    result's ``contentType``, the MIME type of the chunks' payloads) required."""
    return [
        EVENTSTREAM_HEADERS,
        ("x-amzn-RequestId", request_id),
        ("X-Amzn-Bedrock-Content-Type", "application/json"),
    ]
