"""What a journal entry keeps of a request's payloads: bounded previews and structured tool calls.

Pure functions over bytes and neutral models, cheap on the request path: previews are byte slices (no
re-serialization), tool items are plain tuples turned into models only when the journal is queried.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from llmts.schema.neutral import NeutralMessage, NeutralToolCall

__all__ = [
    "SNIPPET_CHARS",
    "ToolCallItem",
    "ToolResultItem",
    "frames_preview",
    "history_tools",
    "latest_user_snippet",
    "output_calls",
    "snippet",
]

# The longest prompt or answer snippet a journal entry keeps (docs/journal.md, "Snippets").
SNIPPET_CHARS = 240

# (id, name, arguments, truncated)
ToolCallItem = tuple[str, str, str, bool]
# (call id, name of the originating call or None, content, truncated)
ToolResultItem = tuple[str, "str | None", str, bool]


def frames_preview(frames: Sequence[bytes], limit: int) -> tuple[bytes, int]:
    """The first ``limit`` bytes of the frames concatenated, and the frames' total size."""
    joined = b"".join(frames)  # one C-level copy beats a Python loop over (many, small) frames
    return (joined if len(joined) <= limit else joined[:limit]), len(joined)


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str | None:
    """``text`` shortened for a list row: at most ``limit`` characters, "…" marking a cut; None for no
    text."""
    if not text:
        return None
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def latest_user_snippet(messages: Sequence[NeutralMessage]) -> str | None:
    """The snippet of the request's latest user message (None when it has none, or no text)."""
    for message in reversed(messages):
        if message.role == "user":
            return snippet(message.text)
    return None


def _call_item(call: NeutralToolCall, limit: int) -> ToolCallItem:
    arguments = call.arguments
    if len(arguments) > limit:
        return (call.id, call.name, arguments[:limit], True)
    return (call.id, call.name, arguments, False)


def output_calls(
    calls: Iterable[NeutralToolCall], max_items: int, limit: int
) -> tuple[tuple[ToolCallItem, ...], bool]:
    """The response's tool calls (at most ``max_items``, texts cut to ``limit`` characters); truncated?"""
    items: list[ToolCallItem] = []
    truncated = False
    for call in calls:
        if len(items) >= max_items:
            truncated = True
            break
        item = _call_item(call, limit)
        truncated |= item[3]
        items.append(item)
    return tuple(items), truncated


def history_tools(
    messages: Sequence[NeutralMessage], max_items: int, limit: int
) -> tuple[tuple[ToolCallItem, ...], tuple[ToolResultItem, ...], bool]:
    """Tool calls of the request's assistant history and the tool results it sends back, in order.

    A result's name comes from the call with its id earlier in the same history (None when absent).
    """
    calls: list[ToolCallItem] = []
    results: list[ToolResultItem] = []
    names: dict[str, str] = {}
    truncated = False
    for message in messages:
        if message.tool_calls:
            for call in message.tool_calls:
                names[call.id] = call.name
                if len(calls) >= max_items:
                    truncated = True
                    continue
                item = _call_item(call, limit)
                truncated |= item[3]
                calls.append(item)
        elif message.role == "tool" and message.tool_call_id is not None:
            if len(results) >= max_items:
                truncated = True
                continue
            call_id, text = message.tool_call_id, message.text
            cut = len(text) > limit
            truncated |= cut
            results.append((call_id, names.get(call_id), text[:limit] if cut else text, cut))
    return tuple(calls), tuple(results), truncated
