"""Native tools on the neutral side: what a Responses request declares and what an ``items`` fixture needs.

Request side (built by the OpenAI Responses adapter, already validated): ``NativeRequest`` with its
ordered declarations, the named native ``tool_choice``, ``include`` selectors and the kinds of prior
native items in the input. Fixture side (compiled once at configure time): ``NativeOutput``, the items
plus their exact numbers. Plain slotted dataclasses: nothing here is validated per request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

__all__ = [
    "FAMILIES",
    "INCLUDABLE",
    "NATIVE_REQUEST_LIMITS",
    "CodeInterpreterDeclaration",
    "Declaration",
    "ExactResult",
    "FileSearchDeclaration",
    "FilterNode",
    "FilterValue",
    "NativeFamily",
    "NativeOutput",
    "NativeRequest",
    "WebSearchDeclaration",
]

NativeFamily = Literal["web_search", "file_search", "code_interpreter"]
FAMILIES: tuple[NativeFamily, ...] = ("web_search", "file_search", "code_interpreter")

# Request-side bounds of our native-tool contract (documented in docs/configuration.md).
NATIVE_REQUEST_LIMITS: dict[str, int] = {
    "filter_depth": 8,
    "filter_nodes": 128,
    "filter_entries": 128,
    "max_num_results": 50,
    "request_native_ids": 128,
    "request_native_id_chars": 128,
}

# ``include`` selectors the Responses API knows; the native ones change what the output shows.
INCLUDABLE = frozenset(
    {
        "file_search_call.results",
        "web_search_call.results",
        "web_search_call.action.sources",
        "message.input_image.image_url",
        "computer_call_output.output.image_url",
        "code_interpreter_call.outputs",
        "reasoning.encrypted_content",
        "message.output_text.logprobs",
    }
)

# A comparison value: a string, a boolean, an exact number, or a homogeneous array (``in``/``nin``).
FilterValue = str | bool | Decimal | tuple[str, ...] | tuple[Decimal, ...]


@dataclass(frozen=True, slots=True)
class FilterNode:
    """``op`` is a comparison (``eq ne gt gte lt lte in nin``, with ``key`` and ``value``) or a compound
    (``and or``, with ``children``)."""

    op: str
    key: str | None = None
    value: FilterValue | None = None
    children: tuple[FilterNode, ...] = ()


@dataclass(frozen=True, slots=True)
class WebSearchDeclaration:
    index: int
    type: str
    allowed_domains: tuple[str, ...] | None = None
    family: NativeFamily = "web_search"


@dataclass(frozen=True, slots=True)
class FileSearchDeclaration:
    index: int
    # As declared (duplicates kept); fixtures compare them as a set.
    vector_store_ids: tuple[str, ...]
    filters: FilterNode | None = None
    max_num_results: int | None = None
    score_threshold: Decimal | None = None
    ranker: str | None = None
    family: NativeFamily = "file_search"


@dataclass(frozen=True, slots=True)
class CodeInterpreterDeclaration:
    index: int
    # An explicit container id, or None for ``{"type": "auto"}`` with ``file_ids`` (as declared).
    container_id: str | None
    file_ids: tuple[str, ...] = ()
    family: NativeFamily = "code_interpreter"


Declaration = WebSearchDeclaration | FileSearchDeclaration | CodeInterpreterDeclaration


@dataclass(frozen=True, slots=True)
class NativeRequest:
    """The native-tool view of one Responses request."""

    declarations: tuple[Declaration, ...] = ()
    # A named native ``tool_choice`` (``{"type": "file_search"}``...), as its family.
    choice: NativeFamily | None = None
    include: frozenset[str] = frozenset()
    # Kinds of native call items the input carries from earlier turns, in order.
    prior_items: tuple[NativeFamily, ...] = ()

    def declared(self, family: NativeFamily) -> tuple[Declaration, ...]:
        return tuple(d for d in self.declarations if d.family == family)


@dataclass(frozen=True, slots=True)
class ExactResult:
    """A file-search result's score and attributes with numbers as exact decimals (for filters)."""

    score: Decimal | None
    attributes: dict[str, str | bool | Decimal] | None


@dataclass(frozen=True, slots=True)
class NativeOutput:
    """An ``items`` fixture compiled at configure time."""

    # The validated fixture items (``llmts.schema.items`` models), in order.
    items: tuple[Any, ...]
    # Per item: its results with exact numbers (file_search items), else None.
    exact_results: tuple[tuple[ExactResult, ...] | None, ...] = ()
    # Native call kinds in order (messages excluded).
    calls: tuple[NativeFamily, ...] = field(default=())
