"""OpenAI images through the official ``openai`` SDK (strict response validation) against a real server:
generated and scripted images, ``url`` answers served under the session, streamed generation and edits,
scripted errors, the operation filter, strict rules, the journal and verification (docs/images.md)."""

from __future__ import annotations

import base64
from typing import Any

import httpx
import openai
import pytest

from llmts import SessionClient
from llmts.runtime.media.png import generated_png
from tests.media.png_check import decode_png
from tests.support.journal import completed_entry

pytestmark = pytest.mark.sdk

MODEL = "gpt-image-1.5"
SOURCE = generated_png(32, 32, b"the picture to edit")


def _png(b64: str | None) -> Any:
    assert b64 is not None
    return decode_png(base64.b64decode(b64))


def test_generated_images_are_pngs_of_the_requested_size(app_openai: Any) -> None:
    answer = app_openai.images.generate(model=MODEL, prompt="a red fox", size="1024x1536", n=2)

    assert [(img.width, img.height) for img in map(lambda d: _png(d.b64_json), answer.data)] == [
        (1024, 1536)
    ] * 2
    assert answer.data[0].b64_json != answer.data[1].b64_json  # each image of n is its own
    assert (answer.size, answer.output_format, answer.background) == ("1024x1536", "png", "opaque")
    assert answer.usage is not None and answer.usage.output_tokens == 2 * 1536
    assert answer.usage.input_tokens_details.text_tokens == answer.usage.input_tokens > 0


def test_generated_images_are_deterministic_per_prompt_and_seed(app_session: SessionClient) -> None:
    client = app_session.openai_client(_strict_response_validation=True, max_retries=0)

    def draw(prompt: str) -> str | None:
        return client.images.generate(model=MODEL, prompt=prompt, size="256x256").data[0].b64_json

    fox = draw("a red fox")
    assert draw("a red fox") == fox and draw("a blue fox") != fox
    app_session.configure({"determinism": {"seed": "run-1"}})
    seeded = draw("a red fox")
    assert seeded != fox and draw("a red fox") == seeded
    app_session.configure({"determinism": {"seed": "run-2"}})
    assert draw("a red fox") != seeded


def test_url_answers_are_served_under_the_session_until_it_resets(
    llmts_session: SessionClient, openai_client: Any
) -> None:
    answer = openai_client.images.generate(model=MODEL, prompt="a fox", size="256x256", response_format="url")

    url = answer.data[0].url
    assert url is not None and answer.data[0].b64_json is None
    assert f"/sessions/{llmts_session.id}/openai/v1/images/files/img_" in url
    fetched = httpx.get(url)  # no credential: image loaders send none
    assert fetched.status_code == 200 and fetched.headers["content-type"] == "image/png"
    assert (decode_png(fetched.content).width, decode_png(fetched.content).height) == (256, 256)
    llmts_session.reset()
    gone = httpx.get(url)
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "image_not_found"


def test_fixture_images_are_returned_byte_for_byte(llmts_session: SessionClient, openai_client: Any) -> None:
    scripted = b"\xff\xd8\xff\xe0 not really a jpeg"
    llmts_session.configure(
        {
            "scenarios": [
                {
                    "operation": "images",
                    "responses": [
                        {
                            "images": [
                                {"b64_json": base64.b64encode(scripted).decode(), "revised_prompt": "A fox."},
                            ]
                        },
                        {"images": [{"url": "https://cdn.example.com/fox.png"}]},
                        {"images": [{"b64_json": base64.b64encode(scripted).decode()}]},
                    ],
                }
            ]
        }
    )

    first = openai_client.images.generate(model=MODEL, prompt="a fox", output_format="jpeg")
    assert base64.b64decode(first.data[0].b64_json) == scripted
    assert (first.data[0].revised_prompt, first.output_format) == ("A fox.", "jpeg")
    assert (
        openai_client.images.generate(model=MODEL, prompt="a fox").data[0].url
        == "https://cdn.example.com/fox.png"
    )
    served = openai_client.images.generate(model=MODEL, prompt="a fox", response_format="url").data[0].url
    assert httpx.get(served).content == scripted and httpx.get(served).headers["content-type"] == "image/jpeg"


