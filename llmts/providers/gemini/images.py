"""Gemini image output (docs/images.md, "Gemini"): a ``generateContent`` request whose
``generationConfig.responseModalities`` names ``IMAGE`` is an ``images`` request, answered from an
``images`` scenario or by generated PNGs, and rendered as ``inlineData`` parts (a scripted image given by
URL as a ``fileData`` part; a ``revised_prompt`` as a text part before its image)."""

from __future__ import annotations

import base64
from typing import Any

from llmts.providers.base import ProviderCall, Reply, json_reply
from llmts.providers.gemini.parse import parse_generate
from llmts.providers.gemini.render import render_generate, usage_metadata
from llmts.providers.operations import operation_request
from llmts.runtime.operations.images import ImagesInput
from llmts.schema.neutral import Completion, NeutralRequest
from llmts.schema.operations.images import ImagesResult

__all__ = ["parse_generate_or_image", "render_generate_or_image", "wants_image"]

# The size Gemini's image models draw by default.
_SIZE = 1024


def wants_image(body: dict[str, Any]) -> bool:
    config = body.get("generationConfig", body.get("generation_config"))
    if not isinstance(config, dict):
        return False
    modalities = config.get("responseModalities", config.get("response_modalities"))
    return isinstance(modalities, list) and any(
        isinstance(value, str) and value.upper() == "IMAGE" for value in modalities
    )


def parse_generate_or_image(call: ProviderCall) -> NeutralRequest:
    """``generateContent``: a chat request, or an ``images`` request when the answer is to be an image."""
    neutral = parse_generate(call)
    if not wants_image(call.request.json_object()):
        return neutral
    # Gemini does not say how many images (count 0): a fixture may script any number.
    given = ImagesInput(neutral.latest_user_text(), count=0, width=_SIZE, height=_SIZE)
    return operation_request(neutral.provider, "images", neutral.model, given)


def _media_type(data: bytes) -> str:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "application/octet-stream"


def render_generate_or_image(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    result = completion.output.result
    if not isinstance(result, ImagesResult):
        return render_generate(call, request, completion)
    parts: list[dict[str, Any]] = []
    for image in result.images:
        if image.revised_prompt is not None:
            parts.append({"text": image.revised_prompt})
        if image.url is not None:
            parts.append({"fileData": {"mimeType": "image/png", "fileUri": image.url}})
        else:
            data = base64.b64encode(image.data).decode()
            parts.append({"inlineData": {"mimeType": _media_type(image.data), "data": data}})
    metadata = usage_metadata(completion.usage)
    metadata["candidatesTokensDetails"] = [
        {"modality": "IMAGE", "tokenCount": completion.usage.output_tokens}
    ]
    body = {
        "candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": metadata,
        "modelVersion": request.model,
        "responseId": completion.response_id,
    }
    return json_reply(200, body, [("x-request-id", call.request_id)])
