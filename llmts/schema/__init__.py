"""Pydantic models: configuration, neutral request/result, control-API bodies.

The names below load on first use (PEP 562): importing any ``llmts.schema`` module runs this file first,
and the server's worker needs neither the builders (``ConfigBuilder`` and the A2A card builder behind it)
nor the other modules a name here would load (docs/design/memory.md, "The two processes' import sets").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llmts.lazy_names import lazy_names as _lazy_names

if TYPE_CHECKING:
    from llmts.schema.builder import ConfigBuilder, ConversationBuilder, ScenarioBuilder, StepBuilder
    from llmts.schema.config import (
        LIMITS,
        PROVIDER_NAMESPACES,
        ErrorFixture,
        ResponseFixture,
        Scenario,
        SessionConfig,
        ToolCallFixture,
        UsageOverride,
    )
    from llmts.schema.control import ControlError, ControlErrorBody, QueueStatus, SessionInfo
    from llmts.schema.conversations import (
        ConversationCapacity,
        ConversationGraph,
        ConversationStatus,
        ConversationStep,
        MatchExplanation,
        StepWhen,
    )
    from llmts.schema.items import (
        CodeInterpreterImageOutput,
        CodeInterpreterItem,
        CodeInterpreterLogsOutput,
        ContainerFileCitation,
        FileCitation,
        FileSearchItem,
        FileSearchResult,
        MessageItem,
        UrlCitation,
        WebSearchItem,
    )
    from llmts.schema.neutral import (
        Completion,
        NeutralMessage,
        NeutralRequest,
        NeutralToolCall,
        ScriptedOutput,
        ToolChoice,
        Usage,
    )
    from llmts.schema.validation import format_location, parse_session_config, parse_session_config_json

__all__ = [
    "LIMITS",
    "PROVIDER_NAMESPACES",
    "CodeInterpreterImageOutput",
    "CodeInterpreterItem",
    "CodeInterpreterLogsOutput",
    "Completion",
    "ConfigBuilder",
    "ContainerFileCitation",
    "ControlError",
    "ControlErrorBody",
    "ConversationBuilder",
    "ConversationCapacity",
    "ConversationGraph",
    "ConversationStatus",
    "ConversationStep",
    "ErrorFixture",
    "FileCitation",
    "FileSearchItem",
    "FileSearchResult",
    "MatchExplanation",
    "MessageItem",
    "NeutralMessage",
    "NeutralRequest",
    "NeutralToolCall",
    "QueueStatus",
    "ResponseFixture",
    "Scenario",
    "ScenarioBuilder",
    "ScriptedOutput",
    "SessionConfig",
    "SessionInfo",
    "StepBuilder",
    "StepWhen",
    "ToolCallFixture",
    "ToolChoice",
    "UrlCitation",
    "Usage",
    "UsageOverride",
    "WebSearchItem",
    "format_location",
    "parse_session_config",
    "parse_session_config_json",
]

# Each home module and the public names it defines (the TYPE_CHECKING imports above, for run time).
_HOMES = {
    "llmts.schema.builder": ("ConfigBuilder", "ConversationBuilder", "ScenarioBuilder", "StepBuilder"),
    "llmts.schema.config": (
        "ErrorFixture",
        "LIMITS",
        "PROVIDER_NAMESPACES",
        "ResponseFixture",
        "Scenario",
        "SessionConfig",
        "ToolCallFixture",
        "UsageOverride",
    ),
    "llmts.schema.control": ("ControlError", "ControlErrorBody", "QueueStatus", "SessionInfo"),
    "llmts.schema.conversations": (
        "ConversationCapacity",
        "ConversationGraph",
        "ConversationStatus",
        "ConversationStep",
        "MatchExplanation",
        "StepWhen",
    ),
    "llmts.schema.items": (
        "CodeInterpreterImageOutput",
        "CodeInterpreterItem",
        "CodeInterpreterLogsOutput",
        "ContainerFileCitation",
        "FileCitation",
        "FileSearchItem",
        "FileSearchResult",
        "MessageItem",
        "UrlCitation",
        "WebSearchItem",
    ),
    "llmts.schema.neutral": (
        "Completion",
        "NeutralMessage",
        "NeutralRequest",
        "NeutralToolCall",
        "ScriptedOutput",
        "ToolChoice",
        "Usage",
    ),
    "llmts.schema.validation": ("format_location", "parse_session_config", "parse_session_config_json"),
}


if not TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_names(globals(), _HOMES, __all__)
