"""What a Realtime connection keeps between messages: the conversation and the input audio buffer.

Both are bounded (``limits.py``). The conversation drops its oldest items past its bounds, as the
service's ``truncation`` drops the oldest messages from the model's context; the audio buffer refuses an
append past its bound (the protocol answers with an ``error``).
"""

from __future__ import annotations

from dataclasses import dataclass

from llmts.providers.openai.realtime.items import Item
from llmts.providers.openai.realtime.limits import REALTIME_LIMITS
from llmts.runtime.resident_size import value_size

__all__ = ["ROOT", "AudioBuffer", "Conversation", "Segment", "VadRule"]

# ``previous_item_id`` that inserts an item at the start of the conversation.
ROOT = "root"
# An item's object and its slot in the conversation, beyond its ``wire`` dict and ``text``.
_ITEM_BYTES = 512


def _resident(item: Item) -> int:
    """What ``item`` keeps: its ``wire`` dict and the model's ``text`` (a string both hold counts once)."""
    return _ITEM_BYTES + value_size((item.wire, item.text))


class Conversation:
    """The default conversation's items in order, by id."""

    __slots__ = ("_by_id", "_chars", "_items", "_resident", "id", "resident_bytes")

    def __init__(self, conversation_id: str) -> None:
        self.id = conversation_id
        self._items: list[Item] = []
        self._by_id: dict[str, Item] = {}
        self._chars = 0
        # Each item's estimated resident size, taken when it was added, and their sum (what the process
        # memory budget is charged for the conversation).
        self._resident: dict[str, int] = {}
        self.resident_bytes = 0

    def __contains__(self, item_id: str) -> bool:
        return item_id in self._by_id

    def __len__(self) -> int:
        return len(self._items)

    def get(self, item_id: str) -> Item | None:
        return self._by_id.get(item_id)

    def items(self) -> tuple[Item, ...]:
        return tuple(self._items)

    def last_id(self) -> str | None:
        return self._items[-1].id if self._items else None

    def previous_id(self, item_id: str) -> str | None:
        """The id of the item before ``item_id`` (None for the first)."""
        index = self._index(item_id)
        return self._items[index - 1].id if index > 0 else None

    def has_call(self, call_id: str) -> bool:
        return any(
            item.kind == "function_call" and item.wire.get("call_id") == call_id for item in self._items
        )

    def insert(self, item: Item, after: str | None = None) -> str | None:
        """Add ``item`` at the end, at the start (``after`` ``ROOT``) or after the item ``after`` (which the
        caller checked exists); returns the id of the item now before it."""
        if after is None:
            index = len(self._items)
        elif after == ROOT:
            index = 0
        else:
            index = self._index(after) + 1
        self._items.insert(index, item)
        self._by_id[item.id] = item
        self._chars += item.chars
        self._held(item)
        self._bound(keep=item)
        return self.previous_id(item.id)

    def replace(self, item: Item) -> None:
        """Put ``item`` in place of the item with its id (a truncated or interrupted answer)."""
        index = self._index(item.id)
        self._chars += item.chars - self._items[index].chars
        self._items[index] = item
        self._by_id[item.id] = item
        self._held(item)

    def delete(self, item_id: str) -> bool:
        item = self._by_id.pop(item_id, None)
        if item is None:
            return False
        del self._items[self._index_of(item)]
        self._chars -= item.chars
        self._let_go(item_id)
        return True

    def resized(self, item: Item) -> None:
        """``item``'s ``wire`` changed in place (a transcript filled in): take its size again."""
        if self._by_id.get(item.id) is item:
            self._held(item)

    def _held(self, item: Item) -> None:
        """Take ``item``'s size (in place of what an item with its id held)."""
        self._let_go(item.id)
        size = self._resident[item.id] = _resident(item)
        self.resident_bytes += size

    def _let_go(self, item_id: str) -> None:
        self.resident_bytes -= self._resident.pop(item_id, 0)

    def _index(self, item_id: str) -> int:
        return self._index_of(self._by_id[item_id])

    def _index_of(self, item: Item) -> int:
        # From the end: the items a connection touches most (the latest answer, a new item) are there.
        for index in range(len(self._items) - 1, -1, -1):
            if self._items[index] is item:
                return index
        raise KeyError(item.id)

    def _bound(self, keep: Item) -> None:
        """Drop the oldest items (never ``keep``, the one just added) while past a bound."""
        while len(self._items) > 1 and (
            len(self._items) > REALTIME_LIMITS["conversation_items"]
            or self._chars > REALTIME_LIMITS["conversation_chars"]
        ):
            # By position: ``delete`` finds an item from the end (where a connection works), which for
            # the oldest would scan the whole conversation on every item added at the bound.
            index = 0 if self._items[0] is not keep else 1
            oldest = self._items.pop(index)
            del self._by_id[oldest.id]
            self._chars -= oldest.chars
            self._let_go(oldest.id)


@dataclass(frozen=True, slots=True)
class VadRule:
    """The session's turn detection as the buffer applies it: how much silence ends a speech segment, and
    how much audio before speech is kept (``prefix_padding_ms``)."""

    silence_ms: int
    padding_ms: int


@dataclass(frozen=True, slots=True)
class Segment:
    """What one append did to the speech segment: started at ``started_ms`` and/or stopped at
    ``stopped_ms`` (milliseconds of all audio appended during the session)."""

    started_ms: int | None = None
    stopped_ms: int | None = None


_NOTHING = Segment()


class AudioBuffer:
    """The input audio buffer, the session's audio timeline, and server VAD's speech segment. It counts the
    buffered bytes instead of keeping them: what llmts hears in them is their size (or the session's script),
    so a connection holds no audio however much it buffers."""

    __slots__ = ("in_speech", "silent_ms", "size", "written_ms")

    def __init__(self) -> None:
        self.size = 0
        # Milliseconds of all audio appended during the session (what VAD events count from).
        self.written_ms = 0.0
        self.in_speech = False
        self.silent_ms = 0.0

    def fits(self, size: int) -> bool:
        return self.size + size <= REALTIME_LIMITS["input_audio_bytes"]

    def append(self, chunk: bytes, bytes_per_ms: int, silent: bool, vad: VadRule | None) -> Segment:
        """Buffer ``chunk`` (whose every sample is silence when ``silent``) and apply server VAD: outside
        speech the buffer keeps only ``padding_ms`` of silence; a non-silent chunk starts a segment; once
        the silent chunks since the last sound reach ``silence_ms`` the segment stops."""
        start_ms = self.written_ms
        self.written_ms += len(chunk) / bytes_per_ms
        self.size += len(chunk)
        if vad is None or not chunk:
            return _NOTHING
        if not self.in_speech:
            if silent:
                keep = vad.padding_ms * bytes_per_ms
                self.size = min(self.size, keep)
                return _NOTHING
            self.in_speech = True
            self.silent_ms = 0.0
            padding_ms = (self.size - len(chunk)) / bytes_per_ms
            return Segment(started_ms=max(0, int(start_ms - padding_ms)))
        if not silent:
            self.silent_ms = 0.0
            return _NOTHING
        self.silent_ms += len(chunk) / bytes_per_ms
        if self.silent_ms < vad.silence_ms:
            return _NOTHING
        self.in_speech = False
        self.silent_ms = 0.0
        return Segment(stopped_ms=int(self.written_ms))

    def take(self) -> int:
        """The buffered audio's size, emptying the buffer and ending any segment."""
        size = self.size
        self.clear()
        return size

    def clear(self) -> None:
        self.size = 0
        self.in_speech = False
        self.silent_ms = 0.0
