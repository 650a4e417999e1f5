"""Generated images in every ``output_format`` OpenAI answers (png, webp, jpeg, gif, svg), through the
official ``openai`` SDK (strict response validation) and raw HTTP against a real server, decoded by
decoders that share no code with llmts's encoders (tests/media/media_check.py): generations, edits,
streamed partial images and ``url`` answers; the options GIF and SVG refuse; and the answer shape of the
retired DALL-E models, which carried only ``created`` and ``data`` (docs/images.md)."""

from __future__ import annotations

import base64
from typing import Any

import httpx
import openai
import pytest
from openai.types import ImagesResponse

from llmts import SessionClient
from llmts.runtime.media.png import generated_png
from tests.media.media_check import DecodedImage, decode_image
from tests.media.png_check import decode_png
from tests.support.in_process import send_raw

pytestmark = pytest.mark.sdk

MODEL = "gpt-image-1.5"
SOURCE = ("fox.png", generated_png(32, 32, b"the picture to edit"), "image/png")
WIDTH, HEIGHT = 256, 128
_GPT_IMAGE_FIELDS = {"created", "data", "background", "output_format", "quality", "size", "usage"}


def _sdk_answers(fmt: str) -> bool:
    """Whether the installed SDK's ``ImagesResponse`` admits ``output_format`` ``fmt`` (gif and svg came
    after openai 3.x's first releases; older SDKs reject them under strict validation)."""
    try:
        ImagesResponse.model_validate({"created": 0, "output_format": fmt})
    except ValueError:
        return False
    return True


def _bytes(b64: str | None) -> bytes:
    assert b64 is not None
    return base64.b64decode(b64)


