"""Native ``items`` output -> Responses output items (docs/providers.md), with ``include`` projection.

Control ``kind`` -> wire ``type``: ``message`` -> ``message`` (one ``output_text`` part whose
``annotations`` are the ordered citations), ``file_search`` -> ``file_search_call``, ``code_interpreter``
-> ``code_interpreter_call``, ``web_search`` -> ``web_search_call``. Projection follows ``include``:

* ``file_search_call.results``: the call's ``results``; without it the field is absent;
* ``code_interpreter_call.outputs``: the call's ``outputs`` (``[]`` stays ``[]``); without it ``null``;
* ``web_search_call.action.sources``: a search action's ``sources``; without it absent.

Projection never removes citations. Items without a fixture id get ``<prefix>_<response id><index>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llmts.schema.items import (
    CodeInterpreterItem,
    CodeInterpreterLogsOutput,
    ContainerFileCitation,
    FileCitation,
    FileSearchItem,
    FileSearchResult,
    MessageItem,
    UrlCitation,
    WebSearchItem,
    json_number,
)
from llmts.schema.native import NativeOutput

__all__ = ["native_chunks", "native_output"]

_PREFIX: dict[type[Any], str] = {
    MessageItem: "msg",
    FileSearchItem: "fs",
    CodeInterpreterItem: "ci",
    WebSearchItem: "ws",
}


def _annotation(citation: Any) -> dict[str, Any]:
    if isinstance(citation, UrlCitation):
        return {
            "type": "url_citation",
            "start_index": citation.start_index,
            "end_index": citation.end_index,
            "title": citation.title,
            "url": citation.url,
        }
    if isinstance(citation, FileCitation):
        return {
            "type": "file_citation",
            "file_id": citation.file_id,
            "filename": citation.filename,
            "index": citation.index,
        }
    assert isinstance(citation, ContainerFileCitation)
    return {
        "type": "container_file_citation",
        "container_id": citation.container_id,
        "file_id": citation.file_id,
        "filename": citation.filename,
        "start_index": citation.start_index,
        "end_index": citation.end_index,
    }


def _message(item: MessageItem, item_id: str) -> dict[str, Any]:
    part = {
        "type": "output_text",
        "text": item.content,
        "annotations": [_annotation(citation) for citation in item.citations],
        "logprobs": [],
    }
    return {"id": item_id, "type": "message", "status": "completed", "role": "assistant", "content": [part]}


def _result(result: FileSearchResult) -> dict[str, Any]:
    wire: dict[str, Any] = {"file_id": result.file_id}
    if result.filename is not None:
        wire["filename"] = result.filename
    if result.score is not None:
        wire["score"] = float(result.score)
    if result.text is not None:
        wire["text"] = result.text
    if result.attributes is not None:
        wire["attributes"] = {
            key: value if isinstance(value, (str, bool)) else json_number(value)
            for key, value in result.attributes.items()
        }
    return wire


def _file_search(item: FileSearchItem, item_id: str, include: frozenset[str]) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "id": item_id,
        "type": "file_search_call",
        "status": "completed",
        "queries": list(item.queries),
    }
    if "file_search_call.results" in include:
        wire["results"] = [_result(result) for result in item.results]
    return wire


def _code_interpreter(item: CodeInterpreterItem, item_id: str, include: frozenset[str]) -> dict[str, Any]:
    outputs = None
    if item.outputs is not None and "code_interpreter_call.outputs" in include:
        outputs = [
            {"type": "logs", "logs": output.logs}
            if isinstance(output, CodeInterpreterLogsOutput)
            else {"type": "image", "url": output.url}
            for output in item.outputs
        ]
    return {
        "id": item_id,
        "type": "code_interpreter_call",
        "status": "completed",
        "code": item.code,
        "container_id": item.container_id,
        "outputs": outputs,
    }


def _web_search(item: WebSearchItem, item_id: str, include: frozenset[str]) -> dict[str, Any]:
    action: dict[str, Any]
    if item.action == "search":
        action = {"type": "search", "query": item.query}
        if item.sources is not None and "web_search_call.action.sources" in include:
            action["sources"] = [{"type": "url", "url": url} for url in item.sources]
    elif item.action == "open_page":
        action = {"type": "open_page", "url": item.url}
    else:
        action = {"type": "find_in_page", "pattern": item.pattern, "url": item.url}
    return {"id": item_id, "type": "web_search_call", "status": "completed", "action": action}


def native_output(response_id: str, native: NativeOutput, include: frozenset[str]) -> list[dict[str, Any]]:
    """The Response object's ``output`` for an ``items`` fixture."""
    output = []
    for index, item in enumerate(native.items):
        item_id = item.id or f"{_PREFIX[type(item)]}_{response_id}{index:04x}"
        if isinstance(item, MessageItem):
            output.append(_message(item, item_id))
        elif isinstance(item, FileSearchItem):
            output.append(_file_search(item, item_id, include))
        elif isinstance(item, CodeInterpreterItem):
            output.append(_code_interpreter(item, item_id, include))
        else:
            output.append(_web_search(item, item_id, include))
    return output


def native_chunks(native: NativeOutput) -> list[Sequence[str]]:
    """How each item streams: message text pieces, code pieces (none for null code), nothing otherwise."""
    chunks: list[Sequence[str]] = []
    for item in native.items:
        if isinstance(item, MessageItem):
            chunks.append(item.chunks or (item.content,))
        elif isinstance(item, CodeInterpreterItem) and item.code is not None:
            chunks.append(item.code_chunks or (item.code,))
        else:
            chunks.append(())
    return chunks
