"""OpenAI Responses native tools in the runtime: fixture compilation, the file-search filter language with
exact decimal numbers, and the request-vs-fixture fit checks (409 before consumption). Which models serve
which tool family is the adapter's business (``llmts/providers/openai/native_models.py``)."""

from __future__ import annotations

from llmts.runtime.native.compile import compile_items
from llmts.runtime.native.filters import filter_matches, parse_filter
from llmts.runtime.native.fit import check_native_fits
from llmts.runtime.native.numbers import exact_number

__all__ = [
    "check_native_fits",
    "compile_items",
    "exact_number",
    "filter_matches",
    "parse_filter",
]
