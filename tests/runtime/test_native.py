"""Runtime pieces of the native tools, without a server: the filter language (parse limits, exact
decimal evaluation), model pairing, fixture compilation and the request-vs-fixture fit checks."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from llmts.errors import FixtureMismatch, InvalidRequest, StrictRequestRejected
from llmts.providers.openai.native_models import check_native_models
from llmts.runtime.native import (
    check_native_fits,
    compile_items,
    exact_number,
    filter_matches,
    parse_filter,
)
from llmts.runtime.native.numbers import parse_exact_json
from llmts.schema import SessionConfig, ToolChoice
from llmts.schema.native import (
    CodeInterpreterDeclaration,
    FileSearchDeclaration,
    NativeFamily,
    NativeRequest,
    WebSearchDeclaration,
)
from llmts.schema.neutral import NeutralRequest, ScriptedOutput
from tests.providers.openai.native_fixtures import CODE_ITEMS, FILE_ITEMS, WEB_ITEMS


def _filter(text: str) -> Any:
    return parse_filter(parse_exact_json(text.encode()), "filters")


ATTRIBUTES: dict[str, str | bool | Decimal] = {
    "tiny": Decimal("1e-29"),
    "zero": Decimal("0"),
    "name": "Beta",
    "flag": True,
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"type": "eq", "key": "tiny", "value": 1e-29}', True),
        ('{"type": "eq", "key": "tiny", "value": 2e-29}', False),
        ('{"type": "ne", "key": "tiny", "value": 2e-29}', True),
        ('{"type": "lt", "key": "tiny", "value": 1.5e-29}', True),
        ('{"type": "eq", "key": "zero", "value": -0.0}', True),
        ('{"type": "lt", "key": "zero", "value": -0.0}', False),
        ('{"type": "eq", "key": "flag", "value": 1}', False),
        ('{"type": "eq", "key": "flag", "value": true}', True),
        ('{"type": "eq", "key": "name", "value": "Beta"}', True),
        ('{"type": "in", "key": "name", "value": ["Alpha", "Beta"]}', True),
        ('{"type": "nin", "key": "name", "value": [1, 2]}', False),
        ('{"type": "ne", "key": "missing", "value": 1}', False),
        ('{"type": "and", "filters": []}', True),
        ('{"type": "or", "filters": []}', False),
    ],
)
def test_filter_evaluation(text: str, expected: bool) -> None:
    node = _filter(text)

    assert filter_matches(node, ATTRIBUTES) is expected
    assert filter_matches(node, None) is (text == '{"type": "and", "filters": []}')


def test_exact_numbers_do_not_round_through_binary_floats() -> None:
    assert exact_number(0.1) == Decimal("0.1") != Decimal("0.10000000000000000001")
    assert exact_number(2026) == Decimal("2.026E+3")
    assert float(Decimal("1e300")) == float(Decimal("1.0000000000000001e300"))  # what floats would do
    node = _filter('{"type": "eq", "key": "x", "value": 1.0000000000000001e300}')
    assert not filter_matches(node, {"x": exact_number(1e300)})


def test_filter_limits() -> None:
    leaf = '{"type": "eq", "key": "k", "value": 1}'
    deep = leaf
    for _ in range(7):
        deep = '{"type": "and", "filters": [' + deep + "]}"
    assert _filter(deep) is not None
    with pytest.raises(InvalidRequest) as too_deep:
        _filter('{"type": "and", "filters": [' + deep + "]}")
    assert "8 levels" in too_deep.value.message
    assert too_deep.value.param == "filters" + ".filters[0]" * 8
    assert _filter('{"type": "or", "filters": [' + ", ".join([leaf] * 127) + "]}") is not None
    with pytest.raises(InvalidRequest) as too_many_nodes:
        _filter('{"type": "or", "filters": [' + ", ".join([leaf] * 128) + "]}")
    with pytest.raises(InvalidRequest) as too_many_children:
        _filter('{"type": "or", "filters": [' + ", ".join([leaf] * 129) + "]}")
    assert "128 nodes" in too_many_nodes.value.message
    assert "128 filters" in too_many_children.value.message
    assert parse_filter(None, "filters") is None


def test_model_pairing_refuses_only_the_documented_pairs() -> None:
    """Every model is served with every native tool except OpenAI's documented refusals
    (docs/native-tools.md): web search on gpt-4.1-nano (any snapshot) and at minimal reasoning effort."""
    every_family: list[tuple[NativeFamily, str]] = [
        ("web_search", "tools[0]"),
        ("file_search", "tools[1]"),
        ("code_interpreter", "tools[2]"),
        ("file_search", "tool_choice"),
    ]
    for model in ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-5.4", "o3", "my-future-model"):
        check_native_models(model, None, every_family)
    check_native_models("gpt-4.1-nano", {"effort": "minimal"}, [("file_search", "tools[0]")])
    check_native_models("gpt-5", {"effort": "low"}, [("web_search", "tools[0]")])
    with pytest.raises(StrictRequestRejected) as nano:
        check_native_models(
            "gpt-4.1-nano-2025-04-14", None, [("file_search", "tools[0]"), ("web_search", "tools[1]")]
        )
    with pytest.raises(StrictRequestRejected) as minimal:
        check_native_models("gpt-5", {"effort": "minimal"}, [("web_search", "tools[0]")])
    assert nano.value.param == "tools[1]" and nano.value.code == "unsupported_value"
    assert "gpt-4.1-nano-2025-04-14" in nano.value.message and nano.value.rule == "native_tool_model"
    assert minimal.value.param == "tools[0]" and "minimal" in minimal.value.message
    check_native_models("gpt-4.1-nano-like", None, [("web_search", "tools[0]")])  # not a snapshot name


def _output(group: list[dict[str, Any]]) -> ScriptedOutput:
    config = SessionConfig.model_validate({"scenarios": [{"responses": [{"items": group}]}]})
    return compile_items(config.scenarios[0].responses[0].items or [])


def _request(native: NativeRequest | None, choice: ToolChoice | None = None) -> NeutralRequest:
    class Request(NeutralRequest):
        native: NativeRequest | None = None

    return Request(
        provider="openai",
        operation="responses",
        model="m",
        messages=(),
        tool_choice=choice or ToolChoice(),
        native=native,
    )


def test_compiled_output() -> None:
    output = _output(FILE_ITEMS)

    assert output.kind == "items" and output.text == "Paris fixture."
    assert output.native is not None and output.native.calls == ("file_search",)
    exact = output.native.exact_results[0]
    assert exact is not None and exact[0].attributes == {"category": "fixture", "year": Decimal(2026)}
    assert _output(CODE_ITEMS).native.calls == ("code_interpreter",)  # type: ignore[union-attr]


def test_fit_checks() -> None:
    files = _output(FILE_ITEMS)
    code = _output(CODE_ITEMS)
    web = _output(WEB_ITEMS)
    file_search = FileSearchDeclaration(0, ("vs_fixture", "vs_fixture"))
    assert check_native_fits(_request(NativeRequest((file_search,))), files, "r")
    assert check_native_fits(
        _request(NativeRequest((CodeInterpreterDeclaration(0, "cntr_fixture"),))), code, "r"
    )
    assert check_native_fits(
        _request(NativeRequest((CodeInterpreterDeclaration(0, None, ("file_input",)),))), code, "r"
    )
    assert check_native_fits(
        _request(NativeRequest((WebSearchDeclaration(0, "web_search", ("example.com", "example.org")),))),
        web,
        "r",
    )
    # a second declaration of the family that fits is enough
    narrow = FileSearchDeclaration(0, ("vs_other",))
    assert check_native_fits(_request(NativeRequest((narrow, file_search))), files, "r")
    for request, param in [
        (_request(NativeRequest((narrow,))), "tools[0].vector_store_ids"),
        (
            _request(
                NativeRequest((FileSearchDeclaration(1, ("vs_fixture",), None, None, Decimal("0.95")),))
            ),
            "tools[1].ranking_options.score_threshold",
        ),
        (
            _request(NativeRequest((FileSearchDeclaration(0, ("vs_fixture",), None, 0),))),
            "tools[0].max_num_results",
        ),
        (_request(NativeRequest()), "tools"),
        (_request(None), None),
        (_request(NativeRequest((file_search,)), ToolChoice(mode="none")), "tool_choice"),
        (_request(NativeRequest((file_search,), choice="code_interpreter")), "tool_choice"),
    ]:
        with pytest.raises(FixtureMismatch) as caught:
            check_native_fits(request, files, "scenario 's' response 0")
        assert caught.value.param == param
        assert caught.value.message.startswith("scenario 's' response 0")
    text = ScriptedOutput(kind="text", text="x")
    assert check_native_fits(_request(NativeRequest()), text, "r") is False
