"""The environment variables that point the official SDKs (and the frameworks built on them) at a session.

Each provider declares the variables its SDKs read on its own ``info.py`` (``ProviderInfo.env`` and
``env_overridden``, docs/architecture.md, "Providers and the adapter registry"); the catalog collects
them, registered providers first. ``llmts env`` prints them, the ``llmts_env`` pytest fixture sets them
(docs/pytest-plugin.md), ``SessionClient.sdk_environment()`` returns them. A URL row is a path under the
session's provider base; a key row is the session's credential for its namespace; a value row is a
constant. docs/server.md lists which SDK reads which variable.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Literal

from llmts.catalog import registry as catalog
from llmts.catalog.info import EnvVariable

__all__ = [
    "SDK_OVERRIDDEN_VARIABLES",
    "SDK_VARIABLES",
    "SHELLS",
    "Shell",
    "render_environment",
    "sdk_environment",
]

Shell = Literal["sh", "fish", "powershell", "dotenv"]
SHELLS: tuple[Shell, ...] = ("sh", "fish", "powershell", "dotenv")

# Every provider's variables, in catalog order (names are unique across providers).
SDK_VARIABLES: tuple[EnvVariable, ...] = tuple(variable for _, variable in catalog.CATALOG.env_variables)

# Ambient variables that would send a client built from the environment elsewhere or with another
# credential: the ``llmts_env`` fixture removes them, ``llmts env`` prints shell lines that unset them.
SDK_OVERRIDDEN_VARIABLES: tuple[str, ...] = catalog.CATALOG.env_overridden


def sdk_environment(provider_base: str, credential: Callable[[str], str]) -> dict[str, str]:
    """The variables for a session whose provider base is ``provider_base``; ``credential(namespace)``
    gives the key its requests must carry."""
    base = provider_base.rstrip("/")
    environment: dict[str, str] = {}
    for namespace, variable in catalog.CATALOG.env_variables:  # read per call: tests swap the registry
        if variable.kind == "url":
            environment[variable.name] = base + variable.value
        elif variable.kind == "key":
            environment[variable.name] = credential(namespace)
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
