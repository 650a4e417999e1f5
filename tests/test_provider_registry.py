"""The provider registry (llmts/catalog/registry.py): what each adapter declares is what the schema,
the runtime's fit checks, the server and the Python API use, and a new provider is one package plus one
registry line (docs/contributing.md, "Adding a provider")."""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import ValidationError
from werkzeug.test import Client

from llmts.catalog import registry as catalog
from llmts.catalog.credentials import SECRET_HEADERS, secret_headers
from llmts.catalog.info import ProviderInfo, env_key
from llmts.catalog.registry import CATALOG, PACKAGES, RESERVED_NAMESPACES, Catalog
from llmts.catalog.sdk_env import sdk_environment
from llmts.errors import FixtureMismatch
from llmts.providers.adapters import ADAPTERS, in_stream_surfaces, load_adapters, unmarked_stream_surfaces
from llmts.runtime.compat import check_delivery_fits
from llmts.schema.config import PROVIDER_NAMESPACES, SessionConfig
from llmts.schema.conversations import ExplainRequest
from llmts.schema.faults import StreamDelivery
from llmts.schema.neutral import NeutralRequest, neutral_message
from llmts.server.app import LlmtsApp
from tests.support.docs import doc_section

PACKAGE = Path(__file__).resolve().parent.parent / "llmts"


def test_the_registry_serves_todays_namespaces_in_order() -> None:
    assert [adapter.namespace for adapter in ADAPTERS] == [
        "openai",
        "azure-openai",
        "anthropic",
        "gemini",
        "ollama",
        "cohere",
        "bedrock",
    ]
    assert CATALOG.namespaces == PROVIDER_NAMESPACES
    assert CATALOG.namespaces == (
        "openai",
        "azure-openai",
        "anthropic",
        "gemini",
        "ollama",
        "cohere",
        "bedrock",
    )
    assert CATALOG.default.namespace == "openai"
    assert CATALOG.default_model == "gpt-4.1-mini"
    # ``models`` left out serves any model; the default model stands for unconfigured sessions.
    assert SessionConfig().models is None
    explained = ExplainRequest.model_validate({"request": {"model": "m", "messages": [{"role": "user"}]}})
    assert explained.provider_namespace == "openai"


@pytest.mark.parametrize("namespace", CATALOG.namespaces)
def test_every_declared_namespace_is_configurable(namespace: str) -> None:
    config = SessionConfig.model_validate(
        {
            "provider_credentials": {namespace: "k"},
            "scenarios": [{"provider": namespace, "responses": [{"text": "hi"}]}],
        }
    )
    assert config.provider_credentials == {namespace: "k"}
    assert config.scenarios[0].provider == namespace


def test_unknown_namespaces_are_rejected_with_field_paths() -> None:
    with pytest.raises(ValidationError) as scenario:
        SessionConfig.model_validate({"scenarios": [{"provider": "openia", "responses": [{"text": "a"}]}]})
    error = scenario.value.errors()[0]
    assert error["loc"] == ("scenarios", 0, "provider")
    assert error["msg"].endswith("expected one of " + ", ".join(CATALOG.namespaces))
    with pytest.raises(ValidationError) as credentials:
        SessionConfig.model_validate({"provider_credentials": {"openia": "k"}})
    error = credentials.value.errors()[0]
    assert error["loc"] == ("provider_credentials",)
    assert "unknown provider namespace 'openia'" in error["msg"]


def test_routes_declare_the_streams_in_stream_plans_act_on() -> None:
    """The pairs ``FAULT_SURFACES`` in runtime/compat.py hard-coded before the routes declared them."""
    assert in_stream_surfaces(ADAPTERS) == {
        ("openai", "chat.completions"),
        ("azure-openai", "chat.completions"),
        ("openai", "responses"),
        ("azure-openai", "responses"),
        ("openai", "images"),
        ("openai", "transcription"),
        ("openai", "speech"),
        ("anthropic", "messages"),
        ("gemini", "stream_generate_content.sse"),
        ("ollama", "chat"),
        ("ollama", "generate"),
        ("ollama", "chat.completions"),
        ("cohere", "chat"),
        ("bedrock", "converse-stream"),
        ("bedrock", "invoke-with-response-stream"),
    }


