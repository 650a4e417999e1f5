"""The JSON path subset conversation predicates accept, parsed once at configure time.

* ``$``: the whole document;
* ``$.property.items[0]`` (also ``$['odd.key']``): object members by name, array elements by index;
* JSON Pointer (RFC 6901): ``/property/items/0`` with ``~1`` for ``/`` and ``~0`` for ``~``.

Wildcards, filters, slices, negative indexes and recursive descent are rejected: a predicate names one
field. Paths are at most ``json_path_chars`` (256) characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from llmts.schema.conversation_limits import CONVERSATION_LIMITS

__all__ = ["JSON_PATH_CHARS", "PathSegment", "parse_json_path"]

JSON_PATH_CHARS = CONVERSATION_LIMITS["json_path_chars"]

_INDEX = re.compile(r"0|[1-9][0-9]*")
_UNSUPPORTED = ("*", "?", "..", ":", "@")


@dataclass(frozen=True, slots=True)
class PathSegment:
    """``key``: an object member; ``index``: an array element; ``token``: a JSON Pointer reference token,
    which is a member name on objects and (when it is a canonical integer) an index on arrays."""

    kind: Literal["key", "index", "token"]
    name: str = ""
    index: int = 0


def _pointer(path: str) -> tuple[PathSegment, ...]:
    segments = []
    for raw in path[1:].split("/"):
        if re.search(r"~(?![01])", raw):
            raise ValueError(f"invalid JSON Pointer escape in {raw!r}: use ~0 for ~ and ~1 for /")
        token = raw.replace("~1", "/").replace("~0", "~")
        segments.append(PathSegment("token", token, int(token) if _INDEX.fullmatch(token) else -1))
    return tuple(segments)


def _bracket(path: str, start: int) -> tuple[PathSegment, int]:
    """A ``[...]`` selector starting at ``path[start] == "["``: an index or a quoted member name."""
    end = path.find("]", start)
    if end < 0:
        raise ValueError(f"unclosed [ at character {start}")
    inner = path[start + 1 : end]
    if _INDEX.fullmatch(inner):
        return PathSegment("index", index=int(inner)), end + 1
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        name = inner[1:-1]
        if inner[0] in name:
            raise ValueError(f"quoted names cannot contain their quote character: {inner}")
        return PathSegment("key", name), end + 1
    raise ValueError(
        f"unsupported selector [{inner}]: only non-negative indexes and quoted names are supported"
    )


def _dotted(path: str) -> tuple[PathSegment, ...]:
    segments: list[PathSegment] = []
    position = 1
    while position < len(path):
        char = path[position]
        if char == ".":
            match = re.compile(r"[^.\[\]]+").match(path, position + 1)
            if match is None:
                raise ValueError(f"expected a member name after '.' at character {position}")
            segments.append(PathSegment("key", match.group()))
            position = match.end()
        elif char == "[":
            segment, position = _bracket(path, position)
            segments.append(segment)
        else:
            raise ValueError(f"unexpected {char!r} at character {position}: expected . or [")
    return tuple(segments)


def parse_json_path(path: str) -> tuple[PathSegment, ...]:
    """Parse ``path`` or raise ``ValueError`` saying what is wrong (the configuration's 400 message)."""
    if not path:
        raise ValueError("a path must not be empty: use $ for the whole document")
    if len(path) > JSON_PATH_CHARS:
        raise ValueError(f"a path is at most {JSON_PATH_CHARS} characters")
    if path.startswith("/"):
        return _pointer(path)
    if not path.startswith("$"):
        raise ValueError("a path starts with $ (JSON path subset) or / (JSON Pointer)")
    if any(marker in path for marker in _UNSUPPORTED) and not _only_in_quotes(path):
        raise ValueError("wildcards, filters, slices and recursive descent are not supported")
    return _dotted(path)


def _only_in_quotes(path: str) -> bool:
    """Unsupported markers may still appear inside quoted member names (``$['a*b']``)."""
    stripped = re.sub(r"\[(['\"]).*?\1\]", "", path)
    return not any(marker in stripped for marker in _UNSUPPORTED)
