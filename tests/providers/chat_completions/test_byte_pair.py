"""llmts's own byte-pair counter (llmts/providers/chat_completions/byte_pair.py; docs/tokens.md, "How llmts
counts") against bpe-openai's encoder, an independent implementation of the same encodings: the same
count for every text, in a tenth of its memory."""

from __future__ import annotations

import gzip
import itertools
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmts.providers.chat_completions import encodings
from llmts.providers.chat_completions.byte_pair import (
    LONG_PIECE_BYTES,
    MERGE_BUDGET_BYTES,
    PIECE_MEMO_SIZE,
    BytePairCounter,
    MergeableRanks,
)
from llmts.providers.chat_completions.encodings import (
    CL100K_BASE,
    MEMO_MAX_TEXT_CHARS,
    O200K_BASE,
    ranks_file,
    text_counter,
)
from llmts.providers.chat_completions.rank_cache import CACHE_DIR_ENV
from tests.support.openai_tokens import own_encoding

REPO = Path(__file__).resolve().parents[3]
ENCODINGS = [O200K_BASE, CL100K_BASE]

# Texts whose pieces take every path: words the vocabulary holds, words it must merge, pieces longer than
# the scan's limit (the heap), contractions in both cases, numbers in threes, newlines and trailing spaces
# (the patterns' look-ahead), marks, CJK, emoji sequences and text that looks like a special token.
EDGE_TEXTS = [
    "",
    " ",
    "\n",
    "Hello world",
    "I'LL say it's what they'VE done, don't you'd",
    "1234567890 12 3.14159 1,000,000",
    "   \n\n  \t\r\n    trailing   ",
    "a\u0301e\u0301 cafe\u0301 \u200b\u00a0nbsp",
    "日本語のテキストと中文文本和한국어",
    "👩‍👩‍👧‍👦🇫🇷🎉" * 20,
    "<|endoftext|><|endofprompt|> are plain text",
    "=" * 5000,
    "-+" * 3000,
    "/" * 300 + "\n" * 300,
    " " * 3000 + "x",
    "ab" * 3000,
    "x" * 70000,
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "def f(x):\n    return {'k': [x ** 2 for x in range(10)]}  # code\n",
]


def _own_count(encoding: str, text: str) -> int:
    return len(own_encoding(encoding).encode_ordinary(text))


@cache
def _counter(encoding: str) -> BytePairCounter:
    """One counter per encoding for this module's tests (a load is about 0.3 s)."""
    return encodings._load(encoding)


def _corpus() -> list[str]:
    """This repository's own docs and sources: prose, tables, code, paths and JSON."""
    files = sorted((REPO / "docs").rglob("*.md"))[:30] + sorted((REPO / "llmts").rglob("*.py"))[:30]
    return [path.read_text(encoding="utf-8") for path in files]


def test_the_patterns_are_the_published_ones() -> None:
    from bpe_openai import registry

    assert encodings._PATTERNS[O200K_BASE] == registry.o200k_base()["pat_str"]
    assert encodings._PATTERNS[CL100K_BASE] == registry.cl100k_base()["pat_str"]


# ASCII characters where the patterns' alternatives meet: letters of both cases, the contractions' letters,
# digits, every white space and line break, the slash o200k_base keeps with punctuation, and controls
# that are no white space to Unicode (``re``'s ``\s`` takes U+001C-U+001F).
_ASCII_EDGES = "aAsStTlLdDmMvVrReEx09 '\t\n\r\x0b\x0c/!.,-\x1c\x1f\x00"


@cache
def _splits(encoding: str) -> tuple[Callable[[str], list[str]], Callable[[str], list[str]]]:
    """The ASCII pattern on ``re`` and the published one on the ``regex`` module, for ``encoding``."""
    import regex

    ascii_split = re.compile(encodings._ASCII_PATTERNS[encoding]).findall
    return ascii_split, regex.compile(encodings._PATTERNS[encoding]).findall


