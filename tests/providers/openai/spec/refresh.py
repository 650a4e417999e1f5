"""Regenerate ``data/openapi.json``, the trimmed copy of OpenAI's published OpenAPI specification that
``tests/providers/openai/spec/`` validates llmts's answers against (data/README.md says what is kept).

One command (docs/contributing.md, "The OpenAI spec check")::

    python -m tests.providers.openai.spec.refresh --ref <commit of openai/openai-openapi>

downloads ``openapi.yaml`` of that commit (``--ref main`` for the newest; name the commit for the record)
and writes the operations llmts implements, every component schema they reach, and a ``x-llmts-source``
note (repository, ref, file, SHA-256 of the file, the spec's ``info.version``). ``--file PATH`` reads a
local copy instead (a clone, or a file downloaded by hand); give ``--ref`` with it so the note names the
commit. The trimmed file is a few hundred KB of JSON instead of 3 MB of YAML, so the suite parses it in
milliseconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["OPERATIONS", "main", "trim"]

REPOSITORY = "https://github.com/openai/openai-openapi"
RAW = "https://raw.githubusercontent.com/openai/openai-openapi/{ref}/openapi.yaml"
DATA = Path(__file__).parent / "data" / "openapi.json"

# Every OpenAI operation llmts serves under /openai/v1 (llmts/providers/openai/adapter.py and
# responses_routes.py), as (path, method) of the spec. GET /images/files/{id} is llmts's own (the URL a
# `response_format: url` image answer names) and has no counterpart in the spec.
OPERATIONS: tuple[tuple[str, str], ...] = (
    ("/chat/completions", "post"),
    ("/responses", "post"),
    ("/responses/input_tokens", "post"),
    ("/responses/{response_id}", "get"),
    ("/responses/{response_id}", "delete"),
    ("/responses/{response_id}/input_items", "get"),
    ("/embeddings", "post"),
    ("/moderations", "post"),
    ("/models", "get"),
    ("/models/{model}", "get"),
    ("/images/generations", "post"),
    ("/images/edits", "post"),
    ("/audio/speech", "post"),
    ("/audio/transcriptions", "post"),
    ("/audio/translations", "post"),
)

# Kept even where no operation names them: the error envelope every route answers in.
_EXTRA_REFS = ("#/components/schemas/ErrorResponse",)


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref)
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def _resolve(spec: dict[str, Any], ref: str) -> Any:
    if not ref.startswith("#/components/"):
        raise ValueError(f"unexpected $ref outside components: {ref}")
    node: Any = spec
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def trim(spec: dict[str, Any], source: dict[str, str]) -> dict[str, Any]:
    """The operations of ``OPERATIONS`` (with their ``x-oaiMeta`` examples) and the closure of the
    components they reference, in the spec's own order."""
    paths: dict[str, dict[str, Any]] = {}
    for path, method in OPERATIONS:
        paths.setdefault(path, {})[method] = spec["paths"][path][method]
    todo: set[str] = set(_EXTRA_REFS)
    _refs(paths, todo)
    seen: set[str] = set()
    while todo:
        ref = todo.pop()
        if ref in seen:
            continue
        seen.add(ref)
        found: set[str] = set()
        _refs(_resolve(spec, ref), found)
        todo |= found - seen
    components: dict[str, dict[str, Any]] = {}
    for kind, entries in spec["components"].items():
        kept = {name: value for name, value in entries.items() if f"#/components/{kind}/{name}" in seen}
        if kept:
            components[kind] = kept
    return {
        "openapi": spec["openapi"],
        "info": spec["info"],
        "x-llmts-source": source,
        "paths": paths,
        "components": components,
    }


def _load_yaml(text: bytes) -> dict[str, Any]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loaded = yaml.load(text, Loader=loader)
    if not isinstance(loaded, dict):
        raise ValueError("the specification is not a mapping")
    return loaded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", default="main", help="commit (or branch) of openai/openai-openapi")
    parser.add_argument("--file", type=Path, help="read this openapi.yaml (or .json) instead of downloading")
    parser.add_argument("--output", type=Path, default=DATA)
    args = parser.parse_args(argv)
    if args.file is not None:
        raw = args.file.read_bytes()
        name = args.file.name
    else:
        with urllib.request.urlopen(RAW.format(ref=args.ref), timeout=60) as answer:
            raw = answer.read()
        name = "openapi.yaml"
    spec = json.loads(raw) if name.endswith(".json") else _load_yaml(raw)
    source = {
        "repository": REPOSITORY,
        "ref": args.ref,
        "file": name,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "version": str(spec["info"]["version"]),
        "license": "MIT (data/LICENSE)",
    }
    trimmed = trim(spec, source)
    args.output.write_text(json.dumps(trimmed, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    kept = sum(len(entries) for entries in trimmed["components"].values())
    print(f"{args.output}: {len(OPERATIONS)} operations, {kept} components, spec version {source['version']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
