"""The environment variables that point the official SDKs (and the frameworks built on them) at a session.

One row per variable, grouped by provider namespace: ``llmts env`` prints them, the ``llmts_env`` pytest
fixture sets them (docs/pytest-plugin.md), ``SessionClient.sdk_environment()`` returns them. A URL row is
a path under the session's provider base; a key row is the session's credential for its namespace; a
value row is a constant. docs/server.md lists which SDK reads which variable.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "AZURE_API_VERSION",
    "SDK_OVERRIDDEN_VARIABLES",
    "SDK_VARIABLES",
    "SHELLS",
    "SdkVariable",
    "Shell",
    "render_environment",
    "sdk_environment",
]

Shell = Literal["sh", "fish", "powershell", "dotenv"]
SHELLS: tuple[Shell, ...] = ("sh", "fish", "powershell", "dotenv")

# The Azure OpenAI API version the SDK sends (``OPENAI_API_VERSION``); llmts accepts any.
AZURE_API_VERSION = "2024-10-21"


@dataclass(frozen=True, slots=True)
class SdkVariable:
    """One variable. ``value`` is a path under the provider base (``url``), the literal value
    (``value``), or unused (``key``: the session's credential for ``namespace``)."""

    name: str
    namespace: str
    kind: Literal["url", "key", "value"]
    value: str
    # Who reads it, for the docs and ``--help``.
    reader: str


def _url(name: str, namespace: str, path: str, reader: str) -> SdkVariable:
    return SdkVariable(name, namespace, "url", path, reader)


def _key(name: str, namespace: str, reader: str) -> SdkVariable:
    return SdkVariable(name, namespace, "key", "", reader)


def _value(name: str, namespace: str, value: str, reader: str) -> SdkVariable:
    return SdkVariable(name, namespace, "value", value, reader)


SDK_VARIABLES: tuple[SdkVariable, ...] = (
    # openai: OpenAI() reads both (the base URL includes the API version segment).
    _url("OPENAI_BASE_URL", "openai", "/openai/v1", "openai.OpenAI"),
    _key("OPENAI_API_KEY", "openai", "openai.OpenAI"),
    # azure-openai: AzureOpenAI() reads the endpoint, key and api version.
    _url("AZURE_OPENAI_ENDPOINT", "azure-openai", "/azure-openai", "openai.AzureOpenAI"),
    _key("AZURE_OPENAI_API_KEY", "azure-openai", "openai.AzureOpenAI"),
    _value("OPENAI_API_VERSION", "azure-openai", AZURE_API_VERSION, "openai.AzureOpenAI"),
    # anthropic: Anthropic() appends /v1 itself.
    _url("ANTHROPIC_BASE_URL", "anthropic", "/anthropic", "anthropic.Anthropic"),
    _key("ANTHROPIC_API_KEY", "anthropic", "anthropic.Anthropic"),
    # gemini: google-genai reads GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY (an ambient GOOGLE_API_KEY
    # would win, so it is unset); GOOGLE_GENAI_USE_VERTEXAI=false keeps an ambient Vertex setting off.
    _url("GOOGLE_GEMINI_BASE_URL", "gemini", "/gemini", "google.genai.Client"),
    _key("GEMINI_API_KEY", "gemini", "google.genai.Client"),
    _value("GOOGLE_GENAI_USE_VERTEXAI", "gemini", "false", "google.genai.Client"),
    # ollama: ollama.Client() reads the host (a URL with a path works).
    _url("OLLAMA_HOST", "ollama", "/ollama", "ollama.Client"),
    # cohere: cohere.ClientV2() reads the base URL and key.
    _url("CO_API_URL", "cohere", "/cohere", "cohere.ClientV2"),
    _key("CO_API_KEY", "cohere", "cohere.ClientV2"),
    # bedrock: botocore's service-specific endpoint variable; any key pair (SigV4 is not verified).
    _url("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "bedrock", "/bedrock", "boto3 bedrock-runtime"),
    _url("ANTHROPIC_BEDROCK_BASE_URL", "bedrock", "/bedrock", "anthropic.AnthropicBedrock"),
    _value("AWS_ACCESS_KEY_ID", "bedrock", "llmts-access-key", "boto3, AnthropicBedrock"),
    _value("AWS_SECRET_ACCESS_KEY", "bedrock", "llmts-secret-key", "boto3, AnthropicBedrock"),
    _value("AWS_REGION", "bedrock", "us-east-1", "AnthropicBedrock, AWS SDKs"),
    _value("AWS_DEFAULT_REGION", "bedrock", "us-east-1", "boto3"),
)

# Ambient variables that would send a client built from the environment elsewhere or with another
# credential: the ``llmts_env`` fixture removes them, ``llmts env`` prints shell lines that unset them.
SDK_OVERRIDDEN_VARIABLES: tuple[str, ...] = (
    "ANTHROPIC_AUTH_TOKEN",
    "AZURE_OPENAI_AD_TOKEN",
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_ENTERPRISE",
)


def sdk_environment(provider_base: str, credential: Callable[[str], str]) -> dict[str, str]:
    """The variables for a session whose provider base is ``provider_base``; ``credential(namespace)``
    gives the key its requests must carry."""
    base = provider_base.rstrip("/")
    environment: dict[str, str] = {}
    for variable in SDK_VARIABLES:
        if variable.kind == "url":
            environment[variable.name] = base + variable.value
        elif variable.kind == "key":
            environment[variable.name] = credential(variable.namespace)
        else:
            environment[variable.name] = variable.value
    return environment


def _powershell_quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _fish_quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _dotenv_quote(value: str) -> str:
    if value and all(c.isalnum() or c in "-_./:@%+,=" for c in value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


_LINES: dict[Shell, Callable[[str, str], str]] = {
    "sh": lambda name, value: f"export {name}={shlex.quote(value)}",
    "fish": lambda name, value: f"set -gx {name} {_fish_quote(value)};",
    "powershell": lambda name, value: f"$env:{name} = {_powershell_quote(value)}",
    "dotenv": lambda name, value: f"{name}={_dotenv_quote(value)}",
}


_UNSET: dict[Shell, Callable[[str], str]] = {
    "sh": lambda name: f"unset {name}",
    "fish": lambda name: f"set -e {name};",
    "powershell": lambda name: f"Remove-Item Env:{name} -ErrorAction SilentlyContinue",
}


def render_environment(
    environment: dict[str, str], shell: Shell, unset: tuple[str, ...] = SDK_OVERRIDDEN_VARIABLES
) -> str:
    """The variables as lines the shell evaluates (``eval "$(llmts env)"``) or a ``.env`` file; shells
    first unset ``unset`` (a ``.env`` file cannot)."""
    line = _LINES[shell]
    unset_line = _UNSET.get(shell)
    head = "".join(unset_line(name) + "\n" for name in unset) if unset_line is not None else ""
    return head + "".join(line(name, value) + "\n" for name, value in environment.items())
