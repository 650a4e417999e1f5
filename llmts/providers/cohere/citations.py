"""Citations of the request's ``documents`` in a text answer (docs/providers.md "Cohere").

Cohere grounds an answer in the ``documents`` a request passes and cites the spans of the answer that
come from them. llmts cites what the scripted answer quotes: every document text (a string document, or
each string value of an object document's ``data``) that occurs verbatim in the answer becomes a
citation of its first occurrence, with that document as the source; documents quoting the same span
share one citation. ``citation_options.mode: "OFF"`` turns citations off, as on the API.

Documents are read from the body again only when it names them, so requests without documents pay one
substring test.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["citations_for"]

_MARKER = b'"documents"'


def _sources(documents: list[Any]) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(id, the document as sources show it, its quotable texts) per document; API ids are ``doc:<i>``."""
    sources = []
    for index, document in enumerate(documents):
        if isinstance(document, str):
            doc_id = f"doc:{index}"
            sources.append((doc_id, {"id": doc_id, "content": document}, [document]))
        elif isinstance(document, dict) and isinstance(document.get("data"), dict):
            raw_id = document.get("id")
            doc_id = raw_id if isinstance(raw_id, str) and raw_id else f"doc:{index}"
            data = document["data"]
            texts = [value for value in data.values() if isinstance(value, str)]
            sources.append((doc_id, {"id": doc_id, **data}, texts))
    return sources


def citations_for(body: bytes, text: str) -> list[dict[str, Any]]:
    """The citations of ``text`` (the answer) for the documents of the request ``body`` (already parsed
    once and valid), in answer order."""
    if not text or _MARKER not in body:
        return []
    request = orjson.loads(body)
    documents = request.get("documents")
    options = request.get("citation_options")
    if not isinstance(documents, list) or (isinstance(options, dict) and options.get("mode") == "OFF"):
        return []
    spans: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for doc_id, document, texts in _sources(documents):
        for quoted in texts:
            start = text.find(quoted) if quoted else -1
            if start >= 0:
                source = {"type": "document", "id": doc_id, "document": document}
                cited = spans.setdefault((start, start + len(quoted)), [])
                if source not in cited:
                    cited.append(source)
    return [
        {
            "start": start,
            "end": end,
            "text": text[start:end],
            "sources": sources,
            "type": "TEXT_CONTENT",
            "content_index": 0,
        }
        for (start, end), sources in sorted(spans.items())
    ]
