"""Which models refuse which native tool family: the real API's documented refusals, nothing more.

The rule (docs/native-tools.md, "Declarations and model pairing"): a model is accepted with every native
tool unless OpenAI documents that it refuses it, so unknown and future models are accepted. The
documented refusals are ``web_search`` on ``gpt-4.1-nano`` (and its dated snapshots) and ``web_search``
with ``reasoning.effort: "minimal"`` (OpenAI's web search guide, "Limitations"). A refusal is a rule of
the strict request contract: it answers 400 ``unsupported_value`` while the session's ``strict_requests``
is on and is accepted when it is off. Prior native items in the input and ``include`` selectors alone
never re-qualify a past tool. On Azure the model is the one the deployment alias maps to, which is why
this runs in the parser (it knows the resolved model) rather than in the body-only strict rule table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llmts.errors import StrictRequestRejected
from llmts.schema.native import NativeFamily

__all__ = ["REFUSING_MODELS", "check_native_models"]

# family -> model names that refuse it; a name also covers its dated snapshots (``<name>-2025-04-14``).
REFUSING_MODELS: dict[NativeFamily, tuple[str, ...]] = {
    "web_search": ("gpt-4.1-nano",),
    "file_search": (),
    "code_interpreter": (),
}
# Families the real API refuses with ``reasoning: {"effort": "minimal"}``.
_REFUSED_AT_MINIMAL_EFFORT: frozenset[NativeFamily] = frozenset({"web_search"})


def _refuses(model: str, family: NativeFamily) -> bool:
    name = model.rsplit("/", 1)[-1].lower()
    for refusing in REFUSING_MODELS[family]:
        if name.startswith(refusing):
            rest = name[len(refusing) :]
            if not rest or (rest[0] == "-" and rest[1:5].isdigit()):  # the name or a dated snapshot
                return True
    return False


def _rejected(message: str, param: str) -> StrictRequestRejected:
    return StrictRequestRejected(
        f"{message} (llmts strict rule native_tool_model; strict_requests: false accepts it)",
        rule="native_tool_model",
        code="unsupported_value",
        param=param,
    )


def check_native_models(model: str, reasoning: Any, uses: Sequence[tuple[NativeFamily, str]]) -> None:
    """``uses``: (family, request param) for each declaration and a named native choice, in order;
    ``reasoning``: the request's ``reasoning`` object as sent."""
    effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
    for family, param in uses:
        if _refuses(model, family):
            raise _rejected(f"Hosted tool '{family}' is not supported with {model}.", param)
        if effort == "minimal" and family in _REFUSED_AT_MINIMAL_EFFORT:
            raise _rejected(
                f"The following tools cannot be used with reasoning.effort 'minimal': {family}.", param
            )
