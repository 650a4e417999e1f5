"""Exact OpenAI input and output tokens (docs/tokens.md): the counts against bpe_openai's own
tiktoken-compatible encoder and a literal copy of the cookbook's functions, and against the usage
examples OpenAI publishes."""

from __future__ import annotations

import base64
import io
import json
import struct
import subprocess
import sys
from typing import Any

import pytest
from PIL import Image

from llmts.providers.chat_completions import encodings
from llmts.providers.chat_completions.encodings import (
    CL100K_BASE,
    LONG_TEXTS,
    MEMO_MAX_TEXT_CHARS,
    MEMO_MAX_TEXTS,
    MEMO_MIN_CHARS,
    O200K_BASE,
    encoding_for_model,
    text_counter,
)
from llmts.providers.chat_completions.media_tokens import (
    audio_tokens,
    content_media_tokens,
    image_size,
    image_tokens,
)
from llmts.providers.chat_completions.parse import chat_request_from_body
from llmts.runtime.admission import input_tokens
from llmts.runtime.tokens import estimate_input_tokens
from tests.support.openai_tokens import cl100k, own_encoding

# The cookbook's examples ("How to count tokens with tiktoken", sections 6 and 7), verbatim.
COOKBOOK_MESSAGES: list[dict[str, Any]] = [
    {
        "role": "system",
        "content": "You are a helpful, pattern-following assistant that translates corporate jargon "
        "into plain English.",
    },
    {"role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth."},
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Things working well together will increase revenue.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "Let's circle back when we have more bandwidth to touch base on opportunities for "
        "increased leverage.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Let's talk later when we're less busy about how to do better.",
    },
    {
        "role": "user",
        "content": "This late pivot means we don't have time to boil the ocean for the client deliverable.",
    },
]
COOKBOOK_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "description": "Get the current weather in a given location",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {
                        "type": "string",
                        "description": "The city and state, e.g. San Francisco, CA",
                    },
                    "unit": {
                        "type": "string",
                        "description": "The unit of temperature to return",
                        "enum": ["celsius", "fahrenheit"],
                    },
                },
                "required": ["location"],
            },
        },
    }
]
COOKBOOK_TOOL_MESSAGES = [
    {
        "role": "system",
        "content": "You are a helpful assistant that can answer to questions about the weather.",
    },
    {"role": "user", "content": "What's the weather like in San Francisco?"},
]

MULTILINGUAL = [
    "Hello, world!",
    "お誕生日おめでとう",
    "Привет, как дела? Всё хорошо.",
    "مرحبا بالعالم",
    "नमस्ते दुनिया",
    "Ελληνικά γράμματα και 数字 123,456.78",
    "emoji 👩‍👩‍👧‍👦 and 🇫🇷 flags",
    "def f(x):\n    return x ** 2  # code\n\n\n",
    "<|endoftext|> is plain text here",
    "   leading and trailing spaces   ",
    "a" * 5000,
]


def _prompt(model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
    body: dict[str, Any] = {"model": model, "messages": messages}
    if tools is not None:
        body["tools"] = tools
    return input_tokens(chat_request_from_body(body))


def _cookbook_messages(messages: list[dict[str, Any]], encoding: Any) -> int:
    """num_tokens_from_messages of the cookbook (tokens_per_message 3, tokens_per_name 1)."""
    total = 0
    for message in messages:
        total += 3
        for key, value in message.items():
            total += len(encoding.encode_ordinary(value))  # special tokens' text is plain text
            if key == "name":
                total += 1
    return total + 3


def _cookbook_tools(functions: list[dict[str, Any]], encoding: Any, func_init: int) -> int:
    """num_tokens_for_tools of the cookbook, without the messages."""
    total = 0
    for tool in functions:
        total += func_init
        function = tool["function"]
        total += len(encoding.encode(function["name"] + ":" + function["description"].removesuffix(".")))
        properties = function["parameters"]["properties"]
        if properties:
            total += 3
            for key, spec in properties.items():
                total += 3
                if "enum" in spec:
                    total += -3 + sum(3 + len(encoding.encode(item)) for item in spec["enum"])
                total += len(encoding.encode(f"{key}:{spec['type']}:{spec['description'].removesuffix('.')}"))
    return total + 12 if functions else total


@pytest.mark.parametrize(
    ("model", "published"),
    [("gpt-3.5-turbo", 129), ("gpt-4-0613", 129), ("gpt-4", 129), ("gpt-4o", 124), ("gpt-4o-mini", 124)],
)
def test_the_cookbooks_published_prompt_tokens(model: str, published: int) -> None:
    assert _prompt(model, COOKBOOK_MESSAGES) == published


@pytest.mark.parametrize(
    ("model", "published"), [("gpt-3.5-turbo", 105), ("gpt-4", 105), ("gpt-4o", 101), ("gpt-4o-mini", 101)]
)
def test_the_cookbooks_published_prompt_tokens_with_tools(model: str, published: int) -> None:
    assert _prompt(model, COOKBOOK_TOOL_MESSAGES, COOKBOOK_TOOLS) == published


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", O200K_BASE),
        ("gpt-4o-mini-2024-07-18", O200K_BASE),
        ("chatgpt-4o-latest", O200K_BASE),
        ("gpt-4.1-nano", O200K_BASE),
        ("gpt-4.5-preview", O200K_BASE),
        ("gpt-5", O200K_BASE),
        ("gpt-5-mini", O200K_BASE),
        ("o1", O200K_BASE),
        ("o3-mini", O200K_BASE),
        ("o4-mini", O200K_BASE),
        ("ft:gpt-4o-mini-2024-07-18:acme::abc123", O200K_BASE),
        ("gpt-4", CL100K_BASE),
        ("gpt-4-turbo", CL100K_BASE),
        ("gpt-4-0613", CL100K_BASE),
        ("gpt-3.5-turbo-0125", CL100K_BASE),
        ("llama3.2", None),
        ("claude-sonnet-4-5", None),
        ("text-davinci-003", None),
    ],
)
def test_each_model_family_has_its_encoding(model: str, encoding: str | None) -> None:
    assert encoding_for_model(model) == encoding


