"""``multipart/form-data`` bodies (OpenAI's image edits and audio uploads), parsed with werkzeug's
multipart parser, bounded.

The body is already in memory and bounded by ``--max-body-bytes`` (``read_body``); the parser gets that
bound as ``content_length``, keeps file parts in memory (never in temporary files), and refuses more than
``MULTIPART_LIMITS["form_parts"]`` parts or a text field over ``MULTIPART_LIMITS["form_field_bytes"]``.
Adapters receive the result through ``ProviderRequest.form()`` (``llmts/providers/base.py``): the
providers layer never imports werkzeug (docs/architecture.md, "Layers").
"""

from __future__ import annotations

import io
from typing import IO

from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.formparser import MultiPartParser
from werkzeug.http import parse_options_header

from llmts.errors import InvalidRequest
from llmts.providers.base import MultipartForm, ProviderRequest, Upload

__all__ = ["MULTIPART_LIMITS", "parse_multipart"]

# Documented in docs/configuration.md ("Limits"); each overflow is a 400 in the provider's envelope.
MULTIPART_LIMITS: dict[str, int] = {
    "form_parts": 64,
    # The largest text field (an image prompt of 32,000 characters is at most 128 KB of UTF-8). At least
    # the parser's read size: werkzeug applies the bound to its buffer.
    "form_field_bytes": 1024 * 1024,
}
_READ_SIZE = 64 * 1024


def _in_memory(
    total_content_length: int | None,
    content_type: str | None,
    filename: str | None,
    content_length: int | None = None,
) -> IO[bytes]:
    """werkzeug's stream factory: file parts stay in memory (the body already is, bounded)."""
    return io.BytesIO()


def parse_multipart(request: ProviderRequest) -> MultipartForm:
    """The request's ``multipart/form-data`` body, or a 400 saying what is wrong with it."""
    content_type = request.header("Content-Type") or ""
    mimetype, options = parse_options_header(content_type)
    if mimetype != "multipart/form-data":
        shown = mimetype or "none"
        raise InvalidRequest(
            f"Invalid Content-Type header ({shown}), expected multipart/form-data.",
            code="invalid_content_type",
        )
    boundary = options.get("boundary", "")
    if not boundary or len(boundary) > 70:  # RFC 2046: 1 to 70 characters
        raise InvalidRequest(
            "the multipart/form-data Content-Type needs a boundary of 1 to 70 characters",
            code="invalid_multipart",
        )
    parser = MultiPartParser(
        stream_factory=_in_memory,
        max_form_memory_size=MULTIPART_LIMITS["form_field_bytes"],
        buffer_size=_READ_SIZE,
        max_form_parts=MULTIPART_LIMITS["form_parts"],
    )
    body = request.body
    try:
        fields, files = parser.parse(io.BytesIO(body), boundary.encode("latin-1", "replace"), len(body))
    except RequestEntityTooLarge:
        raise InvalidRequest(
            f"the multipart body has more than {MULTIPART_LIMITS['form_parts']} parts or a text field over "
            f"{MULTIPART_LIMITS['form_field_bytes']} bytes",
            code="invalid_multipart",
        ) from None
    except ValueError:
        raise InvalidRequest(
            "the multipart/form-data body could not be parsed "
            "(it does not follow its boundary or ends early)",
            code="invalid_multipart",
        ) from None
    return MultipartForm(
        fields={name: tuple(values) for name, values in fields.lists() if name is not None},
        files={
            name: tuple(
                Upload(
                    filename=storage.filename or "",
                    content_type=storage.mimetype or "",
                    data=storage.stream.read(),
                )
                for storage in storages
            )
            for name, storages in files.lists()
            if name is not None
        },
    )