def test_streamed_generation_sends_partial_images_then_completed(
    app_session: SessionClient, app_openai: Any
) -> None:
    events = list(
        app_openai.images.generate(model=MODEL, prompt="a fox", size="512x512", stream=True, partial_images=2)
    )

    assert [e.type for e in events] == [
        "image_generation.partial_image",
        "image_generation.partial_image",
        "image_generation.completed",
    ]
    assert [e.partial_image_index for e in events[:2]] == [0, 1]
    images = [_png(e.b64_json) for e in events]
    assert all((image.width, image.height) == (512, 512) for image in images)
    assert len({e.b64_json for e in events}) == 3  # previews reveal more, the final image is whole
    final = events[-1]
    assert (final.size, final.output_format, final.quality) == ("512x512", "png", "auto")
    assert final.usage.output_tokens == 256
    json_answer = app_openai.images.generate(model=MODEL, prompt="a fox", size="512x512")
    assert json_answer.data[0].b64_json == final.b64_json  # streamed or not, the same image
    entry = completed_entry(app_session, streaming=True)
    assert (entry["operation"], entry["terminal_marker_observed"], entry["emitted_content_frames"]) == (
        "images",
        True,
        2,
    )


def test_edits_take_multipart_images_and_stream_image_edit_events(app_openai: Any) -> None:
    edited = app_openai.images.edit(
        model=MODEL, image=("fox.png", SOURCE, "image/png"), prompt="add a hat", size="256x256"
    )
    image = _png(edited.data[0].b64_json)
    assert (image.width, image.height) == (256, 256)
    again = app_openai.images.edit(
        model=MODEL,
        image=[("fox.png", SOURCE, "image/png"), ("hat.png", generated_png(8, 8, b"hat"), "image/png")],
        mask=("mask.png", SOURCE, "image/png"),
        prompt="add a hat",
        size="256x256",
        n=2,
    )
    assert len(again.data) == 2 and again.data[0].b64_json != edited.data[0].b64_json  # other uploads

    events = list(
        app_openai.images.edit(
            model=MODEL,
            image=("fox.png", SOURCE, "image/png"),
            prompt="add a hat",
            stream=True,
            partial_images=1,
        )
    )
    assert [e.type for e in events] == ["image_edit.partial_image", "image_edit.completed"]
    assert (_png(events[-1].b64_json).width, events[-1].size) == (1024, "1024x1024")


