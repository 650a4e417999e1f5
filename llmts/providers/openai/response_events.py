"""The Responses API's SSE event frames: rising sequence numbers and frame kinds for delivery plans."""

from __future__ import annotations

from typing import Any

import orjson

from llmts.schema.faults import FrameKind

__all__ = ["ResponseEvents"]


class ResponseEvents:
    """Frames with rising sequence numbers; each payload is the JSON after ``type``/``sequence_number``.

    ``kinds`` tells delivery plans and evidence what each frame is: text deltas are the counted content,
    ``response.completed`` the terminal marker.
    """

    __slots__ = ("frames", "kinds")

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.kinds: list[FrameKind] = []

    def add(self, kind: bytes, rest: bytes, frame_kind: FrameKind = FrameKind.OTHER) -> None:
        self.kinds.append(frame_kind)
        self.frames.append(
            b"event: "
            + kind
            + b'\ndata: {"type":"'
            + kind
            + b'","sequence_number":'
            + str(len(self.frames)).encode()
            + rest
            + b"}\n\n"
        )

    def add_fields(
        self, kind: bytes, fields: dict[str, Any], frame_kind: FrameKind = FrameKind.OTHER
    ) -> None:
        self.add(kind, b"," + orjson.dumps(fields)[1:-1] if fields else b"", frame_kind)
