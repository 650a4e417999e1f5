"""The ``images`` operation's schema: its row, its fixture (scripted images: bytes or a URL, validated
and bounded by ``MEDIA_LIMITS``) and its compiled answer (docs/images.md)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field, model_validator

from llmts.schema.media import MEDIA_LIMITS, MediaB64
from llmts.schema.model_base import STRICT, OmitsNone
from llmts.schema.operation_row import OperationResult, OperationRow

__all__ = ["IMAGES_ROW", "ImageFixture", "ImagesFixture", "ImagesResult", "NeutralImage"]

IMAGES_ROW = OperationRow("images", ("images",))


def _http_url(value: str) -> str:
    limit = MEDIA_LIMITS["media_url_chars"]
    if len(value) > limit:
        raise ValueError(f"must be at most {limit} characters")
    scheme, sep, rest = value.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest or any(c.isspace() for c in value):
        raise ValueError("must be an absolute http(s) URL")
    return value


class ImageFixture(OmitsNone):
    """One scripted image: its bytes (``b64_json``) or a URL, and an optional revised prompt."""

    model_config = STRICT

    b64_json: MediaB64 | None = None
    url: Annotated[str, AfterValidator(_http_url)] | None = None
    revised_prompt: str | None = Field(default=None, max_length=MEDIA_LIMITS["transcript_chars"])

    @model_validator(mode="after")
    def _one_source(self) -> ImageFixture:
        if (self.b64_json is None) == (self.url is None):
            raise ValueError("an image needs exactly one of b64_json and url")
        return self


# The images of one answer, in order (one per image the request asks for: ``n``).
ImagesFixture = Annotated[
    list[ImageFixture], Field(min_length=1, max_length=MEDIA_LIMITS["images_per_response"])
]


class NeutralImage(BaseModel):
    """One image of an answer: its bytes, or a URL given as is; ``partials`` are a stream's previews
    (generated images have them; a scripted image's previews are the image itself)."""

    model_config = STRICT

    data: bytes = b""
    url: str | None = None
    revised_prompt: str | None = None
    partials: tuple[bytes, ...] = ()


class ImagesResult(OperationResult):
    """The images of one answer, in order."""

    images: tuple[NeutralImage, ...]
