"""Can this ``items`` fixture answer this request? Checked at admission, before anything is consumed.

A native call needs a declaration of its family that it fits: file_search stores all declared (as a
set), results within ``max_num_results``, scores meeting ``score_threshold``, every result matching
``filters``; code_interpreter in the declared container (or, in auto mode, with exactly the declared
files as its input files); web_search inside ``allowed_domains``. ``tool_choice`` is checked against the
ordered fixture. Anything else is 409 ``llm_test_server_fixture_mismatch`` naming the request field.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import orjson

from llmts.errors import FixtureMismatch
from llmts.runtime.native.compile import item_family
from llmts.runtime.native.filters import filter_matches
from llmts.schema.items import CodeInterpreterItem, FileSearchItem, MessageItem, WebSearchItem
from llmts.schema.native import (
    CodeInterpreterDeclaration,
    Declaration,
    ExactResult,
    FileSearchDeclaration,
    NativeRequest,
    WebSearchDeclaration,
)
from llmts.schema.neutral import NeutralRequest, ScriptedOutput

__all__ = ["check_native_fits"]

# (message, param) of why one declaration cannot serve one item; None when it can.
_Problem = tuple[str, str] | None


def _file_search_problem(
    declaration: FileSearchDeclaration, item: FileSearchItem, exact: tuple[ExactResult, ...]
) -> _Problem:
    param = f"tools[{declaration.index}]"
    declared = set(declaration.vector_store_ids)
    missing = [store for store in item.vector_store_ids if store not in declared]
    if missing:
        return (
            f"searches vector store(s) {', '.join(missing)} that {param}.vector_store_ids does not declare",
            f"{param}.vector_store_ids",
        )
    limit = declaration.max_num_results
    if limit is not None and len(item.results) > limit:
        return (
            f"has {len(item.results)} results but {param}.max_num_results is {limit}",
            f"{param}.max_num_results",
        )
    threshold = declaration.score_threshold
    for position, result in enumerate(exact):
        file_id = item.results[position].file_id
        if threshold is not None and (result.score is None or result.score < threshold):
            return (
                f"result {position} ({file_id}) has score {item.results[position].score} below "
                f"{param}.ranking_options.score_threshold {threshold}",
                f"{param}.ranking_options.score_threshold",
            )
        if declaration.filters is not None and not filter_matches(declaration.filters, result.attributes):
            return (f"result {position} ({file_id}) does not match {param}.filters", f"{param}.filters")
    return None


def _code_problem(declaration: CodeInterpreterDeclaration, item: CodeInterpreterItem) -> _Problem:
    param = f"tools[{declaration.index}].container"
    if declaration.container_id is not None:
        if declaration.container_id != item.container_id:
            return (
                f"runs in container {item.container_id} but the request names container "
                f"{declaration.container_id}",
                param,
            )
        return None
    declared = set(declaration.file_ids)
    if declared != set(item.input_file_ids):
        return (
            f"uses input files {sorted(item.input_file_ids)} but the request's auto container declares "
            f"file_ids {sorted(declared)}",
            f"{param}.file_ids",
        )
    return None


def _host_allowed(url: str, domains: tuple[str, ...]) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    for domain in domains:
        name = domain.lower().split("://", 1)[-1].split("/", 1)[0]
        if host == name or host.endswith("." + name):
            return True
    return False


def _web_problem(declaration: WebSearchDeclaration, item: WebSearchItem) -> _Problem:
    domains = declaration.allowed_domains
    if not domains:
        return None
    for url in (*(item.sources or ()), *((item.url,) if item.url else ())):
        if not _host_allowed(url, domains):
            return (
                f"uses {url}, outside tools[{declaration.index}].filters.allowed_domains",
                f"tools[{declaration.index}].filters.allowed_domains",
            )
    return None


def _problem(declaration: Declaration, item: object, exact: tuple[ExactResult, ...] | None) -> _Problem:
    if isinstance(declaration, FileSearchDeclaration) and isinstance(item, FileSearchItem):
        assert exact is not None
        return _file_search_problem(declaration, item, exact)
    if isinstance(declaration, CodeInterpreterDeclaration) and isinstance(item, CodeInterpreterItem):
        return _code_problem(declaration, item)
    if isinstance(declaration, WebSearchDeclaration) and isinstance(item, WebSearchItem):
        return _web_problem(declaration, item)
    raise AssertionError("declarations are looked up by the item's family")


def _check_choice(request: NeutralRequest, native: NativeRequest, output: ScriptedOutput, where: str) -> None:
    assert output.native is not None
    calls = output.native.calls
    mode = request.tool_choice.mode
    if native.choice is not None:
        if not calls or calls[0] != native.choice:
            first = calls[0] if calls else "no tool"
            raise FixtureMismatch(
                f"{where} calls {first} first but the request forces the {native.choice} tool",
                param="tool_choice",
            )
    elif mode == "none" and calls:
        raise FixtureMismatch(
            f"{where} calls {calls[0]} but the request set tool_choice to none", param="tool_choice"
        )
    elif mode == "required" and not calls:
        raise FixtureMismatch(
            f"{where} answers with messages only but the request requires a tool call", param="tool_choice"
        )
    elif mode == "function":
        raise FixtureMismatch(
            f"{where} answers with native items but the request forces function {request.tool_choice.name!r}",
            param="tool_choice",
        )


def check_native_fits(request: NeutralRequest, output: ScriptedOutput, where: str) -> bool:
    """True when ``output`` is an ``items`` fixture that fits (nothing else to check); False for other
    outputs, after the native part of their checks. Raises ``FixtureMismatch``."""
    # Only Responses requests carry ``native``; reading __dict__ avoids pydantic's slow missing-attribute
    # path on every other request.
    native: NativeRequest | None = request.__dict__.get("native")
    if output.kind != "items":
        if native is not None and native.choice is not None and output.kind == "tool_calls":
            raise FixtureMismatch(
                f"{where} calls a function but the request forces the {native.choice} tool",
                param="tool_choice",
            )
        return False
    if native is None:
        raise FixtureMismatch(
            f"{where} answers with native output items, which only OpenAI Responses requests "
            f"(openai, azure-openai) can receive, not {request.provider} {request.operation}"
        )
    _check_choice(request, native, output, where)
    compiled = output.native
    assert compiled is not None
    for index, item in enumerate(compiled.items):
        if isinstance(item, MessageItem):
            if request.response_format != "text":
                try:
                    orjson.loads(item.content)
                except orjson.JSONDecodeError:
                    raise FixtureMismatch(
                        f"{where} item {index} is a message that is not JSON but the request asks for "
                        f"{request.response_format}",
                        param="text.format",
                    ) from None
            continue
        family = item_family(item)
        declarations = native.declared(family)
        if not declarations:
            raise FixtureMismatch(
                f"{where} item {index} calls {family} but the request declares no {family} tool",
                param="tools",
            )
        problems = [_problem(d, item, compiled.exact_results[index]) for d in declarations]
        if all(problem is not None for problem in problems):
            message, param = problems[0]  # type: ignore[misc]
            raise FixtureMismatch(f"{where} item {index} ({family}) {message}", param=param)
    return True
