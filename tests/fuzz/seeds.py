"""Valid requests per route family: the seeds the fuzz mutates, and realistic path arguments."""

from __future__ import annotations

from typing import Any

_FUNCTION = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}

CHAT: list[dict[str, Any]] = [
    {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "Hi"}]},
    {
        "model": "gpt-4.1-mini",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [
            {"role": "system", "content": "Be brief"},
            {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ],
        "tools": [_FUNCTION],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "response_format": {"type": "json_object"},
        "n": 1,
        "max_tokens": 10,
        "temperature": 0.5,
    },
]

RESPONSES: list[dict[str, Any]] = [
    {"model": "gpt-4.1-mini", "input": "Hi"},
    {
        "model": "gpt-4.1-mini",
        "instructions": "Be brief",
        "stream": True,
        "store": True,
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Let me see"}],
            },
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
            {"type": "reasoning", "summary": []},
        ],
        "tools": [
            {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}},
            {
                "type": "web_search",
                "search_context_size": "low",
                "user_location": {"type": "approximate", "city": "Paris"},
                "filters": {"allowed_domains": ["example.com"]},
            },
            {
                "type": "file_search",
                "vector_store_ids": ["vs_1"],
                "max_num_results": 3,
                "ranking_options": {"ranker": "auto", "score_threshold": 0.5},
            },
            {"type": "code_interpreter", "container": {"type": "auto", "file_ids": []}},
        ],
        "tool_choice": "auto",
        "include": ["file_search_call.results"],
        "text": {"format": {"type": "json_schema", "name": "x", "schema": {"type": "object"}}},
        "previous_response_id": "resp_123",
        "max_output_tokens": 20,
    },
]

INPUT_TOKENS: list[dict[str, Any]] = [{"model": "gpt-4.1-mini", "input": "Hi"}, RESPONSES[1]]

ANTHROPIC: list[dict[str, Any]] = [
    {"model": "gpt-4.1-mini", "max_tokens": 100, "messages": [{"role": "user", "content": "Hi"}]},
    {
        "model": "gpt-4.1-mini",
        "max_tokens": 100,
        "stream": True,
        "system": [{"type": "text", "text": "Be brief", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "tu_1", "name": "get_weather", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "sunny"}]},
        ],
        "tools": [{"name": "get_weather", "input_schema": {"type": "object", "properties": {}}}],
        "tool_choice": {"type": "tool", "name": "get_weather"},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "metadata": {"user_id": "u"},
        "temperature": 0.1,
    },
]

COHERE: list[dict[str, Any]] = [
    {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "Hi"}], "stream": True},
    {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "tool_plan": "I will use get_weather.",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": [{"type": "document", "document": {"data": {"t": 1}}}],
            },
        ],
        "tools": [_FUNCTION],
        "tool_choice": "REQUIRED",
        "documents": ["Paris is sunny.", {"id": "d1", "data": {"text": "Oslo is cold."}}],
        "citation_options": {"mode": "FAST"},
        "response_format": {"type": "json_object", "json_schema": {"type": "object"}},
    },
]

GEMINI: list[dict[str, Any]] = [
    {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]},
    {
        "systemInstruction": {"parts": [{"text": "Be brief"}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}],
            },
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "get_weather", "response": {"result": "sunny"}}}],
            },
        ],
        "tools": [
            {
                "functionDeclarations": [
                    {"name": "get_weather", "parameters": {"type": "OBJECT", "properties": {}}}
                ]
            }
        ],
        "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}},
        "generationConfig": {
            "temperature": 0.2,
            "maxOutputTokens": 10,
            "responseMimeType": "application/json",
        },
    },
    {
        "contents": [{"role": "user", "parts": [{"text": "a red fox"}]}],
        "generationConfig": {"responseModalities": ["TEXT", "IMAGE"]},
    },
]