def test_scripted_errors_and_the_operation_filter(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(
        {
            "scenarios": [
                {"responses": [{"text": "chat answer"}]},
                {
                    "operation": "images",
                    "responses": [
                        {
                            "error": {
                                "status": 429,
                                "code": "rate_limit_exceeded",
                                "message": "Slow down",
                                "retry_after": 1,
                            }
                        },
                        {
                            "error": {
                                "status": 400,
                                "code": "moderation_blocked",
                                "message": "Your request was rejected.",
                            }
                        },
                    ],
                },
            ]
        }
    )

    with pytest.raises(openai.RateLimitError) as limited:
        app_openai.images.generate(model=MODEL, prompt="a fox")
    assert limited.value.response.headers["retry-after"] == "1"
    with pytest.raises(openai.BadRequestError) as blocked:
        app_openai.images.generate(model=MODEL, prompt="a fox")
    assert blocked.value.code == "moderation_blocked"
    # The chat scenario's queue was not touched by the image calls.
    chat = app_openai.chat.completions.create(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": "Hi"}]
    )
    assert chat.choices[0].message.content == "chat answer"
    with pytest.raises(openai.ConflictError) as exhausted:
        app_openai.images.generate(model=MODEL, prompt="a fox")
    assert exhausted.value.code == "llm_test_server_scenario_exhausted"


def test_fixture_that_does_not_fit_is_a_409(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(
        {
            "scenarios": [
                {"operation": "images", "responses": [{"images": [{"url": "https://example.com/a.png"}]}]}
            ]
        }
    )
    with pytest.raises(openai.ConflictError) as wrong_count:
        app_openai.images.generate(model=MODEL, prompt="a fox", n=2)
    assert "1 image(s) but the request asks for 2" in wrong_count.value.message
    with pytest.raises(openai.ConflictError) as by_url:
        list(app_openai.images.generate(model=MODEL, prompt="a fox", stream=True))
    assert "streamed image events carry b64_json" in by_url.value.message


def test_strict_rules_and_their_lenient_twin(app_session: SessionClient, app_openai: Any) -> None:
    with pytest.raises(openai.BadRequestError) as empty:
        app_openai.images.generate(model=MODEL, prompt="")
    assert (empty.value.code, empty.value.param) == ("invalid_value", "prompt")
    assert "image_prompt_length" in empty.value.message
    with pytest.raises(openai.BadRequestError) as size:
        app_openai.images.generate(model=MODEL, prompt="a fox", size="100x100")
    assert size.value.param == "size" and "image_size_unsupported" in size.value.message
    with pytest.raises(openai.BadRequestError) as mime:
        app_openai.images.edit(model=MODEL, image=("notes.txt", b"hello", "text/plain"), prompt="x")
    assert mime.value.code == "unsupported_file_mimetype"
    with pytest.raises(openai.BadRequestError) as mask:
        app_openai.images.edit(
            model=MODEL,
            image=("a.png", SOURCE, "image/png"),
            mask=("m.jpg", b"\xff\xd8", "image/jpeg"),
            prompt="x",
        )
    assert mask.value.param == "mask"

    app_session.configure({"strict_requests": False})
    odd = app_openai.images.generate(model=MODEL, prompt="", size="100x100")
    assert (_png(odd.data[0].b64_json).width, odd.size) == (100, "100x100")
    # What no model draws is refused either way.
    with pytest.raises(openai.BadRequestError) as huge:
        app_openai.images.generate(model=MODEL, prompt="x", size="5000x5000")
    assert huge.value.param == "size"
    with pytest.raises(openai.BadRequestError) as many:
        app_openai.images.generate(model=MODEL, prompt="x", n=11)
    assert many.value.param == "n"
    with pytest.raises(openai.BadRequestError) as pixels:  # 10 x 3840x2160 would block the worker
        app_openai.images.generate(model=MODEL, prompt="x", n=10, size="3840x2160")
    assert "generated_image_pixels" in pixels.value.message


def test_journal_and_verification_by_operation(app_session: SessionClient, app_openai: Any) -> None:
    app_openai.images.generate(model=MODEL, prompt="a fox", size="256x256")
    list(app_openai.images.generate(model=MODEL, prompt="a fox", size="256x256", stream=True))

    entries = app_session.requests(operation="images")
    assert len(entries) == 2 and all(e["model"] == MODEL and e["status"] == 200 for e in entries)
    verdict = app_session.verify(
        requests=[
            {"name": "two images", "query": {"operation": "images"}, "minimum_count": 2, "maximum_count": 2},
            {
                "name": "streamed to the end",
                "query": {"operation": "images", "streaming": True},
                "require_streaming_terminal_marker": True,
            },
            {
                "name": "no chat",
                "query": {"operation": "chat.completions"},
                "minimum_count": 0,
                "maximum_count": 0,
            },
        ]
    )
    verdict.assert_passed()


def test_streamed_n_images_each_send_their_partials_then_completed(
    app_session: SessionClient, app_openai: Any
) -> None:
    events = list(
        app_openai.images.generate(
            model=MODEL, prompt="foxes", size="64x64", n=2, stream=True, partial_images=1
        )
    )

    assert [e.type.rsplit(".", 1)[1] for e in events] == ["partial_image", "completed"] * 2
    assert events[1].b64_json != events[3].b64_json
    entry = completed_entry(app_session, streaming=True)
    assert (entry["emitted_content_frames"], entry["terminal_marker_observed"]) == (2, True)
