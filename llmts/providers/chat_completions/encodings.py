"""OpenAI models' own encodings, offline (docs/tokens.md): which encoding a model uses, and a text
counter per encoding over the mergeable ranks bpe-openai's wheel ships for o200k_base and cl100k_base
(counted by ``byte_pair.py``).

An encoding is loaded on its first count, so a server that never answers an OpenAI model never pays for
it: mapped from the rank cache in about 10 ms (``rank_cache.py``), or built in about 0.3 s
where there is no cache yet (4 MiB resident for o200k_base, 2 MiB for cl100k_base); the ``regex``
module they share (1.4 MiB) loads with the first text that is not all ASCII. A text over 64 Ki characters,
or one that would cost llmts's counter too much (``BytePairCounter.count``), is counted by bpe-openai's
compiled tokenizer instead, linear in its length: it is loaded on the first such text (about 35 MiB for
o200k_base). Counting is a pure function of the text; long texts' counts are memoised (bounded) because
a conversation sends the same system prompt and history again on every turn.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import threading
from collections import OrderedDict
from collections.abc import Callable
from hashlib import blake2b
from pathlib import Path
from typing import Any, Protocol, TypeVar

from llmts.providers.chat_completions.byte_pair import BytePairCounter, MergeableRanks
from llmts.providers.chat_completions.rank_cache import load_ranks
from llmts.runtime.allocator import trim
from llmts.runtime.file_pages import page_out

__all__ = [
    "CL100K_BASE",
    "LONG_TEXTS",
    "MEMO_MAX_CHARS",
    "MEMO_MAX_TEXTS",
    "MEMO_MAX_TEXT_CHARS",
    "MEMO_MIN_CHARS",
    "O200K_BASE",
    "SHORT_TEXTS",
    "encoding_for_model",
    "ranks_file",
    "text_counter",
]

O200K_BASE = "o200k_base"
CL100K_BASE = "cl100k_base"

# Checked in order, so the GPT-4o family is matched before GPT-4 (docs/tokens.md, "Which models count
# exactly").
_PREFIXES: tuple[tuple[str, str], ...] = (
    ("gpt-4o", O200K_BASE),
    ("chatgpt-4o", O200K_BASE),
    ("gpt-4.1", O200K_BASE),
    ("gpt-4.5", O200K_BASE),
    ("gpt-5", O200K_BASE),
    ("o1", O200K_BASE),
    ("o3", O200K_BASE),
    ("o4", O200K_BASE),
    ("gpt-4", CL100K_BASE),
    ("gpt-3.5", CL100K_BASE),
)
# A fine-tuned model is named ``ft:<base model>:<org>:<suffix>:<id>``.
_FINE_TUNED = "ft:"

# Texts shorter than this (roles, names, short messages and answers) are kept in a plain dict, emptied
# when it holds SHORT_TEXTS of them: a lookup costs a tenth of counting a role's one token.
MEMO_MIN_CHARS = 256
SHORT_TEXTS = 4096
# The memo keeps at most this many texts and this many characters in all, per encoding (at most 8 MiB
# of strings even in four-byte characters), forgetting the least recently used first. A text longer
# than MEMO_MAX_TEXT_CHARS is kept by a digest of its UTF-8 bytes instead (at most LONG_TEXTS of them,
# least recently used first): hashing a million characters takes 2-7 ms, counting them 20-150.
MEMO_MAX_TEXTS = 2048
MEMO_MAX_CHARS = 2 * 1024 * 1024
MEMO_MAX_TEXT_CHARS = 64 * 1024
LONG_TEXTS = 256
_HASH_SLICE_CHARS = 64 * 1024
_Key = TypeVar("_Key", str, bytes)  # a memo's key: a text, or a long text's digest


# Models already looked up (the prefix scan costs a microsecond per request); at most this many.
_KNOWN_MODELS = 1024
_known: dict[str, str | None] = {}


def encoding_for_model(model: str) -> str | None:
    """The encoding ``model`` uses, or None for a model llmts has no tokenizer for."""
    try:
        return _known[model]
    except KeyError:
        pass
    name = model.removeprefix(_FINE_TUNED)
    found = next((encoding for prefix, encoding in _PREFIXES if name.startswith(prefix)), None)
    if len(_known) >= _KNOWN_MODELS:
        _known.clear()
    _known[model] = found
    return found


# The pre-tokenizing patterns, as tiktoken and bpe-openai publish them (tiktoken_ext/openai_public.py).
_PATTERNS = {
    O200K_BASE: "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
    CL100K_BASE: "|".join(
        [
            r"""'(?i:[sdmt]|ll|ve|re)""",
            r"""[^\r\n\p{L}\p{N}]?+\p{L}++""",
            r"""\p{N}{1,3}+""",
            r""" ?[^\s\p{L}\p{N}]++[\r\n]*+""",
            r"""\s++$""",
            r"""\s*[\r\n]""",
            r"""\s+(?!\S)""",
            r"""\s""",
        ]
    ),
}