OLLAMA: list[dict[str, Any]] = [
    {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "Hi"}], "stream": False},
    {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "system", "content": "Be brief"},
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
            },
            {"role": "tool", "content": "sunny", "tool_name": "get_weather"},
        ],
        "tools": [_FUNCTION],
        "format": {"type": "object", "properties": {"a": {"type": "string"}}},
        "think": "low",
        "options": {"temperature": 0.1},
    },
    {"model": "gpt-4.1-mini", "prompt": "Hi", "system": "Be brief", "format": "json", "stream": True},
]

CONVERSE: list[dict[str, Any]] = [
    {"messages": [{"role": "user", "content": [{"text": "Hi"}]}]},
    {
        "system": [{"text": "Be brief"}, {"cachePoint": {"type": "default"}}],
        "messages": [
            {"role": "user", "content": [{"text": "Weather?"}]},
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {"city": "Paris"}}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": "t1", "content": [{"text": "sunny"}, {"json": {"c": 20}}]}},
                    {"cachePoint": {"type": "default"}},
                ],
            },
        ],
        "toolConfig": {
            "tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}],
            "toolChoice": {"tool": {"name": "get_weather"}},
        },
        "outputConfig": {
            "textFormat": {"type": "json_schema", "structure": {"jsonSchema": {"schema": "{}"}}}
        },
        "inferenceConfig": {"maxTokens": 10},
    },
]

BEDROCK_INVOKE: list[dict[str, Any]] = [
    {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "Hi"}],
    },
    # Amazon Nova (messages-v1) and Amazon Titan Text: the model id picks the body family.
    {
        "schemaVersion": "messages-v1",
        "system": [{"text": "Be brief"}],
        "messages": CONVERSE[1]["messages"],
        "toolConfig": CONVERSE[1]["toolConfig"],
        "inferenceConfig": {"maxTokens": 10, "temperature": 0.5, "topK": 20, "stopSequences": ["x"]},
    },
    {
        "inputText": "User: Hi\nBot:",
        "textGenerationConfig": {"maxTokenCount": 10, "temperature": 0.5, "topP": 0.9, "stopSequences": []},
    },
]
# The model id each BEDROCK_INVOKE seed is meant for (its body family).
BEDROCK_INVOKE_MODELS = [
    "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
    "us.amazon.nova-lite-v1:0",
    "amazon.titan-text-express-v1",
]

# The operations other than chat (docs/embeddings.md, docs/moderation.md, docs/rerank.md).
EMBEDDINGS: list[dict[str, Any]] = [
    {"model": "text-embedding-3-small", "input": "Hi"},
    {"model": "text-embedding-3-small", "input": ["a", "b"], "encoding_format": "base64", "dimensions": 8},
    {"model": "m", "input": [[1, 2], [3]], "encoding_format": "float", "user": "u"},
]
MODERATION: list[dict[str, Any]] = [
    {"input": "Hi"},
    {
        "model": "omni-moderation-latest",
        "input": [{"type": "text", "text": "x"}, {"type": "image_url", "image_url": {"url": "data:,"}}],
    },
]
GEMINI_EMBED: list[dict[str, Any]] = [
    {
        "requests": [
            {
                "model": "models/gemini-embedding-001",
                "content": {"parts": [{"text": "Hi"}]},
                "taskType": "RETRIEVAL_QUERY",
                "outputDimensionality": 8,
            }
        ]
    },
    {"content": {"parts": [{"text": "Hi"}, {"text": "there"}]}, "outputDimensionality": 8},
]
COHERE_EMBED: list[dict[str, Any]] = [
    {
        "model": "embed-v4.0",
        "texts": ["Hi"],
        "input_type": "search_query",
        "embedding_types": ["float", "int8", "binary", "base64"],
        "output_dimension": 256,
    },
    {
        "model": "embed-v4.0",
        "inputs": [
            {
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "image_url", "image_url": {"url": "data:,"}},
                ]
            }
        ],
        "input_type": "image",
    },
]
COHERE_RERANK: list[dict[str, Any]] = [
    {
        "model": "rerank-v3.5",
        "query": "q",
        "documents": ["a", {"text": "b"}],
        "top_n": 1,
        "return_documents": True,
    }
]
OLLAMA_EMBED: list[dict[str, Any]] = [
    {"model": "nomic-embed-text", "input": ["a", "b"], "dimensions": 8},
    {"model": "nomic-embed-text", "prompt": "Hi"},
]
BEDROCK_INVOKE += [
    {"inputText": "Hi", "dimensions": 256, "normalize": True, "embeddingTypes": ["float", "binary"]},
    {"texts": ["a"], "input_type": "search_document", "embedding_types": ["int8"]},
    {"query": "q", "documents": ["a", "b"], "top_n": 1, "api_version": 2},
]
BEDROCK_INVOKE_MODELS += ["amazon.titan-embed-text-v2:0", "cohere.embed-english-v3", "cohere.rerank-v3-5:0"]
assert len(BEDROCK_INVOKE_MODELS) == len(BEDROCK_INVOKE)  # one model id per seed body
# OpenAI images (JSON generations) and speech; small sizes keep each generated answer cheap.
IMAGES: list[dict[str, Any]] = [
    {"model": "gpt-image-1.5", "prompt": "a fox", "size": "64x64", "n": 2, "response_format": "url"},
    {"model": "gpt-image-1.5", "prompt": "a fox", "size": "32x48", "stream": True, "partial_images": 2},
]
SPEECH: list[dict[str, Any]] = [
    {"model": "gpt-4o-mini-tts", "voice": "alloy", "input": "Hi there", "response_format": "wav", "speed": 2},
    {
        "model": "gpt-4o-mini-tts",
        "voice": {"id": "v1"},
        "input": "Hi",
        "response_format": "pcm",
        "stream_format": "sse",
    },
]

