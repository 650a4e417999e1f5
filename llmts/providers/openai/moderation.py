"""OpenAI ``POST /moderations`` (docs/moderation.md): text inputs (a string or strings, one result each)
and omni-moderation's multi-modal array (``text`` and ``image_url`` parts, one result for the whole
array). Each result carries every category in ``categories``, ``category_scores`` and
``category_applied_input_types`` (the input types a category's score covers: images only for the
categories omni-moderation scores on images), as the SDK's strict validation requires.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.base import ProviderCall, Reply
from llmts.providers.operations import bounded_texts, operation_input, operation_request, operation_result
from llmts.providers.strict import StrictRule, Violation
from llmts.runtime.operations.moderation import ModerationInput
from llmts.runtime.signatures import SignatureBook
from llmts.schema.neutral import Completion, NeutralRequest
from llmts.schema.operations.moderation import MODERATION_CATEGORIES, ModerationResult

if TYPE_CHECKING:  # annotations are never evaluated at run time
    from typing_extensions import TypeIs

__all__ = ["MODERATION_RULES", "parse_moderation", "render_moderation"]

MODERATION = "moderation"
DEFAULT_MODEL = "omni-moderation-latest"
# The categories omni-moderation also scores on images.
_IMAGE_CATEGORIES = frozenset(
    {"self-harm", "self-harm/instructions", "self-harm/intent", "sexual", "violence", "violence/graphic"}
)


def _bad(message: str, param: str = "input", code: str = "invalid_value") -> InvalidRequest:
    return InvalidRequest(message, code=code, param=param)


def _multi_modal(parts: list[Any]) -> tuple[str, bool, bool]:
    """(the parts' text and image URLs joined, has text, has an image)."""
    texts: list[str] = []
    has_text = has_image = False
    for index, part in enumerate(parts):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
            has_text = True
        elif kind == "image_url" and isinstance(part.get("image_url"), dict):
            url = part["image_url"].get("url")
            if not isinstance(url, str):
                raise _bad(f"input[{index}].image_url.url must be a string", f"input[{index}].image_url.url")
            texts.append(url)
            has_image = True
        else:
            raise _bad(f"input[{index}] must be a text or an image_url part", f"input[{index}]")
    return " ".join(texts), has_text, has_image


def _is_multi_modal(raw: Any) -> TypeIs[list[Any]]:
    return isinstance(raw, list) and bool(raw) and all(isinstance(item, dict) for item in raw)


def parse_moderation(call: ProviderCall, provider: str, model: str | None = None) -> NeutralRequest:
    body = call.request.json_object()
    if model is None:
        model = body.get("model", DEFAULT_MODEL)
        if not isinstance(model, str) or not model:
            raise _bad("model must be a string", "model", "invalid_type")
    raw = body.get("input")
    if raw is None:
        raise _bad("'input' is a required property", "input", "missing_required_parameter")
    images: tuple[int, ...] = ()
    texts: tuple[str, ...]
    if isinstance(raw, str):
        texts = (raw,)
    elif _is_multi_modal(raw):
        text, _, has_image = _multi_modal(raw)
        texts, images = (text,), ((0,) if has_image else ())
    elif isinstance(raw, list):
        texts = bounded_texts(raw, "input")
    else:
        raise _bad(
            "'input' must be a string, an array of strings or an array of multi-modal inputs",
            "input",
            "invalid_type",
        )
    return operation_request(
        provider, MODERATION, model, ModerationInput(bounded_texts(texts, "input"), images)
    )


def _applied(has_text: bool, has_image: bool) -> dict[str, list[str]]:
    applied: dict[str, list[str]] = {}
    for category in MODERATION_CATEGORIES:
        kinds = ["text"] if has_text else []
        if has_image and category in _IMAGE_CATEGORIES:
            kinds.append("image")
        applied[category] = kinds
    return applied


def moderation_payload(call: ProviderCall, request: NeutralRequest, completion: Completion) -> dict[str, Any]:
    result = operation_result(completion, ModerationResult)
    asked = operation_input(request, ModerationInput)
    raw = call.request.json_object().get("input")
    has_text = not _is_multi_modal(raw) or _multi_modal(raw)[1]
    verdicts = result.verdicts
    results = []
    for index in range(len(asked.inputs)):
        verdict = verdicts[index] if len(verdicts) > 1 else verdicts[0]
        results.append(
            {
                "flagged": verdict.flagged,
                "categories": verdict.categories,
                "category_scores": verdict.category_scores,
                "category_applied_input_types": _applied(has_text, index in asked.image_inputs),
            }
        )
    return {"id": "modr-" + completion.response_id, "model": request.model, "results": results}


def render_moderation(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    payload = moderation_payload(call, request, completion)
    headers = [("Content-Type", "application/json"), ("x-request-id", call.request_id)]
    return Reply(200, headers, orjson.dumps(payload))


# --- strict request contract (llmts/providers/strict.py) -------------------------------------------------


def _empty(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    if body.get("input") == []:
        return Violation("'$.input' is invalid: the input list must not be empty.", "input")
    return None


def _images_need_omni(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    model = body.get("model", DEFAULT_MODEL)
    raw = body.get("input")
    has_image = _is_multi_modal(raw) and any(
        isinstance(part, dict) and part.get("type") == "image_url" for part in raw
    )
    if has_image and isinstance(model, str) and not model.startswith("omni-moderation"):
        return Violation(f"The model {model} does not support image inputs.", "input")
    return None


_SOURCE = "https://platform.openai.com/docs/api-reference/moderations/create"
MODERATION_RULES: tuple[StrictRule, ...] = (
    StrictRule("moderation_empty_input", _empty, "invalid_value", _SOURCE),
    StrictRule("moderation_images_need_omni", _images_need_omni, "invalid_value", _SOURCE),
)
