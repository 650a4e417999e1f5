"""Which models serve which native tool family (the reference's qualified pairings).

The pairings are separate: a request cannot declare families whose model sets have no common member,
and each declared family (and a named native ``tool_choice``) must support the request's model. Prior
native items in the input and ``include`` selectors alone never re-qualify a past tool. On Azure the
model is the one the deployment alias maps to.
"""

from __future__ import annotations

from collections.abc import Sequence

from llmts.errors import InvalidRequest
from llmts.schema.native import NativeFamily

__all__ = ["NATIVE_MODELS", "check_native_models"]

NATIVE_MODELS: dict[NativeFamily, frozenset[str]] = {
    "web_search": frozenset({"gpt-4.1-mini"}),
    "file_search": frozenset({"gpt-4o-mini"}),
    "code_interpreter": frozenset({"gpt-4.1"}),
}


def _listed(models: frozenset[str]) -> str:
    return ", ".join(sorted(models))


def check_native_models(model: str, uses: Sequence[tuple[NativeFamily, str]]) -> None:
    """``uses``: (family, request param) for each declaration and a named native choice, in order."""
    families: list[NativeFamily] = []
    for family, _ in uses:
        if family not in families:
            families.append(family)
    if len(families) > 1:
        common = frozenset.intersection(*(NATIVE_MODELS[family] for family in families))
        if not common:
            raise InvalidRequest(
                "the request declares native tools " + ", ".join(families) + " which no model supports "
                "together (" + "; ".join(f"{f}: {_listed(NATIVE_MODELS[f])}" for f in families) + ")",
                code="unsupported_value",
                param="tools",
            )
    for family, param in uses:
        if model not in NATIVE_MODELS[family]:
            raise InvalidRequest(
                f"Hosted tool '{family}' is not supported with model '{model}' "
                f"(llmts serves it with {_listed(NATIVE_MODELS[family])})",
                code="unsupported_value",
                param=param,
            )
