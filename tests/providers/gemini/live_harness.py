"""A stand-in driver for the sans-IO Gemini Live protocol, so google-genai's own ``live.connect`` session
serializes every client message and parses every server message, without a server or a socket.

``SdkLoop`` replaces the websocket google-genai opens (``google.genai.live.ws_connect``) with an in-memory
one bound to a ``GeminiLiveProtocol``, and acts as the server's driver does (llmts/providers/realtime.py):
a reaction's events are written at once, a cancel interrupts the turn in flight (its undelivered events
are dropped and ``interrupted()`` is written), a turn is answered by the next scripted answer, a close
ends the connection. A turn's events are "written" one at a time as the client reads them, so a client
that sends while reading interrupts a turn in flight, as over a real socket.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import itertools
import json
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from google import genai
from google.genai import _live_converters, live, types
from websockets.exceptions import ConnectionClosedError
from websockets.frames import Close

from llmts.client.tls import default_client_context
from llmts.errors import LlmtsError
from llmts.providers.base import ProviderRequest
from llmts.providers.gemini.live.protocol import GeminiLiveProtocol
from llmts.providers.realtime import Reaction, RealtimeOpening, ServerEvent, Turn
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import Completion, NeutralToolCall, ScriptedOutput, Usage

__all__ = [
    "MODEL",
    "PCM16K",
    "SdkLoop",
    "ask",
    "blob",
    "completion",
    "content",
    "encode",
    "function_calls",
    "heard",
    "opening",
    "parts",
    "run",
    "said",
    "sdk_parse",
    "texts",
    "usage",
    "user",
]

Answer = Completion | LlmtsError
T = TypeVar("T")
MODEL = "gemini-live-2.5-flash-preview"


def offline_client(api_key: str) -> genai.Client:
    """A ``genai.Client`` for a Live API whose ``ws_connect`` is patched (``SdkLoop``): it never dials, so
    it gets the process's shared SSL context instead of building two of its own (about 50 ms each)."""
    context = default_client_context()
    options: dict[str, Any] = {
        "client_args": {"verify": context},
        "async_client_args": {"verify": context, "ssl": context},
    }
    return genai.Client(api_key=api_key, http_options=options)


PCM16K = "audio/pcm;rate=16000"


def opening(version: str = "v1", query: str = "", headers: dict[str, str] | None = None) -> RealtimeOpening:
    environ: dict[str, Any] = {"QUERY_STRING": query}
    for name, value in (headers or {}).items():
        environ["HTTP_" + name.upper().replace("-", "_")] = value
    path = f"/gemini/ws/google.ai.generativelanguage.{version}.GenerativeService.BidiGenerateContent"
    request = ProviderRequest(
        "GET", path, {"version": version, "method": "BidiGenerateContent"}, b"", environ
    )
    counter = itertools.count(1)
    return RealtimeOpening(request, "gemini", lambda prefix: f"{prefix}_{next(counter)}")


def completion(
    text: str = "",
    *,
    chunks: tuple[str, ...] = (),
    tool_calls: tuple[NeutralToolCall, ...] = (),
    output: ScriptedOutput | None = None,
    input_tokens: int = 7,
    output_tokens: int = 5,
) -> Completion:
    if output is None:
        output = ScriptedOutput(
            kind="tool_calls" if tool_calls else "text",
            text=text,
            chunks=chunks or (text,),
            tool_calls=tool_calls,
        )
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    return Completion(output=output, usage=usage, response_id="resp_1", created_at=0)


def sdk_parse(data: bytes) -> types.LiveServerMessage:
    """One server message as google-genai's ``AsyncSession._receive`` parses it (Gemini Developer API)."""
    raw = json.loads(data) if data else {}
    return types.LiveServerMessage._from_response(
        response=_live_converters._LiveServerMessage_from_mldev(raw), kwargs={}
    )


def run(
    monkeypatch: Any,
    loop: SdkLoop,
    config: Any,
    body: Callable[[Any], Awaitable[T]],
) -> T:
    """``body`` run on google-genai's own Live session over ``loop`` (pytest's ``monkeypatch`` swaps the
    websocket ``live.connect`` opens)."""
    monkeypatch.setattr(live, "ws_connect", loop.connect)

    async def main() -> T:
        client = offline_client("g-key")
        async with client.aio.live.connect(model=MODEL, config=config) as session:
            return await body(session)

    return asyncio.run(main())


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


async def ask(session: Any, text: str) -> list[types.LiveServerMessage]:
    await session.send_client_content(turns=user(text))
    return [message async for message in session.receive()]


