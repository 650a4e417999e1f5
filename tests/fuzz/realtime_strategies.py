"""Hypothesis strategies for the realtime fuzz (tests/fuzz/test_fuzz_realtime.py): hostile upgrade requests,
hostile frames, and hostile events for OpenAI Realtime and Gemini Live (mutated seeds, every client event
type with arbitrary fields, deep nesting, arbitrary JSON and bytes)."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from hypothesis import strategies as st

from llmts.providers.adapters import ADAPTERS
from llmts.providers.openai.realtime.client_events import CLIENT_EVENTS
from tests.fuzz.harness import CONTROL_KEY, FORGED
from tests.fuzz.strategies import HOSTILE_VALUES, JSON_VALUES, mutated, session_prefixed
from tests.fuzz.websocket_wire import (
    BINARY,
    CLOSE,
    CONTINUATION,
    PING,
    PONG,
    TEXT,
    close_payload,
    deflate,
    frame,
    upgrade_request,
)

__all__ = [
    "GEMINI_SETUP",
    "HOSTILE_FRAMES",
    "MODEL",
    "frames",
    "gemini_events",
    "handshakes",
    "openai_events",
    "realtime_paths",
]

MODEL = "gpt-realtime"
_ANY = re.compile(r"<any\(([^)]*)\):[^>]*>")
# Each adapter's WebSocket rules, every ``any(...)`` argument expanded: (namespace, path).
_RULES = [(adapter.namespace, route.rule) for adapter in ADAPTERS for route in adapter.realtime_routes]


def realtime_paths() -> list[tuple[str, str]]:
    paths: list[tuple[str, str]] = []
    for namespace, rule in _RULES:
        expanded = [rule]
        while any(_ANY.search(path) for path in expanded):
            expanded = [
                path[: match.start()] + choice + path[match.end() :]
                for path in expanded
                if (match := _ANY.search(path)) is not None
                for choice in match.group(1).split(",")
            ]
        paths += [(namespace, path) for path in expanded]
    return paths


_PATHS = realtime_paths()
_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")) | st.sampled_from(["\t", "\x1b", "\x7f"]),
    max_size=40,
)
_VALID_KEY = base64.b64encode(b"0123456789abcdef").decode()

# --- upgrade requests -------------------------------------------------------------------------------------

_HANDSHAKE_VALUES: dict[str, list[str | None]] = {
    "Upgrade": ["websocket", "WebSocket", "websocket, h2c", "h2c", "", None],
    "Connection": ["Upgrade", "keep-alive, Upgrade", "close", "", None],
    "Sec-WebSocket-Key": [
        _VALID_KEY,
        None,
        "",
        "not base64!",
        base64.b64encode(b"x" * 15).decode(),
        base64.b64encode(b"x" * 17).decode(),
        "é" * 22 + "==",
        " " + _VALID_KEY + " ",
    ],
    "Sec-WebSocket-Version": ["13", "8", "13, 8", "", None, "\u0661\u0663", "13" * 40],
    "Sec-WebSocket-Protocol": [
        "realtime",
        "realtime, openai-insecure-api-key.sk-right",
        "openai-insecure-api-key.sk-wrong",
        "openai-insecure-api-key.",
        "é",
        ",,",
        "x" * 5000,
        "\n" + FORGED,
    ],
    "Sec-WebSocket-Extensions": [
        "permessage-deflate",
        "permessage-deflate; client_max_window_bits",
        "permessage-deflate; client_max_window_bits=abc",
        "permessage-deflate; client_max_window_bits=7",
        "permessage-deflate; server_max_window_bits=16",
        "permessage-deflate; server_max_window_bits",
        "permessage-deflate; client_max_window_bits=99999999999999999999",
        "permessage-deflate; client_no_context_takeover; server_no_context_takeover",
        "permessage-deflate; server_no_context_takeover=1",
        "permessage-deflate; unknown=1",
        "permessage-deflate;;;",
        "permessage-deflate, permessage-deflate; client_max_window_bits=abc",
        "x-webkit-deflate-frame",
        "é",
        ";",
    ],
    "Authorization": [
        "Bearer sk-right",
        "Bearer sk-wrong",
        f"Bearer {CONTROL_KEY}",
        "Bearer é",
        "Basic dQpGT1JHRUQ6cHc=",
    ],
    "api-key": ["sk-right", "sk-wrong", CONTROL_KEY],
    "x-goog-api-key": ["sk-right", "sk-wrong", ""],
    "Host": ["127.0.0.1", "localhost:1", None, "", "evil.example"],
    "Origin": ["http://127.0.0.1", "null"],
    "X-Stainless-Lang": ["python"],
    "User-Agent": ["\x1b[31m" + FORGED],
    "X-Huge": ["x" * 60_000, "x" * 70_000, "é" * 20_000],
}


def _query(sessions: list[str]) -> st.SearchStrategy[str]:
    names = ["model", "api-version", "deployment", "key", "api-key", "intent", "access_token"]
    values = st.sampled_from(
        [MODEL, "2025-04-01-preview", "sk-right", "sk-wrong", "", "%ff", "%0a" + FORGED, *sessions]
    )
    pair = st.tuples(st.sampled_from(names), values | _TEXT.map(lambda text: text.replace("&", "")))
    usual = st.sampled_from([f"?model={MODEL}", f"?model={MODEL}&api-version=2025-04-01-preview", ""])
    return usual | st.lists(pair, max_size=4).map(lambda pairs: "?" + "&".join(f"{k}={v}" for k, v in pairs))


def handshakes(sessions: list[str]) -> st.SearchStrategy[tuple[str, str, str, bytes]]:
    """(namespace, method, target, upgrade request): a valid handshake's headers with some replaced, left
    out or added, to a realtime route (sometimes damaged) under the root or a session."""
    values = {
        name: st.sampled_from(choices) if name == "X-Huge" else st.sampled_from(choices) | _TEXT
        for name, choices in _HANDSHAKE_VALUES.items()
    }
    values["X-Llm-Test-Server-Session"] = st.sampled_from(sessions) | _TEXT
    headers = st.lists(st.sampled_from(sorted(values)), max_size=5, unique=True).flatmap(
        lambda names: st.fixed_dictionaries({name: values[name] for name in names})
    )
    route = st.sampled_from(_PATHS)
    damage = st.sampled_from(["", "", "", "", "/", "//", "/x", "%00", "/%0a" + FORGED, "/.."])
    return st.builds(
        _handshake,
        route,
        session_prefixed(st.just(""), sessions),
        damage,
        _query(sessions),
        headers,
        st.sampled_from(["GET"] * 8 + ["POST", "HEAD", "PUT", "OPTIONS"]),
        st.sampled_from(["1.1"] * 8 + ["1.0"]),
    )


def _handshake(
    route: tuple[str, str],
    prefix: str,
    damage: str,
    query: str,
    headers: dict[str, str | None],
    method: str,
    version: str,
) -> tuple[str, str, str, bytes]:
    namespace, path = route
    target = prefix.rstrip("/") + path + damage + query
    return namespace, method, target, upgrade_request(target, headers, method=method, version=version)


# --- frames -----------------------------------------------------------------------------------------------

_CLOSE_CODES = [None, 0, 999, 1000, 1001, 1004, 1005, 1006, 1011, 1015, 1016, 2999, 3000, 4999, 5000, 65535]
_PAYLOADS = st.one_of(
    st.binary(max_size=200),
    st.sampled_from(
        [
            b'{"type": "response.create"}',
            b'{"type": "session.update", "session": {"type": "realtime"}}',
            b'{"setup": {"model": "models/gemini-live-2.5-flash-preview"}}',
            b"\xff\xfe",
            b"caf\xc3",  # a UTF-8 sequence cut short
            b"\xed\xa0\x80",  # a UTF-8-encoded surrogate
            "é".encode() * 100,
            b"x" * 126,
        ]
    ),
    st.tuples(st.sampled_from(_CLOSE_CODES), st.sampled_from([b"", b"bye", b"\xff", "é".encode() * 62])).map(
        lambda pair: close_payload(*pair)
    ),
)


@st.composite
def _one_frame(draw: st.DrawFn, compressed: bool) -> bytes:
    opcode = draw(st.sampled_from([TEXT, TEXT, BINARY, CONTINUATION, CLOSE, PING, PONG]) | st.integers(0, 15))
    payload = draw(_PAYLOADS)
    rsv = draw(st.sampled_from([0, 0, 0, 0, 4]) | st.integers(0, 7))
    if rsv & 4 and compressed and draw(st.booleans()):
        payload = draw(st.sampled_from([deflate(payload), payload]))
    length = None
    if draw(st.integers(0, 9)) == 0:  # a length that lies: shorter, longer, or absurd
        length = draw(st.sampled_from([0, len(payload) + 1, max(0, len(payload) - 1), 2**63, 2**64 - 1]))
    return frame(
        opcode,
        payload,
        fin=draw(st.sampled_from([True, True, True, False])),
        rsv=rsv,
        masked=draw(st.sampled_from([True] * 9 + [False])),
        length=length,
        width=draw(st.sampled_from([None] * 8 + [16, 64])),
    )


# Hand-picked hostile frames: (the bytes, whether permessage-deflate is negotiated, the close code the
# server answers with; None: the connection stays open). tests/fuzz/test_fuzz_realtime.py checks each.
HOSTILE_FRAMES: dict[str, tuple[bytes, bool, int | None]] = {
    "unmasked": (frame(TEXT, b'{"type": "input_audio_buffer.clear"}', masked=False), False, 1002),
    "reserved data opcode": (frame(0x3, b"x"), False, 1002),
    "reserved control opcode": (frame(0xB, b"x"), False, 1002),
    "RSV2": (frame(TEXT, b"{}", rsv=2), False, 1002),
    "RSV1 without deflate": (frame(TEXT, b"{}", rsv=4), False, 1002),
    "fragmented ping": (frame(PING, b"x", fin=False), False, 1002),
    "ping over 125 bytes": (frame(PING, b"x" * 126), False, 1002),
    "continuation first": (frame(CONTINUATION, b"x"), False, 1002),
    "message inside a message": (frame(TEXT, b"{", fin=False) + frame(TEXT, b"}"), False, 1002),
    "ping between fragments": (
        frame(TEXT, b"{", fin=False) + frame(PING, b"p") + frame(CONTINUATION, b"}"),
        False,
        None,
    ),
    "UTF-8 split over fragments": (
        frame(TEXT, b'"\xce', fin=False) + frame(CONTINUATION, b'\xbb"'),
        False,
        None,
    ),
    "invalid UTF-8": (frame(TEXT, b"\xff"), False, 1007),
    "UTF-8 cut short": (frame(TEXT, b"caf\xc3"), False, 1007),
    "UTF-8 surrogate": (frame(TEXT, b"\xed\xa0\x80"), False, 1007),
    "one-byte close": (frame(CLOSE, b"\x03"), False, 1002),
    "close reason not UTF-8": (frame(CLOSE, close_payload(1000, b"\xff")), False, 1007),
    "close code 999": (frame(CLOSE, close_payload(999)), False, 1002),
    "close code 1005": (frame(CLOSE, close_payload(1005)), False, 1002),
    "close code 1006": (frame(CLOSE, close_payload(1006)), False, 1002),
    "close code 1015": (frame(CLOSE, close_payload(1015)), False, 1002),
    "close code 5000": (frame(CLOSE, close_payload(5000)), False, 1002),
    "close 1000": (frame(CLOSE, close_payload(1000, b"bye")), False, 1000),
    "close 4000": (frame(CLOSE, close_payload(4000)), False, 4000),
    "close without a code": (frame(CLOSE), False, 1000),
    "16-bit length for 2 bytes": (frame(TEXT, b"{}", width=16), False, 1002),
    "64-bit length for 2 bytes": (frame(TEXT, b"{}", width=64), False, 1002),
    "64-bit length, top bit set": (frame(TEXT, b"", length=2**63), False, 1002),
    "over the message limit": (
        frame(TEXT, b"x" * 700_000, fin=False) + frame(CONTINUATION, b"x" * 700_000),
        False,
        1009,
    ),
    "deflate bomb": (frame(TEXT, deflate(b"\x00" * 3_000_000), rsv=4), True, 1009),
    "not deflate data": (frame(TEXT, b"\x01\x02\x03 not deflate", rsv=4), True, 1007),
    "compressed ping": (frame(PING, deflate(b"p"), rsv=4), True, 1002),
    "compressed continuation": (
        frame(TEXT, deflate(b"{}"), rsv=4, fin=False) + frame(CONTINUATION, b"", rsv=4),
        True,
        1002,
    ),
    "compressed message": (frame(TEXT, deflate(b'{"type": "input_audio_buffer.clear"}'), rsv=4), True, None),
    "zero bytes": (b"\x00" * 64, False, 1002),
    "HTTP on the WebSocket": (b"GET / HTTP/1.1\r\n\r\n", False, 1002),
}


def frames(compressed: bool) -> st.SearchStrategy[bytes]:
    """One to four hostile frames (or a hand-picked hostile sequence, or raw bytes) in one write."""
    return st.one_of(
        st.lists(_one_frame(compressed), min_size=1, max_size=4).map(b"".join),
        st.lists(_one_frame(compressed), min_size=1, max_size=4).map(b"".join),
        st.sampled_from([data for data, _, _ in HOSTILE_FRAMES.values()]),
        st.binary(min_size=1, max_size=64),
    )


# --- OpenAI Realtime events -------------------------------------------------------------------------------

_PCM = base64.b64encode(bytes(range(256)) * 8).decode()
_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
OPENAI_SEEDS: list[dict[str, Any]] = [
    {
        "type": "session.update",
        "event_id": "evt_1",
        "session": {
            "type": "realtime",
            "instructions": "Be brief.",
            "output_modalities": ["text"],
            "tools": [_TOOL],
            "tool_choice": "auto",
            "max_output_tokens": 100,
            "audio": {
                "input": {
                    "format": {"type": "audio/pcm", "rate": 24000},
                    "turn_detection": {"type": "server_vad", "silence_duration_ms": 200},
                    "transcription": {"model": "whisper-1"},
                },
                "output": {"format": {"type": "audio/pcmu"}, "voice": "alloy"},
            },
        },
    },
    {"type": "input_audio_buffer.append", "audio": _PCM},
    {"type": "input_audio_buffer.commit"},
    {"type": "input_audio_buffer.clear"},
    {"type": "output_audio_buffer.clear"},
    {
        "type": "conversation.item.create",
        "item": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    },
    {
        "type": "conversation.item.create",
        "previous_item_id": "root",
        "item": {
            "id": "item_1",
            "type": "message",
            "role": "user",
            "content": [{"type": "input_audio", "audio": _PCM}, {"type": "input_image", "image_url": "x"}],
        },
    },
    {
        "type": "conversation.item.create",
        "item": {"type": "function_call_output", "call_id": "c", "output": "1"},
    },
    {"type": "conversation.item.retrieve", "item_id": "item_1"},
    {"type": "conversation.item.truncate", "item_id": "item_1", "content_index": 0, "audio_end_ms": 10},
    {"type": "conversation.item.delete", "item_id": "item_1"},
    {"type": "response.create", "response": {"output_modalities": ["text"]}},
    {
        "type": "response.create",
        "response": {
            "output_modalities": ["audio"],
            "conversation": "none",
            "instructions": "x",
            "metadata": {"k": "v"},
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}],
            "tools": [_TOOL],
        },
    },
    {"type": "response.cancel", "response_id": "resp_1"},
]


def _nested(depth: int) -> bytes:
    return b'{"type": "session.update", "session": ' + b'{"a": ' * depth + b"1" + b"}" * depth + b"}"


_ODD_EVENTS = [
    b"",
    b"{",
    b"[]",
    b"null",
    b'"response.create"',
    b"1e999999",
    b'{"type": null}',
    b'{"type": "response.create", "type": "session.update"}',
    b"[" * 100_000 + b"]" * 100_000,
    _nested(63),
    _nested(64),
    _nested(300),
    b'{"type": "conversation.item.create", "item": {"type": "message", "role": "user", "content": [{"type": '
    b'"input_text", "text": "' + b"x" * 900_000 + b'"}]}}',
    b'{"type": "input_audio_buffer.append", "audio": "' + b"A" * 900_000 + b'"}',
    b'{"type": "input_audio_buffer.append", "audio": "not base64 \xc3\xa9"}',
    json.dumps({"type": "response.create", "event_id": "\n" + FORGED}).encode(),
]


def _typed_event(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    fields, _ = CLIENT_EVENTS[kind]
    optional = {name: HOSTILE_VALUES for name in (*fields, "event_id", "fuzz_unknown")}
    return st.fixed_dictionaries({"type": st.just(kind)}, optional=optional)


def _encode(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _as_frame(payload: bytes, binary: bool) -> bytes:
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError:
        binary = True  # invalid text belongs to the frames family; here it travels as binary
    return frame(BINARY if binary else TEXT, payload)


def _events(seeds: list[dict[str, Any]], extra: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    payload = st.one_of(
        mutated(seeds).map(_encode),
        mutated(seeds).map(_encode),
        st.sampled_from(seeds).map(_encode),
        extra,
        JSON_VALUES.map(_encode),
        st.binary(max_size=200),
    )
    one = st.builds(_as_frame, payload, st.sampled_from([False] * 5 + [True]))
    return st.lists(one, min_size=1, max_size=3).map(b"".join)


def openai_events() -> st.SearchStrategy[bytes]:
    """One to three OpenAI client events as text (sometimes binary) frames."""
    typed = st.sampled_from(sorted(CLIENT_EVENTS)).flatmap(_typed_event).map(_encode)
    return _events(OPENAI_SEEDS, typed | typed | st.sampled_from(_ODD_EVENTS))


# --- Gemini Live messages ---------------------------------------------------------------------------------

GEMINI_SETUP: dict[str, Any] = {
    "setup": {
        "model": "models/gemini-live-2.5-flash-preview",
        "generationConfig": {"responseModalities": ["TEXT"]},
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": [{"functionDeclarations": [{"name": "get_weather", "description": "The weather"}]}],
        "realtimeInputConfig": {"automaticActivityDetection": {"disabled": False, "silenceDurationMs": 200}},
        "inputAudioTranscription": {},
        "outputAudioTranscription": {},
    }
}
GEMINI_SEEDS: list[dict[str, Any]] = [
    GEMINI_SETUP,
    {
        "setup": {
            "model": "models/gemini-live-2.5-flash-preview",
            "generationConfig": {"responseModalities": ["AUDIO"]},
        }
    },
    {"clientContent": {"turns": [{"role": "user", "parts": [{"text": "hi"}]}], "turnComplete": True}},
    {"realtimeInput": {"audio": {"data": _PCM, "mimeType": "audio/pcm;rate=16000"}}},
    {"realtimeInput": {"text": "hi"}},
    {"realtimeInput": {"activityStart": {}}},
    {"realtimeInput": {"activityEnd": {}, "audioStreamEnd": True}},
    {"realtimeInput": {"mediaChunks": [{"data": _PCM, "mimeType": "audio/pcm"}]}},
    {"toolResponse": {"functionResponses": [{"id": "call_1", "name": "get_weather", "response": {"t": 1}}]}},
    {"contextUpdate": {"systemInstruction": {"parts": [{"text": "x"}]}, "tools": {"tools": []}}},
]
_ODD_MESSAGES = [
    b"",
    b"{",
    b"[]",
    b"{}",
    b'{"setup": null}',
    b'{"setup": {}, "clientContent": {}}',
    b'{"' + FORGED.encode() + b'\\n": 1}',
    b'{"setup": ' + b'{"a": ' * 300 + b"1" + b"}" * 301,
    b"[" * 100_000 + b"]" * 100_000,
]


def gemini_events() -> st.SearchStrategy[bytes]:
    """One to three Gemini Live client messages as text (sometimes binary) frames."""
    return _events(GEMINI_SEEDS, st.sampled_from(_ODD_MESSAGES))
