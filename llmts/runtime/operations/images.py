"""The ``images`` operation (docs/images.md): its input, its fixture's images, the fit check and the
generated images (llmts/runtime/media/png.py and image_codecs.py draw them)."""

from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass
from typing import ClassVar

from llmts.errors import FixtureMismatch, InvalidRequest
from llmts.runtime.media.image_codecs import IMAGE_FORMATS, draw_image
from llmts.runtime.media.png import PNG_SIGNATURE
from llmts.runtime.operations.unit import OperationUnit, answer
from llmts.schema.media import MEDIA_LIMITS, decode_b64
from llmts.schema.neutral import OperationInput, ScriptedOutput
from llmts.schema.operations.images import ImagesFixture, ImagesResult, NeutralImage

__all__ = ["GENERATED_IMAGE_FORMATS", "IMAGES", "ImagesInput"]

# Every format OpenAI answers; all but png and svg need the extra llmts[media] (encoders).
GENERATED_IMAGE_FORMATS = IMAGE_FORMATS
# Output tokens: an image counts one per 1,024 pixels (a 1024x1024 image: 1,024).
_PIXELS_PER_TOKEN = 1024
_MAX_PIXELS = MEDIA_LIMITS["generated_image_pixels"]


@dataclass(frozen=True, slots=True)
class ImagesInput(OperationInput):
    """The prompt; how many images (``n``; 0 when the wire names no number), their size in pixels (0:
    the default, 1024), the partial images a stream shows of each, a digest of the uploaded images of an
    edit, the format asked for, and a GIF's frames and each frame's delay in milliseconds (0: not a GIF)."""

    prompt: str
    count: int = 1
    width: int = 0
    height: int = 0
    partial_images: int = 0
    upload: bytes = b""
    output_format: str = ""
    frame_count: int = 0
    frame_duration_ms: int = 0

    recorded_options: ClassVar[tuple[str, ...]] = (
        "count",
        "width",
        "height",
        "partial_images",
        "output_format",
        "frame_count",
        "frame_duration_ms",
    )

    def texts(self) -> tuple[str, ...]:
        return (self.prompt,)

    def uploaded(self) -> bytes:
        return self.upload


def _image_tokens(width: int, height: int) -> int:
    return max(1, math.ceil(width * height / _PIXELS_PER_TOKEN))


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data.startswith(PNG_SIGNATURE) and len(data) >= 24 and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return width, height
    return None


def _compile(fixture: ImagesFixture) -> ScriptedOutput:
    images, tokens = [], 0
    for image in fixture:
        data = decode_b64(image.b64_json) if image.b64_json is not None else b""
        size = _png_size(data)
        tokens += _image_tokens(*size) if size is not None else _image_tokens(1024, 1024)
        images.append(NeutralImage(data=data, url=image.url, revised_prompt=image.revised_prompt))
    return answer("images", ImagesResult(images=tuple(images)), tokens)


def _fits(request: ImagesInput, output: ScriptedOutput, where: str, stream: bool) -> None:
    """One image per image asked for (``n``), and bytes for a stream."""
    result = output.result
    if not isinstance(result, ImagesResult):
        return
    if request.count and len(result.images) != request.count:
        raise FixtureMismatch(
            f"{where} scripts {len(result.images)} image(s) but the request asks for {request.count} (n)",
            param="n",
        )
    if stream and any(not image.data for image in result.images):
        raise FixtureMismatch(
            f"{where} scripts an image by url, but streamed image events carry b64_json", param="stream"
        )


def _generate(request: ImagesInput, seed: str) -> ScriptedOutput:
    """``count`` images of the requested size and ``output_format``, each from (seed, prompt, size, index,
    uploads' digest); a stream's partial images reveal the cells row by row, a GIF's frames cell by cell
    (llmts/runtime/media/image_codecs.py)."""
    fmt = request.output_format or "png"
    if fmt not in GENERATED_IMAGE_FORMATS:
        raise InvalidRequest(
            f"llmts generates images as {', '.join(GENERATED_IMAGE_FORMATS)}; output_format {fmt[:32]} needs "
            "an images fixture with the bytes to return",
            code="unsupported_output_format",
            param="output_format",
        )
    width, height = request.width or 1024, request.height or 1024
    frames = max(1, request.frame_count) if fmt == "gif" else 1
    pixels = width * height * max(1, request.count) * (1 + request.partial_images) * frames
    if pixels > _MAX_PIXELS:
        raise InvalidRequest(
            f"the request asks llmts to draw {pixels} pixels (n images of {width}x{height}, their partial "
            f"images and GIF frames); llmts draws at most {_MAX_PIXELS} per request (generated_image_pixels)",
            code="invalid_value",
            param="n",
        )
    images = []
    for index in range(max(1, request.count)):  # count 0: the wire names no number; one image
        key = (
            b"\x00".join(
                (
                    seed.encode(),
                    request.prompt.encode("utf-8", "surrogatepass"),
                    f"{width}x{height}:{index}".encode(),
                )
            )
            + hashlib.sha256(request.upload).digest()
        )
        partials = tuple(
            draw_image(fmt, width, height, key, reveal=(step + 1) / (request.partial_images + 1))
            for step in range(request.partial_images)
        )
        data = draw_image(
            fmt, width, height, key, frame_count=frames, frame_duration_ms=request.frame_duration_ms
        )
        images.append(NeutralImage(data=data, partials=partials))
    tokens = _image_tokens(width, height) * len(images)
    return answer("images", ImagesResult(images=tuple(images)), tokens)


def _content_frames(request: ImagesInput, output: ScriptedOutput) -> int | None:
    """A stream's partial images."""
    result = output.result
    return len(result.images) * request.partial_images if isinstance(result, ImagesResult) else None


IMAGES = OperationUnit(
    "images", ImagesInput, "images", _compile, _fits, _generate, content_frames=_content_frames
)
