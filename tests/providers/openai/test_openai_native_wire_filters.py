"""OpenAI Responses native tools on the wire (raw HTTP, for what the SDK cannot send or hides): the
file_search filter language with exact numbers (literal spellings, tiny/large numbers, signed zero),
configured as raw JSON so attribute values keep every digit."""

from __future__ import annotations

import json

import pytest

from llmts import SessionClient
from tests.helpers import RawResponse
from tests.providers.openai.native_fixtures import (
    FILE_ITEMS,
    FILE_MODEL,
    FILE_TOOL,
    MODELS,
    items,
)
from tests.providers.openai.native_wire_support import post_raw
from tests.support.in_process import send_raw

pytestmark = pytest.mark.sdk


# --- the filter language over HTTP, with exact numbers ---------------------------------------------------

ATTRIBUTES = (
    '{"category": "fixture", "year": 2026, "price": 9.99, "flag": true, "tiny": 1e-29, "huge": 1e300,'
    ' "zero": 0, "big_int": 9007199254740993, "label": "Beta", "precise": 0.10000000000000000001}'
)


def _configure_attributes(session: SessionClient) -> None:
    """Configured as raw JSON text, so ``precise`` keeps all of its digits."""
    group = items(FILE_ITEMS)
    group[0]["results"][0]["attributes"] = "@ATTRIBUTES@"
    config = json.dumps(
        {
            "models": MODELS,
            "scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"items": group}]}],
        }
    ).replace('"@ATTRIBUTES@"', ATTRIBUTES)
    headers = {"X-Llm-Test-Server-Session": session.id}
    if session.server.control_key:
        headers["Authorization"] = f"Bearer {session.server.control_key}"
    response = send_raw(session.server, "POST", "/admin-api/configure", config, headers)
    assert response.status == 200, response.body


def _search(session: SessionClient, filter_text: str) -> RawResponse:
    tool = '{"type": "file_search", "vector_store_ids": ["vs_fixture"], "filters": ' + filter_text + "}"
    body = '{"model": "gpt-4o-mini", "input": "x", "tools": [' + tool + "]}"
    return post_raw(session, body)