def test_routes_declare_the_streams_without_a_terminal_marker() -> None:
    assert unmarked_stream_surfaces(ADAPTERS) == {("bedrock", "invoke-with-response-stream")}


def _request(*, stream: bool) -> NeutralRequest:
    return NeutralRequest(
        provider="any", operation="any", model="m", messages=(neutral_message("user", "hi"),), stream=stream
    )


def test_the_delivery_check_reads_the_routes_word_not_provider_names() -> None:
    """Whether in-stream plans act on a stream is the route's to say (the server passes it as
    ``in_stream``); the request carries no such flag (nothing writes into the frozen request)."""
    plan = StreamDelivery(mode="early_clean_end")
    check_delivery_fits(_request(stream=True), plan, "r", in_stream=True)
    with pytest.raises(FixtureMismatch, match="does not apply to any any streams"):
        check_delivery_fits(_request(stream=True), plan, "r", in_stream=False)
    with pytest.raises(FixtureMismatch, match="not streaming"):
        check_delivery_fits(_request(stream=False), plan, "r", in_stream=True)
    check_delivery_fits(_request(stream=False), StreamDelivery(mode="empty_response"), "r", in_stream=False)
    assert "in_stream_faults" not in NeutralRequest.model_fields


def test_every_sdk_client_names_a_served_namespace() -> None:
    served = {info.namespace for info in CATALOG.providers}
    names = CATALOG.sdk_client_names()
    assert set(names) >= {"openai_client", "azure_openai_client", "anthropic_client", "gemini_client"}
    for name in names:
        info, spec = CATALOG.sdk_client(name)
        assert info.namespace in served
        assert spec.path.startswith("/")


# --- a fake provider: one package, one registry line ---------------------------------------------------

_FAKE_INFO = """
from llmts.catalog.info import ProviderInfo, SdkClient, env_key, env_url

PROVIDERS = (
    ProviderInfo(
        "fake",
        sdk_clients=(SdkClient("fake_client", "fake_sdk", "Client", "/fake"),),
        env=(
            env_url("FAKE_BASE_URL", "/fake/v1", "fake_sdk.Client"),
            env_key("FAKE_API_KEY", "fake_sdk.Client"),
        ),
        env_overridden=("FAKE_AUTH_TOKEN",),
    ),
)
"""

_FAKE_ADAPTER = """
import orjson

from llmts.providers.base import InferenceRoute, ProviderAdapter, Reply, json_reply, load_json_object
from llmts.schema.neutral import NeutralRequest, build, neutral_message
from fakeprov.info import PROVIDERS


def _parse(call):
    body = load_json_object(call.request.body)
    return build(
        NeutralRequest,
        provider="fake",
        operation="echo",
        model=body["model"],
        messages=(neutral_message("user", body["say"]),),
        tool_names=(),
        tool_choice=NeutralRequest.model_fields["tool_choice"].default,
        response_format="text",
        stream=bool(body.get("stream")),
        stream_include_usage=False,
        preamble="",
        cache_mode="none",
        cache_breakpoints=(),
        choices=1,
    )


def _render(call, request, completion):
    return json_reply(200, {"answer": completion.output.text})


def _error(error, request_id):
    return Reply(error.http_status, [("Content-Type", "application/json")],
                 orjson.dumps({"fake_error": error.code, "message": error.message}))


ADAPTERS = (
    ProviderAdapter(
        info=PROVIDERS[0],
        prefix="/fake",
        routes=(
            InferenceRoute("/fake/v1/echo", ("POST",), _parse, _render),
            InferenceRoute(
                "/fake/v1/stream", ("POST",), _parse, _render, in_stream_faults=frozenset({"echo"})
            ),
        ),
        credential=lambda request: request.header("x-fake-key"),
        render_error=_error,
    ),
)
"""


