"""What the spec says about one answer: every failure of its JSON body, of each SSE event, or of its error
envelope against the operation's schemas, as readable lines (empty: the answer conforms).

Where the spec disagrees with the real API, the check follows the real API; each such place is one row of
the deliberate deviations in data/README.md (named here by its number, ``D1``...)."""

from __future__ import annotations

import json
from typing import Any

from tests.providers.openai.spec.spec import OpenAISpec
from tests.providers.openai.spec.wire import Answer, sse_events

__all__ = ["Operation", "answer_failures", "error_failures"]

# (path in the spec, method), e.g. ("/chat/completions", "post").
Operation = tuple[str, str]

# D1: every error answer is the documented envelope {"error": {...}}, whatever the operation lists (most
# list no error answer; DELETE /responses/{id} names the bare Error object for its 404).
_ERROR_ENVELOPE = "ErrorResponse"
# D2: Chat Completions streams end with `data: [DONE]`, which no schema describes.
_DONE = "[DONE]"
# D9: GET /responses/{id}?stream=true replays the create stream's events; the spec documents the query
# parameter but lists only the JSON answer.
_STREAMS_OF = {("/responses/{response_id}", "get"): ("/responses", "post")}


def _component(spec: OpenAISpec, pointer: str) -> str | None:
    """The component a response schema is (``{"$ref": "#/components/schemas/X"}`` -> ``X``)."""
    node: Any = spec.document
    for part in pointer[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    ref = node.get("$ref", "") if isinstance(node, dict) else ""
    return ref.rsplit("/", 1)[1] if ref.startswith("#/components/schemas/") else None


def error_failures(spec: OpenAISpec, answer: Answer) -> list[str]:
    if answer.content_type != "application/json":
        return [f"error {answer.status}: content type {answer.content_type!r}, not application/json"]
    return [f"error {answer.status} body {line}" for line in spec.errors(_ERROR_ENVELOPE, answer.json())]


def _stream_failures(spec: OpenAISpec, operation: Operation, answer: Answer) -> list[str]:
    path, method = _STREAMS_OF.get(operation, operation)
    pointer = spec.response_schema(path, method, "200", "text/event-stream")
    component = _component(spec, pointer)
    union = component if component and "anyOf" in spec.schema(component) else None
    events = sse_events(answer.body)
    if not events:
        return ["stream: no events"]
    failures: list[str] = []
    for index, event in enumerate(events):
        where = f"event {index}"
        if event.data == _DONE:
            if path != "/chat/completions" or index != len(events) - 1:
                failures.append(f"{where}: [DONE] where the API sends none")
            continue
        data = json.loads(event.data)
        kind = data.get("type") if isinstance(data, dict) else None
        where = f"{where} {kind or event.name or ''}".rstrip()
        schema = pointer
        if union is not None:
            found = spec.event_schema(union, kind) if isinstance(kind, str) else None
            if found is None:
                failures.append(f"{where}: type {kind!r} is no event of {union}")
                continue
            schema = found
        if event.name is not None and event.name != kind:
            failures.append(f"{where}: `event: {event.name}` differs from the data's type {kind!r}")
        failures.extend(f"{where} {line}" for line in spec.errors(schema, data))
    if path == "/chat/completions" and events[-1].data != _DONE:
        failures.append("stream: no final data: [DONE]")
    return failures


def answer_failures(
    spec: OpenAISpec, operation: Operation, answer: Answer, *, json_schema: str | None = None
) -> list[str]:
    """Failures of a JSON or SSE answer (or an error answer) against ``operation``'s schemas;
    ``json_schema`` names the component when the operation's JSON answer is a union the request picks
    (a transcript's ``response_format``)."""
    if answer.status != 200:
        return error_failures(spec, answer)
    if answer.content_type == "text/event-stream":
        return _stream_failures(spec, operation, answer)
    if answer.content_type == "application/json":
        path, method = operation
        pointer = json_schema or spec.response_schema(path, method, "200", "application/json")
        return [f"body {line}" for line in spec.errors(pointer, answer.json())]
    return [f"content type {answer.content_type!r}: no JSON or SSE answer"]