def _split_otherwise(encoding: str, texts: Iterable[str]) -> list[str]:
    """The texts the two patterns split into different pieces."""
    ascii_split, published = _splits(encoding)
    return [text for text in texts if ascii_split(text) != published(text)]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    st.one_of(st.text(st.sampled_from(_ASCII_EDGES), max_size=40), st.text(st.characters(max_codepoint=127))),
    st.sampled_from(ENCODINGS),
)
def test_ascii_texts_split_as_the_published_patterns_split_them(text: str, encoding: str) -> None:
    """A text of ASCII characters only is split with ``re`` (no ``regex`` module loaded): the same pieces."""
    assert _split_otherwise(encoding, [text]) == []


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_short_ascii_edge_text_splits_as_the_published_patterns_split_it(encoding: str) -> None:
    """Every text of up to three of the edge characters (about 48,000), both ways."""
    texts = [""] + [
        "".join(chars) for size in (1, 2, 3) for chars in itertools.product(_ASCII_EDGES, repeat=size)
    ]
    assert _split_otherwise(encoding, texts) == []


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_ascii_edges_split_as_the_published_patterns_split_them(encoding: str) -> None:
    texts = ["x  \n", "x \n ", "\n ", "a\n\n", "IT'S it'll 'Ve", "A1b2C", "a\x1c\x1d b", "path/\n\n", " \t"]
    assert _split_otherwise(encoding, texts) == []


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_rank_is_found_and_every_other_piece_is_not(encoding: str) -> None:
    counter = _counter(encoding)
    ranks: Any = counter._ranks
    tokens = [own_encoding(encoding).decode_single_token_bytes(rank) for rank in range(0, ranks.size, 997)]

    priorities = [ranks.priority(token) for token in tokens]
    # A token's priority is where its bytes start among all tokens' bytes joined in rank order: the
    # ranks' order, and the bytes are there.
    assert priorities == sorted(set(priorities)) and priorities[0] == 0
    blob = ranks._blob
    found = [bytes(blob[start : start + len(token)]) for start, token in zip(priorities, tokens, strict=True)]
    assert found == tokens
    assert ranks.priority(b"\x00" * 40) == -1
    assert ranks.priority(b"not one token, surely") == -1


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("index", range(len(EDGE_TEXTS)))
def test_edge_texts_count_as_bpe_openai_counts_them(encoding: str, index: int) -> None:
    """Through the server's counter (``text_counter``), whichever tokenizer counts them; llmts's own
    counts every text it cannot decline (no piece over ``LONG_PIECE_BYTES``, fewer bytes in all than
    ``MERGE_BUDGET_BYTES``) and gives the same count or None for the others."""
    text = EDGE_TEXTS[index]
    counter = _counter(encoding)
    longest = max((len(piece.encode()) for piece in counter._split(text)), default=0)
    own = _own_count(encoding, text)
    mine = counter.count(text)

    assert text_counter(encoding)(text) == own
    assert mine in (None, own)
    if longest <= LONG_PIECE_BYTES and len(text.encode()) <= MERGE_BUDGET_BYTES:
        assert mine == own
    if longest > LONG_PIECE_BYTES:
        assert mine is None


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_texts_over_the_memos_limit_or_with_a_long_piece_are_left_to_the_linear_tokenizer(
    encoding: str,
) -> None:
    long_text = "lorem ipsum dolor sit amet " * (MEMO_MAX_TEXT_CHARS // 27 + 1)
    long_piece = "hello " + "x" * (LONG_PIECE_BYTES + 1) + " world"
    counter: Any = encodings._Counter(encoding)

    assert counter(long_text) == _own_count(encoding, long_text)
    assert counter._linear is not None and counter._tokenizer is None  # only bpe-openai's was needed
    assert counter(long_piece) == _own_count(encoding, long_piece)
    assert counter._tokenizer is not None and counter._tokenizer.count(long_piece) is None
    assert counter("hello world") == _own_count(encoding, "hello world")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_repositorys_docs_and_sources_count_as_bpe_openai_counts_them(encoding: str) -> None:
    counter = _counter(encoding)
    texts = _corpus()
    own = [_own_count(encoding, text) for text in texts]
    mine = [counter.count(text) for text in texts]

    assert [text_counter(encoding)(text) for text in texts] == own
    assert all(count in (None, expected) for count, expected in zip(mine, own, strict=True))
    assert sum(count is not None for count in mine) >= len(texts) // 2  # prose and code are its own to count


_ALPHABET = st.sampled_from(
    [
        *"abcXYZ éü中文日本 한국 Ωπ😀🎉\n\r\t 0123456789",
        *"'s'T'LL.,;:!?-=/\\\"()[]{}<>",
        "\u0301",
        "\u200b",
        "\u00a0",
    ]
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(_ALPHABET, max_size=120), st.sampled_from(ENCODINGS))
def test_random_texts_count_as_bpe_openai_counts_them(text: str, encoding: str) -> None:
    assert _counter(encoding).count(text) == _own_count(encoding, text)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=60), st.sampled_from(ENCODINGS))