@pytest.fixture
def fake_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Catalog]:
    package = tmp_path / "fakeprov"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "info.py").write_text(textwrap.dedent(_FAKE_INFO))
    (package / "adapter.py").write_text(textwrap.dedent(_FAKE_ADAPTER))
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Catalog.load((*PACKAGES, "fakeprov"), RESERVED_NAMESPACES)  # the one line
    monkeypatch.setattr(catalog, "CATALOG", registry)
    yield registry
    for name in [m for m in sys.modules if m == "fakeprov" or m.startswith("fakeprov.")]:
        del sys.modules[name]


def _post(client: Client, path: str, body: dict[str, Any], key: str = "fk") -> tuple[int, Any]:
    response = client.post(path, data=orjson.dumps(body), headers={"x-fake-key": key})
    return response.status_code, orjson.loads(response.data)


def test_a_registered_package_is_configurable_and_routable(fake_registry: Catalog) -> None:
    assert "fake" in fake_registry.namespaces
    assert fake_registry.sdk_client("fake_client")[0].namespace == "fake"
    # Its info.py declares the environment its SDK reads; ``llmts env`` and ``llmts_env`` pick it up.
    environment = sdk_environment("http://h:1/sessions/s/", lambda namespace: f"key-{namespace}")
    assert environment["FAKE_BASE_URL"] == "http://h:1/sessions/s/fake/v1"
    assert environment["FAKE_API_KEY"] == "key-fake"
    assert environment["OPENAI_BASE_URL"] == "http://h:1/sessions/s/openai/v1"
    assert "FAKE_AUTH_TOKEN" in fake_registry.env_overridden
    app = LlmtsApp(adapters=load_adapters(fake_registry))
    config = SessionConfig.model_validate(
        {
            "models": ["m"],
            "provider_credentials": {"fake": "fk"},
            "scenarios": [
                {
                    "provider": "fake",
                    "terminal_policy": "repeat_last_response",
                    "responses": [{"text": "hi!"}],
                },
            ],
        }
    )
    app.registry.default.configure(config)
    client = Client(app)
    assert _post(client, "/fake/v1/echo", {"model": "m", "say": "hello"}) == (200, {"answer": "hi!"})
    status, body = _post(client, "/fake/v1/echo", {"model": "m", "say": "hello"}, key="wrong")
    assert (status, body["fake_error"]) == (401, "invalid_api_key")
    # Its route's declaration, not a list in the runtime, decides where in-stream plans apply.
    planned = {"text": "hi!", "stream_delivery": {"mode": "early_clean_end"}}
    config = SessionConfig.model_validate(
        {"models": ["m"], "scenarios": [{"provider": "fake", "responses": [planned]}]}
    )
    app.registry.default.configure(config)
    status, body = _post(client, "/fake/v1/echo", {"model": "m", "say": "x", "stream": True})
    assert status == 409
    assert "does not apply to fake echo streams" in body["message"]
    # The same request on the route that declares the operation is admitted (the fixture is consumed).
    assert _post(client, "/fake/v1/stream", {"model": "m", "say": "x", "stream": True}) == (
        200,
        {"answer": "hi!"},
    )
    status, body = _post(client, "/fake/v1/stream", {"model": "m", "say": "x", "stream": True})
    assert (status, body["fake_error"]) == (409, "llm_test_server_scenario_exhausted")


def test_environment_variables_belong_to_one_provider() -> None:
    names = [variable.name for _, variable in CATALOG.env_variables]
    assert len(names) == len(set(names))
    assert {namespace for namespace, _ in CATALOG.env_variables} == set(CATALOG.namespaces)
    twice = ProviderInfo("twin", env=(env_key("OPENAI_API_KEY", "twin"),))
    with pytest.raises(ValueError, match="must be unique"):
        Catalog(PACKAGES, (*CATALOG.providers, twice), RESERVED_NAMESPACES)
    with pytest.raises(ValueError, match="only declare reserved namespaces"):
        Catalog(PACKAGES, CATALOG.providers, RESERVED_NAMESPACES, (ProviderInfo("openai"),))


