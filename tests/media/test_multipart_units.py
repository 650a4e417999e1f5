"""``parse_multipart`` in memory: fields and files, repeated ``image[]`` parts, and every malformed body a
clear 400 (never a werkzeug exception or a temporary file)."""

from __future__ import annotations

import pytest

from llmts.errors import InvalidRequest
from llmts.providers.base import ProviderRequest
from llmts.server.http.multipart import MULTIPART_LIMITS, parse_multipart

BOUNDARY = "llmts-boundary"


def _request(body: bytes, content_type: str | None = None) -> ProviderRequest:
    default = f"multipart/form-data; boundary={BOUNDARY}"
    environ = {"CONTENT_TYPE": default if content_type is None else content_type}
    return ProviderRequest("POST", "/openai/v1/images/edits", {}, body, environ, parse_multipart)


def _part(name: str, value: bytes, filename: str | None = None, content_type: str | None = None) -> bytes:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename is not None else "")
    head = f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n"
    if content_type:
        head += f"Content-Type: {content_type}\r\n"
    return head.encode() + b"\r\n" + value + b"\r\n"


def _body(*parts: bytes) -> bytes:
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


def test_fields_and_files_in_body_order() -> None:
    body = _body(
        _part("prompt", "a red fox ü".encode()),
        _part("image[]", b"\x89PNG one", "a.png", "image/png"),
        _part("image[]", b"\x89PNG two", "b.png", "image/png"),
        _part("n", b"2"),
    )
    form = _request(body).form()
    assert form.field("prompt") == "a red fox ü" and form.field("n") == "2" and form.field("size") is None
    assert [(u.filename, u.content_type, u.data) for u in form.files["image[]"]] == [
        ("a.png", "image/png", b"\x89PNG one"),
        ("b.png", "image/png", b"\x89PNG two"),
    ]


def test_the_form_is_parsed_once() -> None:
    request = _request(_body(_part("prompt", b"x")))
    assert request.form() is request.form()


@pytest.mark.parametrize(
    ("content_type", "body", "message"),
    [
        ("application/json", b'{"prompt": "x"}', "expected multipart/form-data"),
        ("", b"", "Invalid Content-Type header (none)"),
        ("multipart/form-data", _body(_part("prompt", b"x")), "needs a boundary"),
        ("multipart/form-data; boundary=" + "b" * 71, b"", "needs a boundary"),
        (None, b"", "could not be parsed"),
        (None, b"no boundary here at all", "could not be parsed"),
        (None, _body(_part("prompt", b"x"))[:-10], "could not be parsed"),
        ("multipart/form-data; boundary=other", _body(_part("prompt", b"x")), "could not be parsed"),
        (None, _body(*(_part(f"f{i}", b"x") for i in range(MULTIPART_LIMITS["form_parts"] + 1))), "parts"),
        (None, _body(_part("prompt", b"x" * (MULTIPART_LIMITS["form_field_bytes"] + 1))), "text field"),
    ],
)
def test_malformed_bodies_are_400s(content_type: str | None, body: bytes, message: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        _request(body, content_type).form()
    assert caught.value.http_status == 400 and message in caught.value.message


def test_a_large_file_part_is_kept_in_memory() -> None:
    data = bytes(range(256)) * 8192  # 2 MiB: over the text-field bound, fine for a file
    form = _request(_body(_part("file", data, "speech.wav", "audio/wav"))).form()
    assert form.files["file"][0].data == data


def test_without_a_parser_the_request_refuses_forms() -> None:
    request = ProviderRequest("POST", "/x", {}, b"", {})
    with pytest.raises(InvalidRequest):
        request.form()
