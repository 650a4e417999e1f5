"""The readable lines under a failed expectation in ``VerificationResult.report()``: what came closest.

A failure's ``actual`` may carry what the server saw instead of what was expected (built by
``llmts/runtime/verify_nearest.py``): ``sent``, the tool items of a matched request, closest first, and
``nearest``, the requests in scope that came closest to a query that matched nothing, each with the
filters it failed. Texts arrive already shortened; this module only lays them out.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["detail_lines"]

_INDENT = "    "
# What each kind of tool item is, in the sentence that introduces them.
_SENT: dict[str, str] = {
    "result": "the request sent back {count} tool result(s)",
    "request_call": "the request's history holds {count} tool call(s)",
    "response_call": "the response made {count} tool call(s)",
}


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _item(item: dict[str, Any]) -> str:
    """``get_weather(call_w): {"sky": "clear"}  [differs: result]``."""
    text = item.get("content", item.get("arguments", ""))
    mismatched = item.get("mismatched") or []
    verdict = f"differs: {', '.join(mismatched)}" if mismatched else "matches"
    return f"{item.get('name')}({item.get('call_id')}): {text}  [{verdict}]"


def _sent_lines(actual: dict[str, Any], sent: list[Any]) -> list[str]:
    count = actual.get("sent_count", len(sent))
    intro = _SENT.get(str(actual.get("kind")), "the request held {count} such item(s)").format(count=count)
    if not sent:
        return [f"{_INDENT}{intro}"]
    shown = f", the {len(sent)} closest shown" if count > len(sent) else ", closest first"
    return [f"{_INDENT}{intro}{shown}:", *(f"{_INDENT * 2}{_item(item)}" for item in sent)]


def _unmet_lines(unmet: dict[str, Any]) -> list[str]:
    name, wanted, actual = unmet.get("filter"), unmet.get("wanted"), unmet.get("actual")
    indent = _INDENT * 3
    if name == "has_tool_results":
        return [f"{indent}has_tool_results: wanted {_value(wanted)}, it sent {actual} tool result(s)"]
    if name == "tool_result_contains":
        results = actual if isinstance(actual, list) else []
        if not results:
            return [f"{indent}tool_result_contains: wanted {_value(wanted)}, it sent no tool results"]
        return [
            f"{indent}tool_result_contains: wanted {_value(wanted)}, none of its tool results holds it:",
            *(
                f"{indent}{_INDENT}{result.get('name')}({result.get('call_id')}): {result.get('content')}"
                for result in results
            ),
        ]
    return [f"{indent}{name}: wanted {_value(wanted)}, was {_value(actual)}"]


def _nearest_lines(nearest: list[Any]) -> list[str]:
    if not nearest:
        return [f"{_INDENT}no request in scope to compare with"]
    lines = [f"{_INDENT}nearest request(s) in scope, with the filters each failed:"]
    for request in nearest:
        what = f"{request.get('provider')} {request.get('operation')}, model {_value(request.get('model'))}"
        lines.append(
            f"{_INDENT * 2}#{request.get('sequence')} {request.get('request_id')}: {what}, "
            f"status {request.get('status')}"
        )
        for unmet in request.get("unmet") or []:
            lines.extend(_unmet_lines(unmet))
    return lines


def detail_lines(actual: Any) -> list[str]:
    """The lines that show a failure's ``sent`` items or ``nearest`` requests (none for other values)."""
    if not isinstance(actual, dict):
        return []
    lines: list[str] = []
    sent = actual.get("sent")
    if isinstance(sent, list):
        lines.extend(_sent_lines(actual, sent))
    nearest = actual.get("nearest")
    if isinstance(nearest, list):
        lines.extend(_nearest_lines(nearest))
    return lines
