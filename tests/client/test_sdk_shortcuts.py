"""The named SDK-client methods (``llmts/client/sdk_shortcuts.py``) are derived from the providers'
``SdkClient`` declarations: this module holds the generator, checks the file is what it gives, and checks
what the methods do. After changing an ``SdkClient`` in a provider's ``info.py``, regenerate the file with
``python -m tests.client.test_sdk_shortcuts`` (docs/contributing.md, "Adding a provider").
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path
from typing import Any

import pytest

import llmts.client.session
from llmts.catalog.info import ProviderInfo, SdkClient
from llmts.catalog.registry import CATALOG, Catalog
from llmts.client import ConversationClient, SessionClient
from llmts.client.sdk_shortcuts import SdkClientShortcuts

SHORTCUTS = Path(__file__).resolve().parents[2] / "llmts" / "client" / "sdk_shortcuts.py"
_WIDTH = 110  # ruff.toml's line length

_HEAD = '''\
"""The named SDK-client methods of ``SessionClient`` and ``ConversationClient`` (llmts/client/).

Generated from the providers' ``SdkClient`` declarations (their ``info.py``: the name, the docstring, the
keyword-only arguments) by ``python -m tests.client.test_sdk_shortcuts``; do not edit by hand, that test
fails while this file differs from what the declarations give. Each method is one line over
``sdk_client(name)``. They are written out rather than made at run time so that type checkers and editors
see each one with its signature (docs/architecture.md, "Providers and the adapter registry").
"""

from __future__ import annotations

from typing import Any

__all__ = ["SdkClientShortcuts"]


class SdkClientShortcuts:
    """One-line conveniences over ``sdk_client``, one per SDK client the providers declare, shared
    by ``SessionClient`` and ``ConversationClient``."""

    def sdk_client(self, name: str, /, **kwargs: Any) -> Any:
        raise NotImplementedError
'''


def _docstring(text: str) -> str:
    lines = textwrap.wrap(text, _WIDTH - 8 - 3, break_long_words=False, break_on_hyphens=False)
    return textwrap.indent('"""' + "\n".join(lines) + '"""', " " * 8)


def _method(client: SdkClient) -> str:
    options = "".join(f"{key}: str | None = None, " for key in client.option_keywords)
    passed = "".join(f"{key}={key}, " for key in client.option_keywords)
    star = "*, " if options else ""
    return (
        f"\n    def {client.name}(self, {star}{options}**kwargs: Any) -> Any:\n"
        f"{_docstring(client.doc())}\n"
        f'        return self.sdk_client("{client.name}", {passed}**kwargs)\n'
    )


def shortcuts_source(catalog: Catalog = CATALOG) -> str:
    """``llmts/client/sdk_shortcuts.py`` as the registered providers' declarations give it, in registry
    order."""
    return _HEAD + "".join(_method(client) for info in catalog.providers for client in info.sdk_clients)


def test_the_shortcuts_file_is_what_the_providers_declare() -> None:
    assert SHORTCUTS.read_text() == shortcuts_source(), (
        "llmts/client/sdk_shortcuts.py is out of date: run python -m tests.client.test_sdk_shortcuts"
    )


# The methods users call today (docs/python-api.md); a declaration may not disappear from under them.
_PUBLISHED = (
    "openai_client",
    "async_openai_client",
    "azure_openai_client",
    "anthropic_client",
    "async_anthropic_client",
    "gemini_client",
    "ollama_client",
    "async_ollama_client",
    "cohere_client",
    "async_cohere_client",
    "bedrock_client",
    "anthropic_bedrock_client",
)


@pytest.mark.parametrize("owner", [SessionClient, ConversationClient])
def test_every_declared_client_is_a_method_over_sdk_client(owner: type[SdkClientShortcuts]) -> None:
    names = CATALOG.sdk_client_names()
    assert set(_PUBLISHED) <= set(names)
    calls: list[tuple[str, dict[str, Any]]] = []

    class Recording(owner):  # type: ignore[valid-type, misc]
        def __init__(self) -> None:
            pass

        def sdk_client(self, name: str, /, **kwargs: Any) -> Any:
            calls.append((name, kwargs))
            return name

    recording = Recording()
    for name in names:
        _, spec = CATALOG.sdk_client(name)
        method = getattr(recording, name)
        parameters = inspect.signature(method).parameters
        assert [p.name for p in parameters.values() if p.kind is p.KEYWORD_ONLY] == list(spec.option_keywords)
        assert list(parameters)[-1] == "kwargs" and " ".join((method.__doc__ or "").split()) == spec.doc()
        assert method(max_retries=0) == name
        assert calls.pop() == (name, {**dict.fromkeys(spec.option_keywords), "max_retries": 0})
    assert recording.gemini_client(api_version="v1beta") == "gemini_client"
    assert calls.pop() == ("gemini_client", {"api_version": "v1beta"})


def _factory(**kwargs: Any) -> dict[str, Any]:
    return kwargs


def test_option_keywords_go_inside_the_options_dict(monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``gemini_client(api_version=...)`` relies on, with a recording factory instead of an SDK."""
    fake = ProviderInfo(
        "fake",
        sdk_clients=(
            SdkClient(
                "fake_client",
                __name__,
                "_factory",
                "/fake",
                headers_argument="headers",
                options_argument="http_options",
                option_keywords=("api_version",),
            ),
        ),
    )
    monkeypatch.setattr(llmts.client.session, "CATALOG", Catalog(("fake",), (*CATALOG.providers, fake)))
    session = SessionClient(None, "ses_x", "http://h:1/sessions/ses_x")  # type: ignore[arg-type]
    session._credentials = {"fake": "k"}
    assert session.sdk_client("fake_client", api_version="v1") == {
        "http_options": {"base_url": "http://h:1/sessions/ses_x/fake", "api_version": "v1"},
        "api_key": "k",
    }
    # None leaves the SDK's default; an explicit http_options entry wins over the keyword.
    built = session.sdk_client("fake_client", api_version=None, http_options={"api_version": "v2"}, x=1)
    assert built == {
        "http_options": {"base_url": "http://h:1/sessions/ses_x/fake", "api_version": "v2"},
        "x": 1,
        "api_key": "k",
    }
    with pytest.raises(ValueError, match="need an options_argument"):
        SdkClient("bad", "m", "f", "/p", option_keywords=("api_version",))


if __name__ == "__main__":
    SHORTCUTS.write_text(shortcuts_source())
    print(f"wrote {SHORTCUTS}")