# The same patterns for a text of ASCII characters only, for Python's own ``re`` (most texts are ASCII, and
# a server that only sees such texts never loads the ``regex`` module, 1.4 MiB resident): the Unicode
# classes restricted to ASCII (no marks; ``\s`` is Unicode's White_Space, tab to carriage return and space),
# ``$`` as the text's end (``\s++`` takes a final line break itself), and each possessive quantifier an
# ordinary one, which changes nothing where each stands: giving characters back could never let the rest
# match. tests/providers/chat_completions/test_byte_pair.py splits ASCII texts both ways.
_ASCII_PATTERNS = {
    O200K_BASE: "|".join(
        [
            r"""[^\r\nA-Za-z0-9]?[A-Z]*[a-z]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\nA-Za-z0-9]?[A-Z]+[a-z]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[0-9]{1,3}""",
            r""" ?[^\t-\r A-Za-z0-9]+[\r\n/]*""",
            r"""[\t-\r ]*[\r\n]+""",
            r"""[\t-\r ]+(?![^\t-\r ])""",
            r"""[\t-\r ]+""",
        ]
    ),
    CL100K_BASE: "|".join(
        [
            r"""'(?i:[sdmt]|ll|ve|re)""",
            r"""[^\r\nA-Za-z0-9]?[A-Za-z]+""",
            r"""[0-9]{1,3}""",
            r""" ?[^\t-\r A-Za-z0-9]+[\r\n]*""",
            r"""[\t-\r ]+\Z""",
            r"""[\t-\r ]*[\r\n]""",
            r"""[\t-\r ]+(?![^\t-\r ])""",
            r"""[\t-\r ]""",
        ]
    ),
}


def _package_folder() -> Path:
    """bpe-openai's installed package, found without importing it."""
    package = importlib.util.find_spec("bpe_openai")
    if package is None or not package.submodule_search_locations:
        raise ModuleNotFoundError("bpe-openai is not installed (pip install bpe-openai)")
    return Path(package.submodule_search_locations[0])


def ranks_file(encoding: str) -> Path:
    """The mergeable ranks of ``encoding`` as bpe-openai's wheel ships them (found without importing the
    package, whose import builds tables of all its vocabularies: about 70 MB resident)."""
    path = _package_folder() / "data" / f"{encoding}.tiktoken.gz"
    if not path.is_file():
        raise FileNotFoundError(f"bpe-openai ships no {path.name}")
    return path


def _load(encoding: str) -> BytePairCounter:
    ranks = load_ranks(encoding, ranks_file(encoding), _built)
    return BytePairCounter(ranks, _PATTERNS[encoding], _ASCII_PATTERNS[encoding])


def _built(source: Path) -> MergeableRanks:
    ranks = MergeableRanks.from_tiktoken_file(source)
    # Building freed about 3 MiB of heap (the file, its text, the tokens one by one) that would stay
    # resident: give it back now.
    trim()
    return ranks


class _LinearTokenizer(Protocol):
    def count(self, text: str) -> int: ...


def _bindings() -> Any:
    """bpe_openai's Rust extension, loaded on its own: importing the ``bpe_openai`` package builds Python
    tables of all three of its vocabularies at import (about 70 MB resident), which counting never reads."""
    folder = _package_folder()
    found = [folder / f"_bindings{suffix}" for suffix in importlib.machinery.EXTENSION_SUFFIXES]
    path = next((candidate for candidate in found if candidate.is_file()), None)
    spec = importlib.util.spec_from_file_location("bpe_openai._bindings", path) if path else None
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError("bpe-openai's _bindings extension is missing")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_linear(encoding: str) -> _LinearTokenizer:
    bindings = _bindings()
    tokenizer: _LinearTokenizer = bindings.tokenizer_for_encoding(encoding)
    # Building read the vocabulary out of the extension's read-only data (31 MiB for o200k_base), which
    # counting never reads again: those pages leave the resident set now, not at the kernel's leisure.
    page_out(Path(bindings.__file__))
    return tokenizer