def test_the_adapters_must_serve_what_their_info_declares(fake_registry: Catalog) -> None:
    mismatched = Catalog(fake_registry.packages, fake_registry.providers[:-1], RESERVED_NAMESPACES)
    with pytest.raises(RuntimeError, match="do not serve the namespaces"):
        load_adapters(mismatched)


# --- the provider-neutral layers and the server name no provider -----------------------------------------

_PROVIDER_WORDS = re.compile(
    "|".join([*(re.escape(n) for n in CATALOG.namespaces), "azure", "claude", "google", "genai", "gpt-"]),
    re.IGNORECASE,
)
# Documented exceptions (docs/design/providers.md, "What stays provider-neutral, and the two exceptions"):
# the public config field ``azure_deployments`` (a name of the configuration contract), and the
# native-items fit message of runtime/native (which names the only wire that carries ``items`` fixtures).
_ALLOWED = {
    ("schema/config.py", "azure_deployments"),
    ("schema/config.py", "azure_deployments["),
    ("schema/fixtures.py", "azure_deployments"),  # its LIMITS key
    (
        "runtime/native/fit.py",
        " answers with native output items, which only OpenAI Responses requests "
        "(openai, azure-openai) can receive, not ",
    ),
}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _words(node: ast.AST, docstrings: set[int]) -> list[str]:
    """Identifiers and string literals (docstrings and comments explain, they are not code)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
        return [node.value]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    if isinstance(node, ast.ImportFrom) and node.module:  # ``from llmts.providers.acme.x import y``
        return [node.module, *(alias.name for alias in node.names)]
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return []


def test_schema_runtime_and_server_name_no_provider() -> None:
    """What a provider is and does lives in its package: the schema, the runtime, the transport, the
    agent's peers and the server (the composition root, which forwards, signs and routes through what
    adapters declare) name none, in code or in imports (docs/architecture.md, "Providers and the adapter
    registry")."""
    found = []
    for layer in ("schema", "runtime", "transport", "peers", "server"):
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            tree = ast.parse(path.read_text())
            docstrings = _docstrings(tree)
            where = path.relative_to(PACKAGE).as_posix()
            for node in ast.walk(tree):
                for word in _words(node, docstrings):
                    if _PROVIDER_WORDS.search(word) and (where, word) not in _ALLOWED:
                        found.append(f"{where}:{getattr(node, 'lineno', '?')}: {word!r}")
    assert found == []


def test_a_providers_credential_headers_are_secret_because_it_declares_them() -> None:
    """Whatever header a provider's clients send a credential in is never recorded or logged: its
    ``info.py`` declares it (``secret_headers``), and the standard ones are secret for every provider."""
    acme = ProviderInfo("acme", secret_headers=("X-Acme-Key",))
    assert secret_headers([acme]) == secret_headers([]) | {"x-acme-key"}
    assert {"authorization", "proxy-authorization", "cookie", "set-cookie"} <= secret_headers([])
    declared = {h.lower() for info in CATALOG.providers for h in info.secret_headers}
    assert declared >= {"x-api-key", "x-goog-api-key", "api-key", "x-amz-security-token"}
    assert secret_headers(CATALOG.providers) == SECRET_HEADERS


def test_the_recording_docs_name_every_secret_header() -> None:
    """docs/recording.md ("Redaction") lists the headers a recording drops: exactly ``SECRET_HEADERS``."""
    paragraph = doc_section("docs/recording.md", "## Redaction").split(" headers are dropped", 1)[0]
    named = {name.lower() for name in re.findall(r"`([A-Za-z-]+)`", paragraph)}
    assert named == SECRET_HEADERS
