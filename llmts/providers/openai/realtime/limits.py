"""The bounds of one OpenAI Realtime connection's state (docs/realtime.md, "Limits").

Messages themselves are bounded by the WebSocket driver; these bound what a connection keeps between
messages, so a client cannot grow a connection's memory without limit.
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = ["REALTIME_LIMITS"]

REALTIME_LIMITS = MappingProxyType(
    {
        # Items one conversation keeps; past it (or past ``conversation_chars``) the oldest items are
        # dropped, as the service's ``truncation`` drops the oldest messages from the model's context.
        "conversation_items": 4096,
        # Characters of text (texts, transcripts, arguments, outputs, image URLs) one conversation keeps.
        "conversation_chars": 1_048_576,
        # Characters of text one item (or the session's ``instructions``) may carry; past it the client's
        # event gets an ``error`` (``string_above_max_length``).
        "item_chars": 262_144,
        # Decoded bytes the input audio buffer holds (the service's 15 MiB); an append past it gets an
        # ``error`` and changes nothing. Also the largest ``input_audio`` part of an item.
        "input_audio_bytes": 15 * 1024 * 1024,
        # Tools a session or a response declares.
        "tools": 128,
        # Content parts one message item carries.
        "content_parts": 64,
        # Nesting of a client event's JSON (a tool's ``parameters`` schema is the deepest legitimate part):
        # what the session echoes back must stay serializable (orjson writes at most 254 levels).
        "event_depth": 64,
        # Client ids (items, events) longer than this are refused.
        "id_chars": 128,
        # ``metadata`` of a response: keys, and characters per key and per value (the API's own limits).
        "metadata_keys": 16,
        "metadata_key_chars": 64,
        "metadata_value_chars": 512,
        # Client event summaries one turn carries to the journal (the latest are kept; older ones are
        # counted in a leading ``{"type": "omitted", "count": N}``), and characters kept per text in them.
        "turn_client_events": 64,
        "summary_chars": 200,
        # Raw audio bytes per ``response.output_audio.delta`` (0.5 s of PCM16 at 24 kHz before base64).
        "audio_delta_bytes": 24_000,
    }
)
