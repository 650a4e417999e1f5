"""Hypothesis strategies for hostile requests: bodies, headers, paths and methods.

Bodies are mostly *mutated seeds*: a valid request of the route with one to three nodes replaced by a
hostile value (an object or array where a string belongs, huge or negative numbers, control characters),
removed or joined by an unknown key, so generation reaches deep into the parsers instead of stopping at
the first ``invalid_json``. The rest are arbitrary JSON and arbitrary bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

from hypothesis import strategies as st

from llmts.catalog.registry import CATALOG
from tests.fuzz.harness import CONTROL_KEY, FORGED

METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")

_NASTY_TEXT = (
    "",
    " ",
    "\x00",
    "é",
    "\u2028",
    "\ud800",
    "\n" + FORGED,
    "\r\n" + FORGED,
    "x" * 5000,
    "../../etc/passwd",
    "%s%s%n",
    "{{}}",
    "null",
    "AUTO",
    "user",
)
_NASTY = st.sampled_from(
    [{}, [], None, True, False, 0, -1, 2**63, -(2**63) - 1, 10**30, 1.5, -0.0, 1e308, [[]], {"": {}}, [{}]]
) | st.sampled_from(_NASTY_TEXT)

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
JSON_VALUES = st.recursive(
    _SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)
# Objects and arrays where a string belongs are the commonest parser bug (unhashable in a set lookup).
_CONTAINERS = st.sampled_from([{}, [], [{}], {"type": "text"}, [""], {"": []}])
HOSTILE_VALUES = st.one_of(_CONTAINERS, _CONTAINERS, _NASTY, JSON_VALUES)


def node_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += node_paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += node_paths(child, (*prefix, index))
    return found


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def mutate(value: Any, path: tuple[Any, ...], operation: str, new: Any) -> Any:
    if not path:
        return new if operation == "replace" else value
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        if not rest and operation == "delete":
            copy.pop(head, None)
        elif not rest and operation == "add" and isinstance(copy.get(head), dict):
            copy[head] = {**copy[head], "fuzz_unknown": new}
        else:
            copy[head] = mutate(value[head], rest, operation, new)
        return copy
    if isinstance(value, list):
        copy_list = list(value)
        if not rest and operation == "delete":
            del copy_list[head]
        elif not rest and operation == "add":
            copy_list.insert(head, new)
        else:
            copy_list[head] = mutate(value[head], rest, operation, new)
        return copy_list
    return new if operation == "replace" else value


@st.composite
def mutated(draw: st.DrawFn, seeds: list[dict[str, Any]]) -> Any:
    value: Any = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = node_paths(value)
        leaves = [path for path in paths if isinstance(_at(value, path), str | int | float | bool)]
        path = draw(st.sampled_from(leaves) if leaves and draw(st.booleans()) else st.sampled_from(paths))
        operation = draw(st.sampled_from(("replace", "replace", "replace", "delete", "add")))
        value = mutate(value, path, operation, draw(HOSTILE_VALUES))
    return value


def _encode(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def bodies(seeds: list[dict[str, Any]]) -> st.SearchStrategy[bytes]:
    """A route's body: mostly a mutated seed, sometimes a seed as is, arbitrary JSON or bytes."""
    return st.one_of(
        mutated(seeds).map(_encode),
        mutated(seeds).map(_encode),
        mutated(seeds).map(_encode),
        st.sampled_from(seeds).map(_encode),
        JSON_VALUES.map(_encode),
        st.binary(max_size=300),
        st.sampled_from(
            [b"", b"{", b'{"a":', b"\xff\xfe", b"[]", b"null", b'"x"', b"1e999999", b"{}" * 1000]
        ),
    )


# --- paths ------------------------------------------------------------------------------------------

_SEGMENT_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=12)


def _segment(realistic: list[str]) -> st.SearchStrategy[str]:
    return st.sampled_from(realistic) | _SEGMENT_TEXT.map(lambda text: quote(text, safe=""))


_PATH_NOISE = st.sampled_from(
    ["", "", "", "/", "//", "/%0a" + FORGED, "/%0d%0a" + FORGED, "/..", "/%00", "/%2F", "/x", ";x", "%20"]
)