def test_any_unicode_text_counts_as_bpe_openai_counts_it(text: str, encoding: str) -> None:
    """Characters from every plane, assigned or not; the ones newer than Python's Unicode tables make
    llmts's counter decline the text (the ``regex`` module knows newer Unicode than bpe-openai)."""
    mine = _counter(encoding).count(text)
    own = _own_count(encoding, text)

    assert text_counter(encoding)(text) == own
    assert mine in (None, own)


@pytest.mark.parametrize("text", ["\u0558's", " \U000323b0's", "\U0002ebf0\U0002ebf1 text"])
def test_characters_newer_than_pythons_unicode_tables_are_left_to_the_linear_tokenizer(text: str) -> None:
    """Letters to ``regex`` (Unicode 17), unassigned to bpe-openai (Unicode 16): the pieces differ, so
    llmts's counter declines the text and bpe-openai's counts it."""
    assert _counter(O200K_BASE).count(text) is None
    assert text_counter(O200K_BASE)(text) == _own_count(O200K_BASE, text)


def test_a_text_with_much_to_merge_is_left_to_the_linear_tokenizer() -> None:
    """CJK words are seldom single tokens and seldom repeat: past the merge budget llmts's counter
    declines (about 0.1 s of merging), and the server's counter still answers exactly."""
    generator = random.Random(7)
    text = "\uff0c".join(  # a full-width comma between words
        "".join(chr(generator.randint(0x4E00, 0x9FFF)) for _ in range(generator.randint(5, 20)))
        for _ in range(1500)
    )
    counter = encodings._load(O200K_BASE)

    assert len(text) < MEMO_MAX_TEXT_CHARS and len(text.encode()) > MERGE_BUDGET_BYTES
    assert counter.count(text) is None
    assert text_counter(O200K_BASE)(text) == _own_count(O200K_BASE, text)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_long_pieces_merge_through_the_heap_as_the_scan_merges_them(encoding: str) -> None:
    """The heap (pieces over 256 bytes) and the scan make the same merges: both against every prefix
    of pieces made of few bytes, so that merges chain."""
    ranks: Any = _counter(encoding)._ranks
    generator = random.Random(25)
    for _ in range(200):
        piece = bytes(generator.choice(b"ab =-_.") for _ in range(generator.randint(2, 200)))
        if ranks.priority(piece) >= 0:
            continue
        assert ranks._merged_count_by_heap(piece) == ranks.merged_count(piece), piece


@pytest.mark.parametrize("text", ["a\ud800b", "x \ud83d\ude00 y", "\udc00" * 3, "\ud800" * 70_000])
def test_lone_surrogates_count_as_tiktoken_counts_them(text: str) -> None:
    """JSON bodies cannot carry one (orjson refuses it), Python callers of the counter can: a split pair
    is joined and the rest replaced (U+FFFD), as tiktoken's and bpe-openai's encoders do."""
    assert text_counter(O200K_BASE)(text) == _own_count(O200K_BASE, text)
    with pytest.raises(UnicodeEncodeError):
        _counter(O200K_BASE).count(text)


def test_the_piece_memo_stays_within_its_bound() -> None:
    counter = encodings._load(O200K_BASE)
    text = " ".join(f"w{index}x" for index in range(PIECE_MEMO_SIZE + 500))

    assert counter.count(text) == _own_count(O200K_BASE, text)
    assert 0 < len(counter._memo) <= PIECE_MEMO_SIZE
    long_word = "x" + "yz" * 40  # over 32 characters: counted, not kept
    assert counter.count(long_word) == _own_count(O200K_BASE, long_word)
    assert long_word not in counter._memo


