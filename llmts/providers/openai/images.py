"""OpenAI ``/images/generations`` (JSON) and ``/images/edits`` (multipart), JSON and streamed, and the
route that serves ``response_format: url`` images (docs/images.md).

Parsing keeps what the real API refuses outright a 400 (missing ``prompt``, a ``size`` llmts cannot draw,
``n`` outside 1..10, ``partial_images`` outside 0..3, GIF and SVG options the format does not take); what
only some models refuse is a strict rule (``media_strict.py``). The answer's images come from an
``images`` fixture or are generated (``llmts/runtime/media``): images of the requested size and
``output_format``, deterministic per seed and prompt. Answers of the retired DALL-E models carry only
``created`` and ``data``, as theirs did; the GPT image models' also ``background``, ``output_format``,
``quality``, ``size`` and ``usage``.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from llmts.errors import InvalidRequest, LlmtsError
from llmts.providers.base import ProviderCall, Reply, json_reply
from llmts.providers.openai.media_params import Params, bad
from llmts.providers.operations import operation_request, operation_result
from llmts.runtime.operations.images import ImagesInput
from llmts.schema.faults import FrameKind
from llmts.schema.media import MEDIA_LIMITS
from llmts.schema.neutral import Completion, NeutralRequest, OperationRequest
from llmts.schema.operations.images import ImagesResult, NeutralImage

__all__ = [
    "DEFAULT_IMAGE_MODEL",
    "IMAGE_STORE",
    "ImageAsk",
    "image_ask",
    "parse_image_edit",
    "parse_image_generation",
    "render_images",
    "serve_image_file",
]

DEFAULT_IMAGE_MODEL = "gpt-image-1.5"
# The session store namespace of images answered as ``url`` (bounded, cleared with the session).
IMAGE_STORE = "openai.images"
FILES_PATH = "/openai/v1/images/files/"
_MAX_EDGE = 3840
_MAX_PIXELS = 3840 * 2160
_AUTO_SIZE = (1024, 1024)
_BACKGROUNDS = ("transparent", "opaque", "auto")
_QUALITIES = ("low", "medium", "high", "xhigh", "max", "auto", "standard", "hd")
_EVENT_QUALITIES = frozenset({"low", "medium", "high", "xhigh", "max", "auto"})
_OUTPUT_FORMATS = ("png", "webp", "jpeg", "gif", "svg")
# GIF and SVG answers are whole files: no stream, no partial images (OpenAI's output_format documentation).
_UNSTREAMED_FORMATS = frozenset({"gif", "svg"})
_GIF_FRAMES = (2, 16, 9)  # frame_count: least, most, default
_GIF_FRAME_MS = 200  # frame_duration_ms default; rounded to 10 ms and capped at 655,350 ms
_GIF_MAX_FRAME_MS = 655_350
# Models whose answers are ``{"created", "data"}`` only, and whose response_format defaults to ``url``.
_LEGACY_MODEL_PREFIX = "dall-e-"
_SSE_HEADERS = [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-cache")]


@dataclass(frozen=True, slots=True)
class ImageAsk:
    """What an image request asks for, as the renderer needs it (parsed once per call, read twice)."""

    model: str
    prompt: str
    count: int
    width: int
    height: int
    size: str
    response_format: str
    output_format: str
    quality: str
    background: str
    stream: bool
    partial_images: int
    edit: bool
    frame_count: int  # GIF frames (0: not a GIF)
    frame_duration_ms: int

    @property
    def legacy(self) -> bool:
        """A DALL-E model: its answers carry only ``created`` and ``data``."""
        return self.model.startswith(_LEGACY_MODEL_PREFIX)


def _size(raw: str) -> tuple[int, int]:
    if raw == "auto":
        return _AUTO_SIZE
    width, sep, height = raw.partition("x")
    if sep and width.isdigit() and height.isdigit() and len(width) <= 5 and len(height) <= 5:
        w, h = int(width), int(height)
        if 1 <= w <= _MAX_EDGE and 1 <= h <= _MAX_EDGE and w * h <= _MAX_PIXELS:
            return w, h
    raise bad(
        f"Invalid value: '{raw[:64]}'. Supported values are 'auto' or WIDTHxHEIGHT up to "
        f"{_MAX_EDGE} pixels a side and {_MAX_PIXELS} pixels in all.",
        "size",
    )


def _gif_options(params: Params, output_format: str, edit: bool) -> tuple[int, int]:
    """(frame_count, frame_duration_ms) of a GIF answer; (0, 0) for another format, which must not name
    them."""
    if output_format != "gif":
        for name in ("frame_count", "frame_duration_ms"):
            if params.raw(name) is not None:
                raise bad(
                    f"'{name}' is only supported with output_format 'gif'.", name, "unsupported_parameter"
                )
        return 0, 0
    if edit and params.files("mask"):
        raise bad("GIF output does not support masks.", "mask", "unsupported_parameter")
    least, most, default = _GIF_FRAMES
    frames = params.integer("frame_count", default, least, most)
    delay = params.integer("frame_duration_ms", _GIF_FRAME_MS, 0, 2**31 - 1)
    return frames, min(_GIF_MAX_FRAME_MS, (delay + 5) // 10 * 10)


def _ask(params: Params, edit: bool) -> ImageAsk:
    prompt = params.text("prompt", required=True)
    size_text = params.text("size", default="auto")
    width, height = _size(size_text)
    stream = params.flag("stream")
    model = params.text("model", default=DEFAULT_IMAGE_MODEL) or DEFAULT_IMAGE_MODEL
    count = params.integer("n", 1, 1, MEDIA_LIMITS["images_per_response"])
    output_format = params.choice("output_format", _OUTPUT_FORMATS, "png")
    if output_format in _UNSTREAMED_FORMATS and stream:
        raise bad(f"output_format '{output_format}' does not support streaming or partial images.", "stream")
    if output_format == "svg" and count != 1:
        raise bad("output_format 'svg' requires n=1.", "n")
    frame_count, frame_duration_ms = _gif_options(params, output_format, edit)
    default_response = "url" if model.startswith(_LEGACY_MODEL_PREFIX) else "b64_json"
    return ImageAsk(
        model=model,
        prompt=prompt,
        count=count,
        width=width,
        height=height,
        size=f"{width}x{height}",
        response_format=params.choice("response_format", ("url", "b64_json"), default_response),
        output_format=output_format,
        quality=params.choice("quality", _QUALITIES, "auto"),
        background=params.choice("background", _BACKGROUNDS, "auto"),
        stream=stream,
        partial_images=params.integer("partial_images", 0, 0, 3) if stream else 0,
        edit=edit,
        frame_count=frame_count,
        frame_duration_ms=frame_duration_ms,
    )


def image_ask(call: ProviderCall) -> ImageAsk:
    """The parameters of an image request (generation: JSON body; edit: multipart form)."""
    if call.request.path.endswith("/edits"):
        return _ask(Params(form=call.request.form()), edit=True)
    return _ask(Params(call.request.json_object()), edit=False)


def _operation_request(call: ProviderCall, ask: ImageAsk, upload: bytes) -> OperationRequest:
    given = ImagesInput(
        ask.prompt,
        ask.count,
        ask.width,
        ask.height,
        ask.partial_images,
        upload,
        ask.output_format,
        ask.frame_count,
        ask.frame_duration_ms,
    )
    return operation_request("openai", "images", ask.model, given, stream=ask.stream)


def parse_image_generation(call: ProviderCall) -> NeutralRequest:
    return _operation_request(call, image_ask(call), b"")


def parse_image_edit(call: ProviderCall) -> NeutralRequest:
    ask = image_ask(call)
    params = Params(form=call.request.form())
    images = params.files("image")
    if not images:
        raise InvalidRequest(
            "Missing required parameter: 'image'.", code="missing_required_parameter", param="image"
        )
    # The edited images are drawn from the prompt and what was uploaded: a digest of every image and mask.
    digest = hashlib.sha256()
    for upload in (*images, *params.files("mask")):
        digest.update(hashlib.sha256(upload.data).digest())
    return _operation_request(call, ask, digest.digest())


# --- answers -------------------------------------------------------------------------------------


def _usage(completion: Completion, output_tokens: int) -> dict[str, Any]:
    usage = completion.usage
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"image_tokens": 0, "text_tokens": usage.input_tokens},
        "output_tokens": output_tokens,
        "total_tokens": usage.input_tokens + output_tokens,
    }


def _image_url(call: ProviderCall, image: NeutralImage, index: int) -> str:
    if image.url is not None:
        return image.url
    image_id = "img_" + (call.wire.id_for(f"image.{index}") if call.wire is not None else str(index))
    call.session.store.put(IMAGE_STORE, image_id, image.data, len(image.data))
    environ = call.request.environ
    host = (
        environ.get("HTTP_HOST") or f"{environ.get('SERVER_NAME', '127.0.0.1')}:{environ.get('SERVER_PORT')}"
    )
    base = f"{environ.get('wsgi.url_scheme', 'http')}://{host}"
    return f"{base}/sessions/{call.session.id}{FILES_PATH}{image_id}"


def _images(completion: Completion) -> tuple[NeutralImage, ...]:
    return operation_result(completion, ImagesResult).images


def render_images(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    ask = image_ask(call)
    images = _images(completion)
    tokens_each = max(1, completion.usage.output_tokens // max(1, len(images)))
    if request.stream:
        return _stream(ask, images, completion, tokens_each)
    data = []
    for index, image in enumerate(images):
        entry: dict[str, Any] = (
            {"url": _image_url(call, image, index)}
            if ask.response_format == "url" or image.url is not None
            else {"b64_json": base64.b64encode(image.data).decode()}
        )
        if image.revised_prompt is not None:
            entry["revised_prompt"] = image.revised_prompt
        data.append(entry)
    body: dict[str, Any] = {"created": completion.created_at, "data": data}
    if not ask.legacy:
        body["background"] = "opaque" if ask.background == "auto" else ask.background
        body["output_format"] = ask.output_format
        # The answer names the quality drawn: ``auto`` resolves to ``medium``.
        body["quality"] = ask.quality if ask.quality in _EVENT_QUALITIES - {"auto"} else "medium"
        body["size"] = ask.size
        body["usage"] = _usage(completion, completion.usage.output_tokens)
    return json_reply(200, body, [("x-request-id", call.request_id)])


def _event(kind: str, fields: dict[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **fields}) + b"\n\n"


def _stream(ask: ImageAsk, images: tuple[NeutralImage, ...], completion: Completion, tokens: int) -> Reply:
    prefix = "image_edit" if ask.edit else "image_generation"
    common = {
        "background": ask.background,
        "created_at": completion.created_at,
        "output_format": ask.output_format,  # png, webp or jpeg: GIF and SVG do not stream
        "quality": ask.quality if ask.quality in _EVENT_QUALITIES else "auto",
        "size": ask.size,
    }
    frames: list[bytes] = []
    kinds: list[FrameKind] = []
    for image in images:
        partials = image.partials or (image.data,) * ask.partial_images
        for index, partial in enumerate(partials[: ask.partial_images]):
            fields = {"b64_json": base64.b64encode(partial).decode(), **common, "partial_image_index": index}
            frames.append(_event(f"{prefix}.partial_image", fields))
            kinds.append(FrameKind.CONTENT)
        fields = {
            "b64_json": base64.b64encode(image.data).decode(),
            **common,
            "usage": _usage(completion, tokens),
        }
        frames.append(_event(f"{prefix}.completed", fields))
        kinds.append(FrameKind.OTHER)
    kinds[-1] = FrameKind.TERMINAL
    return Reply(200, list(_SSE_HEADERS), frames=frames, frame_kinds=kinds)


# --- serving url images ---------------------------------------------------------------------------

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"<?xml", "image/svg+xml"),
    (b"<svg", "image/svg+xml"),
)


def _media_type(data: bytes) -> str:
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "application/octet-stream"


def serve_image_file(call: ProviderCall) -> Reply:
    """``GET .../images/files/{id}``: an image answered as ``url``, while its session keeps it."""
    image_id = call.request.args["image_id"]
    data = call.session.store.get(IMAGE_STORE, image_id)
    if not isinstance(data, bytes):
        raise LlmtsError(
            f"No image found with id '{image_id[:64]}' (it expires with its session).",
            code="image_not_found",
            http_status=404,
        )
    headers = [
        ("Content-Type", _media_type(data)),
        ("Cache-Control", "private, max-age=3600"),
        # An image (SVG above all, which may carry script) is served from the dashboard's origin: never
        # run it or let a browser guess another type (the bytes may be a fixture's or a recording's).
        ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox"),
        ("X-Content-Type-Options", "nosniff"),
    ]
    return Reply(200, headers, data)