PLACEHOLDER = re.compile(r"<([^>]*)>")


@st.composite
def routed_paths(draw: st.DrawFn, rules: list[str], realistic: dict[str, list[str]]) -> str:
    """A path from one of ``rules`` (werkzeug syntax), arguments filled, sometimes damaged."""
    rule = draw(st.sampled_from(rules))
    path = PLACEHOLDER.sub(
        lambda match: draw(_segment(realistic.get(match.group(1).rsplit(":", 1)[-1], ["x"]))), rule
    )
    if draw(st.integers(0, 5)) == 0:  # damage: a "//", a percent-encoded newline, a stray segment...
        cut = draw(st.integers(0, len(path)))
        path = path[:cut] + draw(_PATH_NOISE) + path[cut:]
    if not path.startswith("/"):
        path = "/" + path
    return path


def session_prefixed(paths: st.SearchStrategy[str], sessions: list[str]) -> st.SearchStrategy[str]:
    """``paths``, a quarter of them behind ``/sessions/{id}`` (a known id or a hostile one)."""
    prefix = st.sampled_from(sessions) | _SEGMENT_TEXT.map(lambda text: quote(text, safe=""))
    return st.one_of(
        paths, paths, paths, st.tuples(prefix, paths).map(lambda pair: f"/sessions/{pair[0]}{pair[1]}")
    )


def queries(names: list[str]) -> st.SearchStrategy[str]:
    values = ["1", "-1", "true", "2026-01-01T00:00:00", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00+01:00"]
    pair = st.tuples(st.sampled_from(names) | _SEGMENT_TEXT, _SEGMENT_TEXT | st.sampled_from(values))
    return st.one_of(
        st.just(""),
        st.just(""),
        st.lists(pair, max_size=4).map(
            lambda pairs: "?" + "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in pairs)
        ),
    )


# --- headers ----------------------------------------------------------------------------------------

# Header values a client can send in one line: printable text (latin-1 or UTF-8), never CR or LF.
_HEADER_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")) | st.sampled_from(["\t", "\x1b", "\x7f"]),
    max_size=40,
)
# The headers providers declare a credential in besides Authorization (``ProviderInfo.secret_headers``): a
# new provider's joins the fuzz, with the locked session's keys among its values.
CREDENTIAL_HEADERS = tuple(dict.fromkeys(name for info in CATALOG.providers for name in info.secret_headers))
HEADER_NAMES = (
    "Authorization",
    *CREDENTIAL_HEADERS,
    "anthropic-version",
    "anthropic-beta",
    "Content-Type",
    "Accept",
    "User-Agent",
    "Referer",
    "Idempotency-Key",
    "X-Llm-Test-Server-Session",
    "X-Llm-Test-Server-Conversation",
    "X-Llm-Test-Server-Retry-Group",
    "X-Stainless-Retry-Count",
    "Transfer-Encoding",
    "Expect",
    "Connection",
)


def headers(sessions: list[str], credentials: list[str]) -> st.SearchStrategy[dict[str, str]]:
    realistic = {
        "Authorization": st.sampled_from(
            [
                f"Bearer {CONTROL_KEY}",
                "Bearer é",
                "Basic dQpGT1JHRUQ6cHc=",
                *(f"Bearer {key}" for key in credentials),
            ]
        ),
        **{name: st.sampled_from(["é", *credentials]) for name in CREDENTIAL_HEADERS},
        "X-Llm-Test-Server-Session": st.sampled_from(sessions),
        "Content-Type": st.sampled_from(["application/json", "text/plain", "multipart/form-data"]),
        "Transfer-Encoding": st.sampled_from(["identity", "gzip"]),
        "Expect": st.just("100-continue"),
        "Connection": st.sampled_from(["close", "keep-alive", "upgrade"]),
    }
    value_for = {name: realistic.get(name, _HEADER_TEXT) | _HEADER_TEXT for name in HEADER_NAMES}
    return st.lists(st.sampled_from(HEADER_NAMES), max_size=4, unique=True).flatmap(
        lambda names: st.fixed_dictionaries({name: value_for[name] for name in names})
    )


def methods(usual: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(usual), st.sampled_from(usual), st.sampled_from(METHODS))