def _cell_colours(image: DecodedImage, frame: int = -1) -> list[tuple[int, int, int]]:
    """The colour at the centre of each of the 8 x 8 cells of a decoded generated image."""
    return [
        image.pixel(image.width * (2 * column + 1) // 16, image.height * (2 * row + 1) // 16, frame)
        for row in range(8)
        for column in range(8)
    ]


def _png_cell_colours(png: bytes) -> list[tuple[int, int, int]]:
    decoded = decode_png(png)
    return [
        decoded.palette[
            decoded.rows[decoded.height * (2 * row + 1) // 16][decoded.width * (2 * column + 1) // 16]
        ]
        for row in range(8)
        for column in range(8)
    ]


def _close(left: list[tuple[int, int, int]], right: list[tuple[int, int, int]], slack: int) -> bool:
    return all(
        abs(a - b) <= slack
        for one, two in zip(left, right, strict=True)
        for a, b in zip(one, two, strict=True)
    )


def _generate_raw(session: SessionClient, **body: Any) -> dict[str, Any]:
    response = send_raw(session, "POST", "/openai/v1/images/generations", body)
    assert response.status == 200, response.body
    answer: dict[str, Any] = response.json()
    return answer


@pytest.mark.parametrize("fmt", ["png", "webp", "jpeg", "gif", "svg"])
def test_generated_images_decode_in_every_output_format(
    app_session: SessionClient, app_openai: Any, fmt: str
) -> None:
    if _sdk_answers(fmt):
        answer = app_openai.images.generate(
            model=MODEL, prompt="a red fox", size=f"{WIDTH}x{HEIGHT}", output_format=fmt
        )
        assert (answer.output_format, answer.size) == (fmt, f"{WIDTH}x{HEIGHT}")
        data = _bytes(answer.data[0].b64_json)
    else:  # an SDK older than the format: the same request over HTTP
        body = _generate_raw(
            app_session, model=MODEL, prompt="a red fox", size=f"{WIDTH}x{HEIGHT}", output_format=fmt
        )
        assert body["output_format"] == fmt
        data = _bytes(body["data"][0]["b64_json"])
    png = _bytes(
        app_openai.images.generate(model=MODEL, prompt="a red fox", size=f"{WIDTH}x{HEIGHT}").data[0].b64_json
    )

    image = decode_image(fmt, data)
    assert (image.width, image.height) == (WIDTH, HEIGHT)
    if fmt == "gif":  # OpenAI's defaults: 9 frames of 200 ms
        assert image.frames == 9 and image.frame_seconds == pytest.approx([0.2 * n for n in range(9)])
    if fmt != "svg":  # the same picture in every format (JPEG within its loss)
        assert _close(_cell_colours(image), _png_cell_colours(png), 12 if fmt == "jpeg" else 0)


def test_gif_frames_and_their_duration_follow_the_request(app_session: SessionClient) -> None:
    body = _generate_raw(
        app_session,
        model=MODEL,
        prompt="a fox running",
        size="64x48",
        output_format="gif",
        frame_count=3,
        frame_duration_ms=124,  # rounded to 10 ms, as OpenAI does
    )
    image = decode_image("gif", _bytes(body["data"][0]["b64_json"]))
    assert (image.width, image.height, image.frames) == (64, 48, 3)
    assert image.frame_seconds == pytest.approx([0.0, 0.12, 0.24])
    assert len({bytes(frame) for frame in image.rgb}) == 3  # each frame reveals more of the grid
    # A GIF's frames count towards generated_image_pixels (16 frames of 3840x2160 are 133 Mpx).
    response = send_raw(
        app_session,
        "POST",
        "/openai/v1/images/generations",
        {"model": MODEL, "prompt": "x", "size": "3840x2160", "output_format": "gif", "frame_count": 16},
    )
    assert response.status == 400 and "generated_image_pixels" in response.json()["error"]["message"]


@pytest.mark.parametrize("fmt", ["webp", "jpeg"])
def test_streamed_partial_images_are_in_the_requested_format(app_openai: Any, fmt: str) -> None:
    events = list(
        app_openai.images.generate(
            model=MODEL, prompt="a fox", size="128x64", output_format=fmt, stream=True, partial_images=2
        )
    )
    edits = list(
        app_openai.images.edit(
            model=MODEL,
            image=SOURCE,
            prompt="add a hat",
            size="128x64",
            output_format=fmt,
            stream=True,
            partial_images=1,
        )
    )

    assert [e.type for e in events][-1] == "image_generation.completed"
    assert [e.type for e in edits] == ["image_edit.partial_image", "image_edit.completed"]
    for event in (*events, *edits):
        assert event.output_format == fmt
        image = decode_image(fmt, _bytes(event.b64_json))
        assert (image.width, image.height) == (128, 64)
    assert len({e.b64_json for e in events}) == 3  # previews reveal more, the final image is whole


@pytest.mark.parametrize("fmt", ["webp", "jpeg", "gif", "svg"])
def test_edits_and_url_answers_in_every_format(
    llmts_session: SessionClient, openai_client: Any, fmt: str
) -> None:
    media_types = {"webp": "image/webp", "jpeg": "image/jpeg", "gif": "image/gif", "svg": "image/svg+xml"}
    if _sdk_answers(fmt):
        edited = openai_client.images.edit(
            model=MODEL, image=SOURCE, prompt="add a hat", size="64x64", output_format=fmt
        )
        assert edited.output_format == fmt
        image = decode_image(fmt, _bytes(edited.data[0].b64_json))
        assert (image.width, image.height) == (64, 64)
    body = _generate_raw(
        llmts_session, model=MODEL, prompt="a fox", size="64x32", output_format=fmt, response_format="url"
    )
    fetched = httpx.get(body["data"][0]["url"])
    assert fetched.status_code == 200 and fetched.headers["content-type"] == media_types[fmt]
    # Served from the dashboard's origin: an image (an SVG's script above all) never runs there.
    assert "sandbox" in fetched.headers["content-security-policy"]
    assert fetched.headers["x-content-type-options"] == "nosniff"
    assert (decode_image(fmt, fetched.content).width, decode_image(fmt, fetched.content).height) == (64, 32)


def test_options_gif_and_svg_do_not_take_are_400s(app_session: SessionClient) -> None:
    def refused(path: str = "/openai/v1/images/generations", **body: Any) -> dict[str, Any]:
        response = send_raw(app_session, "POST", path, {"model": MODEL, "prompt": "x", **body})
        assert response.status == 400, response.body
        error: dict[str, Any] = response.json()["error"]
        return error

    assert refused(output_format="gif", stream=True)["param"] == "stream"
    assert refused(output_format="svg", stream=True, partial_images=1)["param"] == "stream"
    assert refused(output_format="svg", n=2)["param"] == "n"
    assert refused(output_format="png", frame_count=3)["param"] == "frame_count"
    assert refused(frame_duration_ms=100)["param"] == "frame_duration_ms"
    assert refused(output_format="gif", frame_count=1)["param"] == "frame_count"
    assert refused(output_format="gif", frame_count=17)["param"] == "frame_count"
    assert refused(output_format="gif", frame_duration_ms=-10)["param"] == "frame_duration_ms"


def test_gif_edits_take_no_mask(app_openai: Any) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        app_openai.images.edit(
            model=MODEL, image=SOURCE, mask=SOURCE, prompt="add a hat", extra_body={"output_format": "gif"}
        )
    assert caught.value.param == "mask"


@pytest.mark.parametrize(("model", "size"), [("dall-e-2", "256x256"), ("dall-e-3", "1792x1024")])
def test_dall_e_answers_carry_only_created_and_data(
    llmts_session: SessionClient, openai_client: Any, model: str, size: str
) -> None:
    answer = openai_client.images.generate(model=model, prompt="a fox", size=size)
    assert (answer.size, answer.quality, answer.background, answer.output_format, answer.usage) == (None,) * 5
    url = answer.data[0].url  # DALL-E answered url unless asked for b64_json
    assert url is not None and answer.data[0].b64_json is None
    assert decode_png(httpx.get(url).content).width == int(size.split("x")[0])

    raw = _generate_raw(llmts_session, model=model, prompt="a fox", size=size, response_format="b64_json")
    assert set(raw) == {"created", "data"} and set(raw["data"][0]) == {"b64_json"}
    if model == "dall-e-2":  # edits served dall-e-2 only
        edited = openai_client.images.edit(
            model=model, image=SOURCE, prompt="add a hat", size=size, response_format="b64_json"
        )
        assert edited.size is None and edited.usage is None and edited.data[0].b64_json
    gpt_image = _generate_raw(llmts_session, model=MODEL, prompt="a fox", size="1024x1024")
    assert set(gpt_image) == _GPT_IMAGE_FIELDS