def test_an_unknown_model_keeps_the_estimate() -> None:
    messages = [{"role": "user", "content": "How many tokens?"}]
    request = chat_request_from_body({"model": "llama3.2", "messages": messages})

    assert request.exact_tokens is None
    assert input_tokens(request) == estimate_input_tokens(request.messages) == 3 + 4 + 4


@pytest.mark.parametrize("encoding", [O200K_BASE, CL100K_BASE])
@pytest.mark.parametrize("text", MULTILINGUAL)
def test_text_counts_are_the_tokenizers_own(encoding: str, text: str) -> None:
    own = own_encoding(encoding)

    assert text_counter(encoding)(text) == len(own.encode_ordinary(text))
    assert text_counter(encoding)(text) == len(own.encode_ordinary(text))  # the memo's answer


@pytest.mark.parametrize(
    ("model", "encoding", "func_init"), [("gpt-4o", O200K_BASE, 7), ("gpt-4", CL100K_BASE, 10)]
)
def test_tool_schemas_follow_the_cookbooks_rule(model: str, encoding: str, func_init: int) -> None:
    own = own_encoding(encoding)
    tools = [
        *COOKBOOK_TOOLS,
        {
            "type": "function",
            "function": {
                "name": "book_flight",
                "description": "Réserver un vol. Prix en € inclus.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "from": {"type": "string", "description": "出発地の空港コード."},
                        "seats": {"type": "integer", "description": "How many seats"},
                        "class": {
                            "type": "string",
                            "description": "",
                            "enum": ["economy", "business", "first"],
                        },
                    },
                },
            },
        },
        {
            "type": "function",
            "function": {"name": "ping", "description": "", "parameters": {"properties": {}}},
        },
    ]
    messages = [{"role": "user", "content": "Book me a flight."}]

    expected = _cookbook_messages(messages, own) + _cookbook_tools(tools, own, func_init)
    assert _prompt(model, messages, tools) == expected


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4"])
def test_a_long_multilingual_history_counts_as_the_cookbook_does(model: str) -> None:
    own = own_encoding(encoding_for_model(model) or "")
    history: list[dict[str, Any]] = [{"role": "system", "content": "You answer in the user's language."}]
    for turn in range(150):
        history.append({"role": "user", "content": f"{MULTILINGUAL[turn % len(MULTILINGUAL)]} (turn {turn})"})
        history.append(
            {"role": "assistant", "content": f"Réponse numéro {turn}: {'очень ' * (turn % 7)}bien."}
        )
    history.append({"role": "user", "name": "alice", "content": "Résumé, s'il te plaît."})

    assert _prompt(model, history) == _cookbook_messages(history, own)


def test_tool_calls_and_results_count_their_names_arguments_and_text() -> None:
    count = text_counter(O200K_BASE)
    arguments = json.dumps({"city": "Paris", "unit": "celsius"})
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "18 degrees"},
    ]

    assistant = 3 + count("assistant") + count("get_weather") + count(arguments)
    tool = 3 + count("tool") + count("18 degrees")  # the call id is not counted
    assert _prompt("gpt-4o", messages) == 3 + (3 + count("user") + count("Weather?")) + assistant + tool


def _data_url(image: bytes, kind: str) -> str:
    return f"data:image/{kind};base64,{base64.b64encode(image).decode()}"


def _pil(width: int, height: int, kind: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (10, 20, 30)).save(out, format=kind)
    return out.getvalue()


@pytest.mark.parametrize("kind", ["PNG", "JPEG", "GIF", "WEBP"])
def test_image_sizes_are_read_from_the_header(kind: str) -> None:
    assert image_size(_pil(640, 480, kind)) == (640, 480)
    assert image_size(b"not an image") is None


@pytest.mark.parametrize(
    ("size", "detail", "tokens"),
    # OpenAI's published examples, then edge cases of the same rule.
    [
        ((1024, 1024), "high", 765),
        ((2048, 4096), "high", 1105),
        ((4096, 8192), "low", 85),
        ((512, 512), "high", 255),
        ((100, 100), "auto", 255),
        ((768, 768), "high", 765),
        ((513, 200), "high", 425),
    ],
)
def test_image_tokens_follow_the_tile_rule(size: tuple[int, int], detail: str, tokens: int) -> None:
    assert image_tokens(*size, detail) == tokens