def test_a_rank_file_whose_first_or_last_line_is_wrong_is_refused(tmp_path: Path) -> None:
    good = gzip.decompress(ranks_file(CL100K_BASE).read_bytes()).split(b"\n")
    swapped = [good[1], good[0], *good[2:]]  # rank 1's line first
    path = tmp_path / "swapped.tiktoken.gz"
    path.write_bytes(gzip.compress(b"\n".join(swapped)))

    with pytest.raises(ValueError, match=r"is not a \.tiktoken file of ranks 0, 1, 2"):
        MergeableRanks.from_tiktoken_file(path)

    empty = tmp_path / "empty.tiktoken"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match=r"is not a \.tiktoken file"):
        MergeableRanks.from_tiktoken_file(empty)

    spaced = tmp_path / "spaced.tiktoken"
    spaced.write_bytes(b"\n".join([*good[:3], b"", good[3], b""]) + b"\n")  # blank lines are no tokens
    assert MergeableRanks.from_tiktoken_file(spaced).size == 4

    short = tmp_path / "short.tiktoken"
    short.write_bytes(b"\n".join([*good[:3], good[10]]))  # the last line says rank 10 after 3 lines
    with pytest.raises(ValueError, match="has fewer lines than the 11 tokens its last line says"):
        MergeableRanks.from_tiktoken_file(short)

    boastful = tmp_path / "boastful.tiktoken"  # no table is sized for 300 million tokens first
    boastful.write_bytes(b"\n".join([*good[:2], good[2].split()[0] + b" 299999999"]))
    with pytest.raises(ValueError, match="fewer lines than the 300000000 tokens"):
        MergeableRanks.from_tiktoken_file(boastful)

    blank = tmp_path / "blank.tiktoken"  # as many lines as the last says, one of them blank
    blank.write_bytes(b"\n".join([*good[:2], b"", good[3]]))
    with pytest.raises(ValueError, match="holds 3 tokens, its last line says 4"):
        MergeableRanks.from_tiktoken_file(blank)

    long = tmp_path / "long.tiktoken"
    long.write_bytes(b"\n".join([*good[:3], good[1]]))  # four lines, the last says rank 1
    with pytest.raises(ValueError, match=r"long\.tiktoken: more than the 2 tokens announced"):
        MergeableRanks.from_tiktoken_file(long)


def test_a_token_the_table_cannot_hold_is_refused() -> None:
    """A table entry holds a token's length in 8 bits (OpenAI's longest tokens have 128 bytes)."""
    assert MergeableRanks([b"a", b"b" * 255]).priority(b"b" * 255) == 1
    with pytest.raises(ValueError, match="a token of 256 bytes at byte 1 does not fit the table"):
        MergeableRanks([b"a", b"b" * 256])
    with pytest.raises(ValueError, match="a token of 0 bytes"):
        MergeableRanks([b""])


def test_loading_o200k_base_costs_a_fraction_of_bpe_openais_memory(tmp_path: Path) -> None:
    """The reason this counter exists (docs/tokens.md): o200k_base resident in about 4 MiB, where
    bpe-openai's tables held about 35 MiB. Measured in a fresh interpreter, the heap given back as the
    server's worker gives it back; an ASCII text needs no ``regex`` module. Mapped from the rank cache,
    less than that."""
    script = """
def rss():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * 4096 / 2**20

import sys
from llmts.providers.chat_completions.encodings import O200K_BASE, text_counter
count = text_counter(O200K_BASE)
before = rss()
assert count("Hello, world!") == 4
assert "regex" not in sys.modules
print(rss() - before)
"""
    if not Path("/proc/self/statm").exists():
        pytest.skip("needs /proc to read the resident set")

    def grown(cache: str) -> float:
        environment = {**os.environ, CACHE_DIR_ENV: cache}
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            env=environment,
        )
        return float(done.stdout)

    built = grown("")  # the rank cache off: the table is built in the process
    cache = tmp_path / "cache"
    grown(str(cache))  # builds and writes the cache file
    mapped = grown(str(cache))

    assert built < 12.0
    # Mapped, only the pages the lookups touched (and the kernel's fault-around, 64 KiB a fault by
    # default) are resident: 1.9 against 3.5 MiB on the 2-core VM.
    assert mapped < built, (built, mapped)