# The routes whose bodies are multipart forms, fuzzed by test_fuzz_media.py (no JSON seeds).
MULTIPART_ROUTES: list[str] = [
    "/openai/v1/images/edits",
    "/openai/v1/audio/transcriptions",
    "/openai/v1/audio/translations",
]

# Realistic values for werkzeug path arguments, by argument name.
PATH_ARGUMENTS: dict[str, list[str]] = {
    "model": [
        "gpt-4.1-mini",
        "gpt-4o",
        "claude-sonnet-4-5",
        "gemini-2.5-flash",
        "models/gemini-2.5-flash",
        "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        "amazon.titan-embed-text-v2:0",
        "cohere.embed-english-v3",
        "cohere.rerank-v3-5:0",
        "us.amazon.nova-lite-v1:0",
        "amazon.titan-text-express-v1",
    ],
    "version": ["v1", "v1beta", "v2"],
    "deployment": ["gpt-4.1-mini", "dep"],
    "response_id": ["resp_123", "resp_"],
    "session_id": ["default", "nope"],
    "image_id": ["img_0", "img_"],
}

CONFIGURE: list[dict[str, Any]] = [
    {"scenarios": [{"responses": [{"type": "text", "content": "hi"}]}]},
    {
        "scenarios": [
            {
                "id": "s1",
                "model": "gpt-4.1-mini",
                "terminal_policy": "restart",
                "responses": [
                    {"type": "text", "content": "hi", "delay_ms": 0},
                    {"type": "tool_call", "name": "get_weather", "arguments": {"city": "Paris"}},
                    {"type": "error", "status": 429, "code": "rate_limited", "message": "slow down"},
                ],
            }
        ],
    },
    {
        "record": True,
        "recording": {"max_exchanges": 5, "redact": ["sk-[a-z]+"]},
        "scenarios": [
            {
                "responses": [
                    {"recorded": {"status": 200, "headers": [["Content-Type", "text/plain"]], "body": "x"}}
                ]
            }
        ],
    },
]

VERIFY: list[dict[str, Any]] = [
    {"expectations": [{"provider": "openai", "count": 1}]},
    {"expectations": [{"operation": "chat.completions", "min_count": 0, "max_count": 3}], "strict": True},
]

EXPLAIN: list[dict[str, Any]] = [
    {"provider": "openai", "operation": "chat.completions", "body": CHAT[0]},
    {"provider": "anthropic", "body": ANTHROPIC[0]},
]