FILTER_CASES = [
    ('{"type": "eq", "key": "category", "value": "fixture"}', True),
    ('{"type": "eq", "key": "category", "value": "Fixture"}', False),
    ('{"type": "ne", "key": "category", "value": "other"}', True),
    ('{"type": "ne", "key": "category", "value": "fixture"}', False),
    ('{"type": "ne", "key": "absent", "value": "x"}', False),
    ('{"type": "ne", "key": "year", "value": "2026"}', False),
    ('{"type": "eq", "key": "flag", "value": true}', True),
    ('{"type": "eq", "key": "flag", "value": false}', False),
    ('{"type": "ne", "key": "flag", "value": false}', True),
    ('{"type": "eq", "key": "flag", "value": 1}', False),
    ('{"type": "gt", "key": "year", "value": 2025}', True),
    ('{"type": "gt", "key": "year", "value": 2026}', False),
    ('{"type": "gte", "key": "year", "value": 2026}', True),
    ('{"type": "lt", "key": "year", "value": 2027}', True),
    ('{"type": "lte", "key": "year", "value": 2025.999}', False),
    ('{"type": "gt", "key": "label", "value": "Alpha"}', True),
    ('{"type": "lt", "key": "label", "value": "alpha"}', True),
    ('{"type": "gte", "key": "label", "value": "Beta"}', True),
    ('{"type": "lte", "key": "label", "value": "Bet"}', False),
    ('{"type": "gt", "key": "label", "value": 1}', False),
    ('{"type": "in", "key": "category", "value": ["a", "fixture"]}', True),
    ('{"type": "in", "key": "category", "value": ["a", "b"]}', False),
    ('{"type": "nin", "key": "category", "value": ["a", "b"]}', True),
    ('{"type": "nin", "key": "category", "value": ["fixture"]}', False),
    ('{"type": "in", "key": "year", "value": [2025, 2.026E+3]}', True),
    ('{"type": "nin", "key": "year", "value": [1, 2]}', True),
    ('{"type": "in", "key": "year", "value": ["2026"]}', False),
    ('{"type": "nin", "key": "year", "value": ["2026"]}', False),
    ('{"type": "in", "key": "absent", "value": ["x"]}', False),
    ('{"type": "nin", "key": "absent", "value": ["x"]}', False),
    (
        '{"type": "and", "filters": [{"type": "eq", "key": "flag", "value": true},'
        ' {"type": "gt", "key": "year", "value": 2000}]}',
        True,
    ),
    (
        '{"type": "and", "filters": [{"type": "eq", "key": "flag", "value": true},'
        ' {"type": "gt", "key": "year", "value": 3000}]}',
        False,
    ),
    (
        '{"type": "or", "filters": [{"type": "eq", "key": "flag", "value": false},'
        ' {"type": "gt", "key": "year", "value": 2000}]}',
        True,
    ),
    (
        '{"type": "or", "filters": [{"type": "eq", "key": "flag", "value": false},'
        ' {"type": "and", "filters": [{"type": "lt", "key": "year", "value": 0}]}]}',
        False,
    ),
    ('{"type": "and", "filters": []}', True),
    ('{"type": "or", "filters": []}', False),
    # exact tiny numbers: binary floats would not tell some of these apart
    ('{"type": "eq", "key": "tiny", "value": 1e-29}', True),
    ('{"type": "eq", "key": "tiny", "value": 2e-29}', False),
    ('{"type": "lt", "key": "tiny", "value": 2e-29}', True),
    ('{"type": "gt", "key": "tiny", "value": 1e-30}', True),
    ('{"type": "eq", "key": "tiny", "value": 1.0e-29}', True),
    ('{"type": "eq", "key": "tiny", "value": 10E-30}', True),
    ('{"type": "eq", "key": "tiny", "value": 0.00000000000000000000000000001}', True),
    ('{"type": "eq", "key": "tiny", "value": 1.0000000000000000000001e-29}', False),
    ('{"type": "gt", "key": "tiny", "value": 0}', True),
    ('{"type": "eq", "key": "zero", "value": 1e-400}', False),
    # exact large numbers
    ('{"type": "eq", "key": "huge", "value": 1e300}', True),
    ('{"type": "eq", "key": "huge", "value": 1.0000000000000001e300}', False),
    ('{"type": "lt", "key": "huge", "value": 1.0000000000000001e300}', True),
    ('{"type": "eq", "key": "big_int", "value": 9007199254740992}', False),
    ('{"type": "eq", "key": "big_int", "value": 9007199254740993}', True),
    ('{"type": "eq", "key": "big_int", "value": 9007199254740993.0}', True),
    ('{"type": "gt", "key": "big_int", "value": 9007199254740992}', True),
    ('{"type": "in", "key": "big_int", "value": [9007199254740992, 9007199254740994]}', False),
    # signed zero and equivalent spellings
    ('{"type": "eq", "key": "zero", "value": -0.0}', True),
    ('{"type": "eq", "key": "zero", "value": -0}', True),
    ('{"type": "gt", "key": "zero", "value": -0.0}', False),
    ('{"type": "gte", "key": "zero", "value": -0}', True),
    ('{"type": "eq", "key": "zero", "value": 0e10}', True),
    ('{"type": "eq", "key": "year", "value": 2026.000}', True),
    ('{"type": "eq", "key": "year", "value": 202600e-2}', True),
    ('{"type": "eq", "key": "price", "value": 9.99}', True),
    ('{"type": "eq", "key": "price", "value": 9.990000000000000001}', False),
    # a fixture literal with more digits than a double holds
    ('{"type": "eq", "key": "precise", "value": 0.1}', False),
    ('{"type": "eq", "key": "precise", "value": 0.10000000000000000001}', True),
    ('{"type": "gt", "key": "precise", "value": 0.1}', True),
]


@pytest.mark.parametrize(("filter_text", "matches"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter_operator(app_session: SessionClient, filter_text: str, matches: bool) -> None:
    _configure_attributes(app_session)

    response = _search(app_session, filter_text)

    if matches:
        assert response.status == 200, response.body
        assert response.json()["output"][0]["id"] == "fs_fixture"
    else:
        assert response.status == 409, response.body
        error = response.json()["error"]
        assert (error["code"], error["param"]) == ("llm_test_server_fixture_mismatch", "tools[0].filters")


def test_configured_attributes_round_trip_as_json_numbers(app_session: SessionClient) -> None:
    _configure_attributes(app_session)

    attributes = app_session.configuration()["scenarios"][0]["responses"][0]["items"][0]["results"][0][
        "attributes"
    ]
    response = post_raw(
        app_session,
        {"model": FILE_MODEL, "input": "x", "tools": [FILE_TOOL], "include": ["file_search_call.results"]},
    )

    assert attributes["year"] == 2026 and attributes["tiny"] == 1e-29 and attributes["flag"] is True
    assert attributes["big_int"] == 9007199254740993 and attributes["precise"] == 0.1
    wire = response.json()["output"][0]["results"][0]["attributes"]
    assert wire == attributes