def texts(messages: list[types.LiveServerMessage]) -> str:
    return "".join(message.text or "" for message in messages if message.server_content)


def heard(utterance: bytes) -> str:
    """What llmts hears in an utterance it did not generate (llmts/providers/gemini/live/speech.py)."""
    return f"Transcribed audio: {len(utterance)} bytes, sha256 {hashlib.sha256(utterance).hexdigest()[:12]}."


def blob(data: bytes) -> types.Blob:
    return types.Blob(data=data, mime_type=PCM16K)


def encode(data: bytes) -> str:
    return base64.b64encode(data).decode()


def content(message: types.LiveServerMessage) -> types.LiveServerContent:
    assert message.server_content is not None
    return message.server_content


def parts(message: types.LiveServerMessage) -> list[types.Part]:
    turn = content(message).model_turn
    assert turn is not None and turn.parts is not None
    return turn.parts


def said(messages: list[types.LiveServerMessage], direction: str = "output") -> list[str]:
    """The ``outputTranscription`` (or ``inputTranscription``) texts of ``messages``, in order."""
    texts = []
    for message in messages:
        if message.server_content is not None:
            transcription = getattr(message.server_content, f"{direction}_transcription")
            if transcription is not None:
                texts.append(transcription.text)
    return texts


def usage(message: types.LiveServerMessage) -> types.UsageMetadata:
    assert message.usage_metadata is not None
    return message.usage_metadata


def function_calls(message: types.LiveServerMessage) -> list[types.FunctionCall]:
    assert message.tool_call is not None and message.tool_call.function_calls is not None
    return message.tool_call.function_calls


class SdkLoop:
    """The fake websocket (``send``/``recv``) and driver of one connection."""

    def __init__(
        self, answers: list[Answer] | Callable[[Turn], Answer] | None = None, **open_args: Any
    ) -> None:
        self.protocol = GeminiLiveProtocol(opening(**open_args))
        self._answers = answers if callable(answers) else deque(answers or [])
        self.turns: list[Turn] = []
        self.client_frames: list[bytes] = []
        self.server_frames: list[bytes] = []
        self.closed_with: tuple[int, str] | None = None
        self._ready: deque[bytes | Close] = deque()
        # The turn in flight: its undelivered events, and what was delivered of it.
        self._flight: deque[ServerEvent] = deque()
        self._flight_turn: Turn | None = None
        self._delivered: list[ServerEvent] = []

    # --- what google-genai calls ----------------------------------------------------------------------

    async def send(self, message: str | bytes) -> None:
        data = message.encode() if isinstance(message, str) else message
        self.client_frames.append(data)
        if self.closed_with is None:
            self.react(self.protocol.receive(data))

    async def recv(self, decode: bool | None = None) -> bytes:
        if self._ready:
            item = self._ready.popleft()
        elif self._flight:
            event = self._flight.popleft()
            self._delivered.append(event)
            if event.kind is FrameKind.TERMINAL or not self._flight:
                self._flight_turn = None
            item = event.data
        else:
            raise AssertionError("the client waits for a message the server will never send")
        if isinstance(item, Close):
            self._ready.appendleft(item)
            raise ConnectionClosedError(item, None)
        self.server_frames.append(item)
        return item

    async def close(self) -> None:
        return None

    # --- the driver -----------------------------------------------------------------------------------

    def react(self, reaction: Reaction) -> None:
        self._ready.extend(reaction.events)
        if reaction.cancel is not None and self._flight_turn is not None:
            turn, self._flight_turn = self._flight_turn, None
            self._flight.clear()
            self._ready.extend(self.protocol.interrupted(turn, self._delivered, reaction.cancel))
        if reaction.turn is not None:
            self.turns.append(reaction.turn)
            self._answer(reaction.turn)
        if reaction.close is not None:
            self.closed_with = reaction.close
            self._ready.append(Close(*reaction.close))

    def _answer(self, turn: Turn) -> None:
        answers = self._answers
        answer = answers(turn) if callable(answers) else answers.popleft()
        if isinstance(answer, LlmtsError):
            self.react(self.protocol.failed(turn, answer))
            return
        events = self.protocol.answer(turn, answer)
        if self._flight_turn is None:
            self._delivered = []
        self._flight_turn = turn
        self._flight.extend(events)

    @contextlib.asynccontextmanager
    async def connect(self, uri: str, additional_headers: Any = None, **_: Any) -> AsyncIterator[SdkLoop]:
        self.uri = uri
        self.headers = additional_headers
        yield self

    def server_messages(self) -> list[types.LiveServerMessage]:
        return [sdk_parse(frame) for frame in self.server_frames]