def _paired_surrogates(text: str) -> str:
    """tiktoken's repair of a text with lone surrogates: pairs joined, the rest U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class _Counter:
    """Counts one encoding's tokens; thread-safe (the memo has its own lock). Texts of at most
    ``MEMO_MAX_TEXT_CHARS`` go to llmts's own counter; longer ones, and those it declines
    (``BytePairCounter.count`` says which), to bpe-openai's tokenizer, loaded on the first of them
    (docs/tokens.md)."""

    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        self._tokenizer: BytePairCounter | None = None
        self._linear: _LinearTokenizer | None = None
        self._lock = threading.Lock()
        self._memo: OrderedDict[str, int] = OrderedDict()
        self._memo_chars = 0
        self._long: OrderedDict[bytes, int] = OrderedDict()  # by digest (``_long_text``)
        self._short: dict[str, int] = {}

    def _loaded(self) -> BytePairCounter:
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = _load(self._encoding)
            return self._tokenizer

    def _linear_count(self, text: str) -> int:
        linear = self._linear
        if linear is None:
            with self._lock:
                if self._linear is None:
                    self._linear = _load_linear(self._encoding)
                linear = self._linear
        return linear.count(text)

    def _count(self, text: str) -> int:
        try:
            if len(text) <= MEMO_MAX_TEXT_CHARS:
                tokens = (self._tokenizer or self._loaded()).count(text)
                if tokens is not None:
                    return tokens
            return self._linear_count(text)
        except UnicodeEncodeError:  # a lone surrogate (only Python callers can pass one: JSON cannot)
            return self._count(_paired_surrogates(text))

    def __call__(self, text: str) -> int:
        if len(text) < MEMO_MIN_CHARS:
            known = self._short.get(text)
            if known is not None:
                return known
            tokens = self._count(text) if text else 0
            if len(self._short) >= SHORT_TEXTS:
                self._short.clear()  # no lock: a lost entry is counted again
            self._short[text] = tokens
            return tokens
        if len(text) > MEMO_MAX_TEXT_CHARS:
            return self._long_text(text)
        known = self._recalled(self._memo, text)
        if known is not None:
            return known
        tokens = self._count(text)
        with self._lock:
            if text not in self._memo:
                self._memo[text] = tokens
                self._memo_chars += len(text)
                while len(self._memo) > MEMO_MAX_TEXTS or self._memo_chars > MEMO_MAX_CHARS:
                    forgotten, _ = self._memo.popitem(last=False)
                    self._memo_chars -= len(forgotten)
        return tokens

    def _recalled(self, memo: OrderedDict[_Key, int], key: _Key) -> int | None:
        """``key``'s count in ``memo`` (a least-recently-used memo), now its most recent entry, or None."""
        with self._lock:
            known = memo.get(key)
            if known is not None:
                memo.move_to_end(key)
            return known

    def _long_text(self, text: str) -> int:
        """A text too long to keep: its count by a 128-bit digest of its bytes (``surrogatepass``: a lone
        surrogate, which the count repairs, still makes a text of its own; each code point encodes alone,
        so slices hash as the whole would)."""
        hasher = blake2b(digest_size=16)
        for start in range(0, len(text), _HASH_SLICE_CHARS):  # no copy of the whole text in bytes
            hasher.update(text[start : start + _HASH_SLICE_CHARS].encode("utf-8", "surrogatepass"))
        digest = hasher.digest()
        known = self._recalled(self._long, digest)
        if known is not None:
            return known
        tokens = self._count(text)
        with self._lock:
            self._long[digest] = tokens
            if len(self._long) > LONG_TEXTS:
                self._long.popitem(last=False)
        return tokens


_COUNTERS = {O200K_BASE: _Counter(O200K_BASE), CL100K_BASE: _Counter(CL100K_BASE)}


def text_counter(encoding: str) -> Callable[[str], int]:
    """The counting function of ``encoding`` (one of ``encoding_for_model``'s answers)."""
    return _COUNTERS[encoding]