def test_an_image_in_a_chat_message_adds_its_tiles() -> None:
    count = text_counter(O200K_BASE)
    parts = [
        {"type": "text", "text": "What is this?"},
        {
            "type": "image_url",
            "image_url": {"url": _data_url(_pil(2048, 4096, "PNG"), "png"), "detail": "high"},
        },
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "low"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/dog.png"}},  # size unknown: 1024x1024
    ]

    text_only = 3 + 3 + count("user") + count("What is this?")
    assert _prompt("gpt-4o", [{"role": "user", "content": parts}]) == text_only + 1105 + 85 + 765


def _wav(seconds: float, rate: int = 16_000) -> str:
    frames = int(seconds * rate)
    header = b"RIFF" + struct.pack("<I", 36 + frames * 2) + b"WAVEfmt "
    header += (
        struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16) + b"data" + struct.pack("<I", frames * 2)
    )
    return base64.b64encode(header + bytes(frames * 2)).decode()


def test_audio_is_estimated_at_ten_tokens_a_second() -> None:
    assert audio_tokens(_wav(2.0), "wav") == 20
    assert audio_tokens(base64.b64encode(bytes(32_000)).decode(), "mp3") == 20  # 16,000 bytes a second
    part = {"type": "input_audio", "input_audio": {"data": _wav(1.5), "format": "wav"}}
    assert content_media_tokens([part]) == 15


def test_long_texts_are_memoised_within_bounds() -> None:
    counter: Any = text_counter(CL100K_BASE)
    texts = [f"{index} " + "word " * (MEMO_MIN_CHARS // 5 + 1) for index in range(MEMO_MAX_TEXTS + 50)]
    counts = [counter(text) for text in texts]

    assert len(counter._memo) == MEMO_MAX_TEXTS  # the oldest were forgotten
    assert [counter(text) for text in texts[-10:]] == counts[-10:]
    assert counter(texts[0]) == counts[0]  # forgotten, counted again


def test_texts_too_long_to_keep_are_memoised_by_digest_within_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    counter: Any = encodings._Counter(CL100K_BASE)
    long_text = "lorem ipsum dolor sit amet " * (MEMO_MAX_TEXT_CHARS // 27 + 1)
    real = counter(long_text)
    assert real == cl100k(long_text)  # the memo's count is bpe-openai's

    counted: list[str] = []

    class _Recording:
        """bpe-openai's tokenizer, where texts this long go, replaced by one that records its calls (set
        as the counter's attribute, not a method, so the compiled build can take it)."""

        def count(self, text: str) -> int:
            counted.append(text)
            return len(text)

    monkeypatch.setattr(counter, "_linear", _Recording())
    assert counter(long_text[:-1] + long_text[-1]) == real and counted == []  # a new string, the same text
    # A lone surrogate makes a text of its own, though its count repairs it.
    assert counter(long_text + "\ud800") == len(long_text) + 1 and len(counted) == 1
    others = [f"{index} {long_text}" for index in range(LONG_TEXTS)]
    assert [counter(text) for text in others] == [len(text) for text in others]
    assert len(counter._long) == LONG_TEXTS  # the oldest were forgotten
    counted.clear()
    assert counter(others[0]) == len(others[0]) and counted == []  # a hit: now the most recent
    counter("one more " + long_text)  # forgets the least recently used: others[1], not others[0]
    counted.clear()
    assert counter(others[0]) == len(others[0]) and counted == []
    assert counter(others[1]) == len(others[1]) and counted == [others[1]]
    assert counter(long_text) == len(long_text)  # forgotten long ago, counted again


def test_the_encodings_load_on_the_first_openai_request_only() -> None:
    """An idle server (and one that answers other models) never builds an encoding's ranks, and none ever
    imports bpe-openai's package or maps its Rust library (llmts reads only its data files). The ``regex``
    module loads with the first text that is not all ASCII."""
    script = """
import sys
from llmts.server.app import create_app
from llmts.providers.chat_completions import encodings
from llmts.providers.chat_completions.parse import chat_request_from_body

def loaded():
    return encodings._COUNTERS[encodings.O200K_BASE]._tokenizer is not None

create_app()
request = chat_request_from_body({"model": "llama3.2", "messages": [{"role": "user", "content": "Hi"}]})
assert request.exact_tokens is None
before = loaded()
request = chat_request_from_body({"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]})
assert request.exact_tokens is not None
ascii_only = "regex" not in sys.modules
request = chat_request_from_body({"model": "gpt-4o", "messages": [{"role": "user", "content": "Hé"}]})
assert request.exact_tokens is not None
mapped = any("bpe_openai" in line for line in open("/proc/self/maps"))
print(before, loaded(), mapped, "bpe_openai" in sys.modules, ascii_only, "regex" in sys.modules)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )

    assert done.stdout.split() == ["False", "True", "False", "False", "True", "True"]
