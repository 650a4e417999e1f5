"""The spec's own request examples (each operation's ``x-oaiMeta.examples``, their ``curl`` form), turned
into requests llmts must accept: the JSON of ``-d``, the fields of ``-F`` (``@file`` uploads become a
small PNG or audio upload), the URL's path, ``-X``'s method. Placeholders become real values: the
``VAR_chat_model_id`` model a real model id, the ``resp_...`` ids a response created first."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from llmts import SessionClient
from tests.providers.openai.spec.cases import CHAT_MODEL, PNG, UPLOAD
from tests.providers.openai.spec.spec import load_spec
from tests.providers.openai.spec.wire import FormField, request

__all__ = ["EXAMPLES", "Example", "example_request"]

_API = "https://api.openai.com/v1"

# Examples that fail until an open defect is fixed, (path, method, title) -> the defect (none open now).
_XFAIL: dict[tuple[str, str, str], str] = {}
# The JSON component an example's request picks out of its operation's union.
_TRANSCRIPT_SCHEMAS = {
    "diarized_json": "CreateTranscriptionResponseDiarizedJson",
    "verbose_json": "CreateTranscriptionResponseVerboseJson",
}


@dataclass(frozen=True)
class Example:
    id: str
    operation: tuple[str, str]
    curl: str
    xfail: str | None
    expect: str
    json_schema: str | None


def _json_schema(operation: tuple[str, str], curl: str) -> str | None:
    if operation == ("/audio/transcriptions", "post"):
        for fmt, schema in _TRANSCRIPT_SCHEMAS.items():
            if f'response_format="{fmt}"' in curl:
                return schema
        return None if "stream=true" in curl else "CreateTranscriptionResponseJson"
    if operation == ("/audio/translations", "post"):
        return "CreateTranslationResponseJson"
    return None


def _examples() -> list[Example]:
    found = []
    for path, methods in load_spec().document["paths"].items():
        for method, operation in methods.items():
            listed = operation.get("x-oaiMeta", {}).get("examples", [])
            for index, example in enumerate(listed if isinstance(listed, list) else [listed]):
                title = example.get("title") or "Default"
                curl = example["request"]["curl"]
                speech = path == "/audio/speech" and '"stream_format": "sse"' not in curl
                slug = re.sub(r"[^a-z0-9]+", "-", f"{method} {path} {index} {title}".lower()).strip("-")
                found.append(
                    Example(
                        slug,
                        (path, method),
                        curl,
                        _XFAIL.get((path, method, title)),
                        "audio" if speech else "spec",
                        _json_schema((path, method), curl),
                    )
                )
    return found


EXAMPLES = _examples()


def _upload(name: str, value: str) -> str | tuple[str, bytes, str]:
    if not value.startswith("@"):
        return value
    return PNG if name.startswith("image") else UPLOAD


def _created_response(session: SessionClient) -> str:
    created = request(session.provider_base, "POST", "/responses", body={"model": CHAT_MODEL, "input": "Hi"})
    assert created.status == 200, created.body
    return str(created.json()["id"])


def example_request(example: Example, session: SessionClient) -> tuple[str, str, Any, list[FormField] | None]:
    """(method, path under /openai/v1, JSON body or None, multipart fields or None) of the example."""
    words = shlex.split(example.curl.replace("\\\n", " "))
    method: str | None = None
    path = ""
    body: Any = None
    form: list[FormField] | None = None
    for index, word in enumerate(words):
        following = words[index + 1] if index + 1 < len(words) else ""
        if word.startswith(_API):
            path = word[len(_API) :]
        elif word == "-X":
            method = following
        elif word == "-d":
            body = json.loads(following.replace("VAR_chat_model_id", CHAT_MODEL))
        elif word == "-F":
            name, _, value = following.partition("=")
            form = [*(form or []), (name, _upload(name, value))]
    path = path.replace("VAR_chat_model_id", CHAT_MODEL)
    if re.search(r"/responses/resp_\w+", path):
        path = re.sub(r"resp_\w+", _created_response(session), path)
    return method or ("POST" if body is not None or form is not None else "GET"), path, body, form
