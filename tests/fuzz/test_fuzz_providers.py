"""Property-based fuzzing of every provider's routes against one real server (docs/contributing.md,
"Fuzzing and soak"): generated bodies, headers, paths (also behind ``/sessions/{id}``) and methods never
get a 5xx, always get the provider's error envelope, and never put a traceback or a client-written line
in the server log."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import strategies as st

from llmts import ConfigBuilder
from llmts.providers.adapters import ADAPTERS
from llmts.providers.base import InferenceRoute
from tests.fuzz import seeds
from tests.fuzz.harness import (
    BOUNDED,
    DEEP,
    DEEP_TIMEOUT,
    FuzzServer,
    Request,
    check_request,
    fuzz_server,
    survive,
)
from tests.fuzz.strategies import (
    PLACEHOLDER,
    bodies,
    headers,
    methods,
    mutate,
    node_paths,
    queries,
    routed_paths,
    session_prefixed,
)

__all__ = ["fuzz_server"]

# Sub-trees with their own error envelope first (family_of takes the first matching prefix); today the
# only one, Ollama's OpenAI-compatible /ollama/v1, answers in OpenAI's envelope.
_PREFIXES = {
    **{prefix: "openai" for adapter in ADAPTERS for prefix, _ in adapter.error_renderers},
    **{adapter.prefix: adapter.namespace for adapter in ADAPTERS},
}
_SESSIONS = ["default", "nope", "locked"]
_CREDENTIALS = ["sk-right", "sk-wrong"]


def _seeds_for(rule: str) -> list[dict[str, Any]]:
    if "/ollama/api/embed" in rule:
        return seeds.OLLAMA_EMBED
    if rule.endswith("/embeddings"):
        return seeds.EMBEDDINGS
    if rule.endswith("/moderations"):
        return seeds.MODERATION
    if rule.endswith(("embedContent", "batchEmbedContents")):
        return seeds.GEMINI_EMBED
    if rule.endswith("/cohere/v2/embed"):
        return seeds.COHERE_EMBED
    if rule.endswith("/rerank"):
        return seeds.COHERE_RERANK
    if rule.endswith("chat/completions"):
        return seeds.CHAT
    if rule.endswith("input_tokens"):
        return seeds.INPUT_TOKENS
    if rule.endswith("/responses"):
        return seeds.RESPONSES
    if "/anthropic/" in rule:
        return seeds.ANTHROPIC
    if "/gemini/" in rule:
        return seeds.GEMINI
    if "/ollama/api/" in rule and not rule.endswith(("/tags", "/ps", "/version")):
        return seeds.OLLAMA
    if rule.endswith("/cohere/v2/chat"):
        return seeds.COHERE
    if rule.endswith("/images/generations"):
        return seeds.IMAGES
    if rule.endswith("/audio/speech"):
        return seeds.SPEECH
    if rule.startswith("/bedrock/"):
        return seeds.CONVERSE if "/converse" in rule else seeds.BEDROCK_INVOKE
    return [{}]


def test_every_route_that_parses_a_json_body_has_seed_bodies() -> None:
    """A route without seeds would be fuzzed with ``{}`` bodies only, its parser barely reached: a new
    route adds its seeds to tests/fuzz/seeds.py (the multipart routes are test_fuzz_media.py's)."""
    unseeded = [
        route.rule
        for adapter in ADAPTERS
        for route in adapter.routes
        if isinstance(route, InferenceRoute)
        and route.rule not in seeds.MULTIPART_ROUTES
        and _seeds_for(route.rule) == [{}]
    ]
    assert unseeded == [], f"no seed bodies in tests/fuzz/seeds.py (and _seeds_for) for {unseeded}"


def _family(namespace: str) -> st.SearchStrategy[tuple[str, str, dict[str, str], bytes]]:
    adapter = next(adapter for adapter in ADAPTERS if adapter.namespace == namespace)
    # Routes that parse a body come three times: that is where the parsers are.
    rules = [
        route.rule for route in adapter.routes for _ in range(3 if _seeds_for(route.rule) != [{}] else 1)
    ]
    usual = tuple(sorted({method for route in adapter.routes for method in route.methods}))
    body_strategies = [bodies(_seeds_for(rule)) for rule in sorted(set(rules))]
    paths = session_prefixed(routed_paths(rules, seeds.PATH_ARGUMENTS), _SESSIONS)
    return st.tuples(
        methods(usual),
        st.tuples(
            paths,
            queries(
                [
                    "key",
                    "alt",
                    "api-version",
                    "limit",
                    "after",
                    "include[]",
                    "page_size",
                    "page_token",
                    "endpoint",
                ]
            ),
        ).map("".join),
        headers(_SESSIONS, _CREDENTIALS),
        st.one_of(*body_strategies),
    )


def _check(server: FuzzServer, request: Request) -> None:
    check_request(server, request, _PREFIXES)


@pytest.fixture(scope="module", autouse=True)
def _locked_session(fuzz_server: FuzzServer) -> None:
    """A session whose provider routes need credentials, so the credential checks get fuzzed too."""
    session = fuzz_server.server.create_session()
    builder = ConfigBuilder().credentials(**{adapter.namespace: "sk-right" for adapter in ADAPTERS})
    session.configure(builder.scenario(terminal_policy="repeat_last_response").text("locked").build())
    _SESSIONS[-1] = session.id


@pytest.mark.parametrize("namespace", [adapter.namespace for adapter in ADAPTERS])
def test_provider_routes_survive_hostile_requests(fuzz_server: FuzzServer, namespace: str) -> None:
    survive(fuzz_server, _family(namespace), lambda r: _check(fuzz_server, r), BOUNDED, namespace)


@pytest.mark.parametrize("namespace", [adapter.namespace for adapter in ADAPTERS])
def test_every_body_node_replaced_by_a_hostile_value(fuzz_server: FuzzServer, namespace: str) -> None:
    """Systematic, not random: each node of each seed body becomes an object, an array, null, a number
    and a string in turn (the type confusions that used to reach a 500)."""
    adapter = next(adapter for adapter in ADAPTERS if adapter.namespace == namespace)
    seen: set[str] = set()
    for route in adapter.routes:
        route_seeds = _seeds_for(route.rule)
        if route_seeds == [{}] or "POST" not in route.methods or id(route_seeds) in seen:
            continue
        seen.add(id(route_seeds))
        path = PLACEHOLDER.sub(lambda m: seeds.PATH_ARGUMENTS[m.group(1).rsplit(":", 1)[-1]][0], route.rule)
        for number, seed in enumerate(route_seeds):
            if route_seeds is seeds.BEDROCK_INVOKE:  # each body family under a model id of its own
                path = PLACEHOLDER.sub(seeds.BEDROCK_INVOKE_MODELS[number], route.rule)
            for node in node_paths(seed):
                for value in ({}, [], None, 1.5, {"type": {}}):
                    body = json.dumps(mutate(seed, node, "replace", value)).encode()
                    _check(fuzz_server, ("POST", path, {}, body))


@pytest.mark.fuzz
@pytest.mark.timeout(DEEP_TIMEOUT)
@pytest.mark.parametrize("namespace", [adapter.namespace for adapter in ADAPTERS])
def test_provider_routes_survive_hostile_requests_deep(fuzz_server: FuzzServer, namespace: str) -> None:
    survive(fuzz_server, _family(namespace), lambda r: _check(fuzz_server, r), DEEP, namespace)
