"""Gemini image output through google-genai: ``generateContent`` with ``responseModalities: ["IMAGE"]``
answers ``inlineData`` parts, generated or scripted (docs/images.md, "Gemini")."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from google.genai import types

from llmts import SessionClient
from llmts.runtime.media.png import generated_png
from tests.media.png_check import decode_png

pytestmark = pytest.mark.sdk

MODEL = "gemini-2.5-flash-image"
IMAGE_ONLY = types.GenerateContentConfig(response_modalities=["IMAGE"])


def test_generated_image_is_an_inline_png(app_session: SessionClient) -> None:
    client = app_session.gemini_client()

    answer = client.models.generate_content(model=MODEL, contents="a red fox", config=IMAGE_ONLY)

    (part,) = answer.candidates[0].content.parts
    assert part.inline_data.mime_type == "image/png"
    image = decode_png(part.inline_data.data)
    assert (image.width, image.height) == (1024, 1024)
    again = client.models.generate_content(model=MODEL, contents="a red fox", config=IMAGE_ONLY)
    assert again.candidates[0].content.parts[0].inline_data.data == part.inline_data.data
    assert answer.usage_metadata.candidates_token_count == 1024
    entry = app_session.requests()[0]
    assert (entry["provider"], entry["operation"], entry["model"]) == ("gemini", "images", MODEL)


def test_scripted_images_and_the_operation_filter(app_session: SessionClient) -> None:
    first, second = generated_png(8, 8, b"one"), generated_png(8, 8, b"two")
    app_session.configure(
        {
            "scenarios": [
                {"responses": [{"text": "A chat answer."}]},
                {
                    "operation": "images",
                    "responses": [
                        {
                            "images": [
                                {
                                    "b64_json": base64.b64encode(first).decode(),
                                    "revised_prompt": "Here you go.",
                                },
                                {"b64_json": base64.b64encode(second).decode()},
                            ]
                        },
                        {"images": [{"url": "https://example.com/fox.png"}]},
                    ],
                },
            ]
        }
    )
    client = app_session.gemini_client()
    config: Any = {"response_modalities": ["TEXT", "IMAGE"]}

    answer = client.models.generate_content(model=MODEL, contents="two foxes", config=config)
    parts = answer.candidates[0].content.parts
    assert parts[0].text == "Here you go."
    assert [p.inline_data.data for p in parts[1:]] == [first, second]
    by_url = client.models.generate_content(model=MODEL, contents="a fox", config=config)
    assert by_url.candidates[0].content.parts[0].file_data.file_uri == "https://example.com/fox.png"
    # A text request is chat: the images scenario's queue is not touched by it, nor the chat's by images.
    assert client.models.generate_content(model="gemini-2.5-flash", contents="Hi").text == "A chat answer."
