"""One Live connection's conversation as neutral messages, and the tool calls waiting for answers.

Roles map as in the REST parse (``llmts/providers/gemini/parse.py``): ``user`` content is a user message
(its ``functionResponse`` parts tool messages), ``model`` content an assistant message (``functionCall``
parts its tool calls). Gemini call ids are optional: a response without ``id`` answers the oldest
unanswered call of that name, and a model turn's call without ``id`` gets one (``call_...``).

Bounds: at most ``MAX_MESSAGES`` messages and ``MAX_CHARS`` characters of text and arguments. With
``contextWindowCompression`` in the setup the oldest messages slide out past either bound (the service's
sliding window); without it, the client message that goes past them closes the connection (1007).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from llmts.providers.gemini.live.client_types import FunctionResult, LiveContent, invalid_argument
from llmts.runtime.resident_size import text_size
from llmts.schema.neutral import NeutralMessage, NeutralToolCall, build, neutral_message

__all__ = ["MAX_CHARS", "MAX_MESSAGES", "Conversation"]

MAX_MESSAGES = 512
MAX_CHARS = 1_000_000
_MAX_OPEN_CALLS = 256  # unanswered calls remembered for id-less responses (oldest forgotten first)


# A neutral message's and a tool call's objects (measured: about 540 B a message), beyond their texts.
_MESSAGE_BYTES = 768
_CALL_BYTES = 512


def _size(message: NeutralMessage) -> int:
    return len(message.text) + sum(len(call.arguments) for call in message.tool_calls)


def _resident(message: NeutralMessage) -> int:
    """What ``message`` keeps, at the width CPython keeps its texts (the process memory budget's charge)."""
    calls = sum(_CALL_BYTES + text_size(call.name) + text_size(call.arguments) for call in message.tool_calls)
    return _MESSAGE_BYTES + text_size(message.text) + calls


class Conversation:
    """The messages so far, the calls not yet answered, and the calls of the model's last ``toolCall``."""

    __slots__ = ("_chars", "_new_id", "_open", "_sliding", "awaiting", "messages", "resident_bytes")

    def __init__(self, new_id: Callable[[str], str], sliding: bool) -> None:
        self._new_id = new_id
        self._sliding = sliding
        self.messages: list[NeutralMessage] = []
        self._chars = 0
        # What the messages keep (``_resident`` of each): the process memory budget's charge.
        self.resident_bytes = 0
        # id -> name of every call without a response yet, oldest first.
        self._open: dict[str, str] = {}
        # The ids of the model's last toolCall still unanswered: their answers make the next turn.
        self.awaiting: set[str] = set()

    # --- adding -------------------------------------------------------------------------------------

    def add_content(self, contents: Iterable[LiveContent]) -> None:
        """Client content (history or the user's turn); LiveInvalid when past the bounds."""
        for content in contents:
            if content.role == "model":
                calls = tuple(
                    build(
                        NeutralToolCall,
                        id=call.id or self._new_id("call"),
                        name=call.name,
                        arguments=call.args,
                        arguments_chunks=(),
                    )
                    for call in content.calls
                )
                self._opened(calls)
                self._append(neutral_message("assistant", content.text, calls))
                continue
            self._results(content.results)
            if content.text or not content.results:
                self._append(neutral_message("user", content.text))
        self._check()

    def add_user_text(self, text: str) -> None:
        self._append(neutral_message("user", text))
        self._check()

    def add_results(self, results: Iterable[FunctionResult]) -> bool:
        """A ``toolResponse``: True when it answered the last of the model's awaited calls."""
        waited = bool(self.awaiting)
        self._results(results)
        self._check()
        return waited and not self.awaiting

    def add_answer(self, message: NeutralMessage) -> None:
        """The model's answer (never refused: the next client message is what goes past the bounds)."""
        self._opened(message.tool_calls)
        self.awaiting = {call.id for call in message.tool_calls}
        self._append(message)
        self._fit()

    def abandon_calls(self) -> list[str]:
        """The user moved on: the awaited calls (returned, for ``toolCallCancellation``) make no turn."""
        ids = sorted(self.awaiting)
        self.awaiting = set()
        return ids

    def replace(self, old: NeutralMessage, new: NeutralMessage | None) -> None:
        """An interrupted answer keeps what the client received (``new``; None: nothing)."""
        for index in range(len(self.messages) - 1, -1, -1):
            if self.messages[index] is old:
                self._chars -= _size(old)
                self.resident_bytes -= _resident(old)
                if new is None:
                    del self.messages[index]
                else:
                    self.messages[index] = new
                    self._chars += _size(new)
                    self.resident_bytes += _resident(new)
                break
        undelivered = {call.id for call in old.tool_calls} - {
            call.id for call in (new.tool_calls if new else ())
        }
        self.awaiting -= undelivered
        for call_id in undelivered:
            self._open.pop(call_id, None)

    # --- internals ----------------------------------------------------------------------------------

    def _opened(self, calls: Iterable[NeutralToolCall]) -> None:
        for call in calls:
            self._open[call.id] = call.name
            if len(self._open) > _MAX_OPEN_CALLS:
                del self._open[next(iter(self._open))]

    def _answered(self, result: FunctionResult) -> str:
        if result.id is not None:
            self._open.pop(result.id, None)
            return result.id
        for call_id, name in self._open.items():
            if name == result.name:
                del self._open[call_id]
                return call_id
        return result.name or ""  # (a response names an id or a name: client_messages checks it)

    def _results(self, results: Iterable[FunctionResult]) -> None:
        for result in results:
            call_id = self._answered(result)
            self.awaiting.discard(call_id)
            self._append(neutral_message("tool", result.response, (), call_id))

    def _append(self, message: NeutralMessage) -> None:
        self.messages.append(message)
        self._chars += _size(message)
        self.resident_bytes += _resident(message)

    def _fit(self) -> bool:
        """Slide the oldest messages out when the setup asked for it; False if still past a bound."""
        if self._sliding:
            while len(self.messages) > 1 and (len(self.messages) > MAX_MESSAGES or self._chars > MAX_CHARS):
                oldest = self.messages.pop(0)
                self._chars -= _size(oldest)
                self.resident_bytes -= _resident(oldest)
        return len(self.messages) <= MAX_MESSAGES and self._chars <= MAX_CHARS

    def _check(self) -> None:
        if not self._fit():
            raise invalid_argument(
                f"Conversation over llmts's limit ({MAX_MESSAGES} messages, {MAX_CHARS} chars)."
            )
