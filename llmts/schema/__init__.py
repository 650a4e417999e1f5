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

_HOMES = {
    "CodeInterpreterImageOutput": "llmts.schema.items",
    "CodeInterpreterItem": "llmts.schema.items",
    "CodeInterpreterLogsOutput": "llmts.schema.items",
    "Completion": "llmts.schema.neutral",
    "ConfigBuilder": "llmts.schema.builder",
    "ContainerFileCitation": "llmts.schema.items",
    "ControlError": "llmts.schema.control",
    "ControlErrorBody": "llmts.schema.control",
    "ConversationBuilder": "llmts.schema.builder",
    "ConversationCapacity": "llmts.schema.conversations",
    "ConversationGraph": "llmts.schema.conversations",
    "ConversationStatus": "llmts.schema.conversations",
    "ConversationStep": "llmts.schema.conversations",
    "ErrorFixture": "llmts.schema.config",
    "FileCitation": "llmts.schema.items",
    "FileSearchItem": "llmts.schema.items",
    "FileSearchResult": "llmts.schema.items",
    "LIMITS": "llmts.schema.config",
    "MatchExplanation": "llmts.schema.conversations",
    "MessageItem": "llmts.schema.items",
    "NeutralMessage": "llmts.schema.neutral",
    "NeutralRequest": "llmts.schema.neutral",
    "NeutralToolCall": "llmts.schema.neutral",
    "PROVIDER_NAMESPACES": "llmts.schema.config",
    "QueueStatus": "llmts.schema.control",
    "ResponseFixture": "llmts.schema.config",
    "Scenario": "llmts.schema.config",
    "ScenarioBuilder": "llmts.schema.builder",
    "ScriptedOutput": "llmts.schema.neutral",
    "SessionConfig": "llmts.schema.config",
    "SessionInfo": "llmts.schema.control",
    "StepBuilder": "llmts.schema.builder",
    "StepWhen": "llmts.schema.conversations",
    "ToolCallFixture": "llmts.schema.config",
    "ToolChoice": "llmts.schema.neutral",
    "UrlCitation": "llmts.schema.items",
    "Usage": "llmts.schema.neutral",
    "UsageOverride": "llmts.schema.config",
    "WebSearchItem": "llmts.schema.items",
    "format_location": "llmts.schema.validation",
    "parse_session_config": "llmts.schema.validation",
    "parse_session_config_json": "llmts.schema.validation",
}


if not TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_names(globals(), _HOMES, __all__)
