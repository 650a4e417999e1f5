"""Exact token counts of OpenAI's byte-pair encodings, from their published mergeable ranks, in about
3.5 MiB per encoding (docs/tokens.md, "How llmts counts").

An encoding is a pre-tokenizing pattern and a table of mergeable ranks (a token's bytes -> its rank).
Counting follows tiktoken: the pattern splits the text into pieces; a piece that is a token counts one;
any other piece starts as its bytes, and the adjacent pair whose joined bytes have the lowest rank (the
leftmost of equals) is merged until no pair is a token; the parts left are its tokens.

Why by hand: the maintained tokenizers (tiktoken, bpe-openai) hold o200k_base in hash maps and
automata of about 35 MiB resident, which alone put the server over its idle-memory target (80 MB with
arbiter and worker); the counts are all llmts needs, and a flat table of the same ranks is a tenth of
that. It is slower (about 0.4 s per million characters of prose against bpe-openai's 0.08 s), so long
texts and texts with very long pieces are left to bpe-openai's linear-time tokenizer
(``encodings.py``), which only a server that receives them loads. The ranks themselves are the files
bpe-openai's wheel ships (``data/*.tiktoken.gz``, tiktoken's format); its own encoder is the tests'
oracle (tests/providers/chat_completions/test_byte_pair.py).
"""

from __future__ import annotations

import array
import binascii
import gzip
import heapq
import io
import operator
import re
import unicodedata
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import mmap

__all__ = ["LONG_PIECE_BYTES", "MERGE_BUDGET_BYTES", "PIECE_MEMO_SIZE", "BytePairCounter", "MergeableRanks"]

# Pieces already counted (a word and its count), per encoding, emptied when it holds this many: most
# of a text's pieces are words it used before. Only pieces of at most _MEMO_PIECE_CHARS characters are
# kept (long ones seldom repeat), so the memo holds at most about 1.5 MiB.
PIECE_MEMO_SIZE = 8192
_MEMO_PIECE_CHARS = 32
# A text with a piece longer than this is not counted here (``BytePairCounter.count``): such a piece
# (a run of one character, a long word without spaces) costs milliseconds of merging per KiB.
LONG_PIECE_BYTES = 1024
# Nor is a text with more than this many bytes of pieces to merge (not tokens, not memoised): about
# 0.1 s of merging in the worst scripts (CJK), where bpe-openai's tokenizer takes milliseconds.
MERGE_BUDGET_BYTES = 16 * 1024
# Pieces longer than this merge through a heap (n log n), not by scanning every pair on each merge (n²).
_SCAN_MAX_BYTES = 64
# The priority of a pair that is no token: above every token's.
_NO_PRIORITY = 1 << 40
# A table entry: where the token starts among the tokens' bytes, then its length in the low bits (OpenAI's
# longest tokens have 128 bytes; the entry must stay a positive signed 32-bit integer).
_LENGTH_BITS = 8
_LENGTH_MASK = (1 << _LENGTH_BITS) - 1
_MAX_START = 1 << (31 - _LENGTH_BITS)
_FIRST = operator.itemgetter(0)
# The arrays as built (bytes, ``array('i')``) or as mapped from a file (``mmap``, ``memoryview.cast('i')``):
# indexing and slicing cost the same.
_Blob: TypeAlias = "bytes | mmap.mmap"
_Slots: TypeAlias = "array.array[int] | memoryview"
_UNASSIGNED = "Cn"  # unicodedata's category of a code point its tables do not assign


class MergeableRanks:
    """An encoding's ranks in three flat arrays: the tokens' bytes joined in rank order, an
    open-addressing table (CRC-32, linear probing, at most half full) from a token's bytes to where they
    start in the first array, and the same for the two-byte tokens by their bytes (3.6 MiB for
    o200k_base, 1.9 for cl100k_base). Where a token starts orders the tokens as their ranks do, so it
    stands for the rank and no table from rank to bytes is needed. Built from the tokens one at a time,
    so that building leaves no freed objects behind in the heap."""

    def __init__(self, tokens: Iterable[bytes], count: int | None = None) -> None:
        """``tokens`` in rank order; ``count``, when given, is how many there are (a file's last line says
        so), which lets the table fill as they are read."""
        if count is None:
            tokens = list(tokens)
            count = len(tokens)
        size = 1 << max(10, (2 * count).bit_length())
        mask = size - 1
        table = array.array("i", [-1]) * size
        blob = bytearray()
        # Two-byte tokens by their bytes: every piece's first pairs are looked up here.
        pairs = array.array("i", [-1]) * 65536
        crc32 = zlib.crc32
        start = 0
        index = -1
        for index, token in enumerate(tokens):
            length = len(token)
            if not 0 < length <= _LENGTH_MASK or start >= _MAX_START:
                raise ValueError(f"a token of {length} bytes at byte {start} does not fit the table")
            if index >= count:
                raise ValueError(f"more than the {count} tokens announced")
            # A repeated two-byte token keeps its first start here, as the table finds its first copy.
            if length == 2 and pairs[token[0] << 8 | token[1]] < 0:
                pairs[token[0] << 8 | token[1]] = start
            slot = crc32(token) & mask
            while table[slot] >= 0:
                slot = (slot + 1) & mask
            table[slot] = start << _LENGTH_BITS | length
            blob += token
            start += length
        self._blob: _Blob = bytes(blob)  # without the bytearray's spare room
        self._table: _Slots = table
        self._mask = mask
        self._pairs: _Slots = pairs
        self.size = index + 1

    @classmethod
    def of_tables(cls, blob: _Blob, table: _Slots, pairs: _Slots, size: int) -> MergeableRanks:
        """Ranks over arrays that ``tables()`` gave earlier (read back from a file, ``rank_cache.py``):
        the table's length must be a power of two, ``pairs`` 65,536 entries, ``size`` the tokens."""
        ranks = cls.__new__(cls)
        ranks._blob, ranks._table, ranks._pairs = blob, table, pairs
        ranks._mask = len(table) - 1
        ranks.size = size
        return ranks

    def tables(self) -> tuple[_Blob, _Slots, _Slots]:
        """The tokens' bytes joined in rank order, the open-addressing table and the two-byte tokens'
        table: what ``of_tables`` takes."""
        return self._blob, self._table, self._pairs

    @classmethod
    def from_tiktoken_file(cls, path: Path) -> MergeableRanks:
        """The ranks of a ``.tiktoken`` file (gzipped when its name ends in ``.gz``): one token per line,
        its bytes in base64, a space, its rank, the ranks 0, 1, 2... in order (the first and last lines
        are checked: a line per rank is what makes the order the ranks)."""
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        first = data[: data.find(b"\n")].split()
        last = data[data.rfind(b"\n", 0, len(data.rstrip(b"\n"))) + 1 :].split()
        if len(first) != 2 or first[1] != b"0" or len(last) != 2:
            raise ValueError(f"{path.name} is not a .tiktoken file of ranks 0, 1, 2...")
        # One line at a time, decoded without a Python loop (about twice as fast as one).
        fields = filter(None, map(bytes.split, io.BytesIO(data)))  # blank lines skipped
        count = int(last[1]) + 1
        if count > data.count(b"\n") + 1:  # the table is sized from it before the tokens are read
            raise ValueError(f"{path.name} has fewer lines than the {count} tokens its last line says")
        try:
            ranks = cls(map(binascii.a2b_base64, map(_FIRST, fields)), count)
        except ValueError as exc:
            raise ValueError(f"{path.name}: {exc}") from None
        if ranks.size != count:
            raise ValueError(f"{path.name} holds {ranks.size} tokens, its last line says {count}")
        return ranks

    def priority(self, piece: bytes) -> int:
        """Where ``piece``'s bytes start among the tokens' bytes joined in rank order (a lower rank, a
        lower priority), or -1 when it is no token."""
        table, blob, mask = self._table, self._blob, self._mask
        slot = zlib.crc32(piece) & mask
        length = len(piece)
        while True:
            entry = table[slot]
            if entry < 0:
                return -1
            if entry & _LENGTH_MASK == length:
                start = entry >> _LENGTH_BITS
                if blob[start : start + length] == piece:
                    return start
            slot = (slot + 1) & mask

    def _pair_priorities(self, piece: bytes) -> list[int]:
        pairs = self._pairs
        found = [pairs[piece[index] << 8 | piece[index + 1]] for index in range(len(piece) - 1)]
        return [_NO_PRIORITY if priority < 0 else priority for priority in found]

    def merged_count(self, piece: bytes) -> int:
        """How many tokens ``piece`` (no token itself, two bytes or more) becomes."""
        if len(piece) > _SCAN_MAX_BYTES:
            return self._merged_count_by_heap(piece)
        priority_of = self.priority
        bounds = list(range(len(piece) + 1))
        priorities = self._pair_priorities(piece)
        lowest = min(priorities)
        while lowest != _NO_PRIORITY:
            index = priorities.index(lowest)
            del bounds[index + 1]
            del priorities[index]
            if index < len(priorities):
                priority = priority_of(piece[bounds[index] : bounds[index + 2]])
                priorities[index] = _NO_PRIORITY if priority < 0 else priority
            if index > 0:
                priority = priority_of(piece[bounds[index - 1] : bounds[index + 1]])
                priorities[index - 1] = _NO_PRIORITY if priority < 0 else priority
            if not priorities:
                break
            lowest = min(priorities)
        return len(bounds) - 1

    def _merged_count_by_heap(self, piece: bytes) -> int:
        """``merged_count`` for long pieces: the same merges in the same order. A heap entry is a pair
        (priority, its start, its end); it is stale once either of its parts merged elsewhere, which its
        start's part no longer ending where its end's part starts shows."""
        priority_of = self.priority
        length = len(piece)
        end = list(range(1, length + 1))  # end[start] of the part starting at start
        previous = list(range(-1, length - 1))  # previous[start]: the part before it
        alive = bytearray(b"\x01") * length
        first = self._pair_priorities(piece)
        heap = [(found, start, start + 2) for start, found in enumerate(first) if found != _NO_PRIORITY]
        heapq.heapify(heap)
        parts = length
        while heap:
            _, start, stop = heapq.heappop(heap)
            middle = end[start]
            if not alive[start] or middle >= length or end[middle] != stop:
                continue
            end[start] = stop
            alive[middle] = 0
            parts -= 1
            if stop < length:
                previous[stop] = start
                priority = priority_of(piece[start : end[stop]])
                if priority >= 0:
                    heapq.heappush(heap, (priority, start, end[stop]))
            before = previous[start]
            if before >= 0:
                priority = priority_of(piece[before:stop])
                if priority >= 0:
                    heapq.heappush(heap, (priority, before, stop))
        return parts


def _unassigned_to_python(piece: str) -> bool:
    """Whether ``piece`` holds a character Python's own Unicode tables call unassigned. The ``regex``
    module follows the newest Unicode release and bpe-openai's tokenizer Unicode 16: a character assigned
    since may split into other pieces there, so a text with one is left to that tokenizer, whose counts
    are the reference (docs/tokens.md). Python's tables (14.0 in 3.11, 16.0 in 3.14) are no newer."""
    return any(map(_UNASSIGNED.__eq__, map(unicodedata.category, piece)))


class BytePairCounter:
    """Counts one encoding's tokens in a text (tiktoken's ``encode_ordinary``: special tokens' text is
    ordinary text). Safe under threads: the ranks never change and the piece memo is a dict whose lost
    entries are counted again."""

    def __init__(self, ranks: MergeableRanks, pattern: str, ascii_pattern: str) -> None:
        """``pattern``: the encoding's published pre-tokenizing pattern (the ``regex`` module's syntax);
        ``ascii_pattern``: the same for texts of ASCII characters only, for ``re``. ``regex`` loads on the
        first other text."""
        self._ranks = ranks
        self._pattern = pattern
        self._split_ascii = re.compile(ascii_pattern).findall
        self._split_any: Callable[[str], list[str]] | None = None
        self._memo: dict[str, int] = {}

    def _split(self, text: str) -> list[str]:
        if text.isascii():
            return self._split_ascii(text)
        split = self._split_any
        if split is None:
            import regex  # the pattern's Unicode classes (\p{L}...) and possessive quantifiers need it

            split = self._split_any = regex.compile(self._pattern).findall
        return split(text)

    def count(self, text: str) -> int | None:
        """The tokens of ``text``, or None when this counter leaves it to bpe-openai's tokenizer (linear
        in a text's length): a piece longer than ``LONG_PIECE_BYTES`` (a run of one character, say:
        merging costs about the square of a piece's length), more than ``MERGE_BUDGET_BYTES`` of pieces
        to merge (a script whose words are seldom single tokens, random letters), or a piece to merge
        with a character newer than Python's Unicode tables. Raises ``UnicodeEncodeError`` for a lone
        surrogate, as bpe-openai's tokenizer does."""
        ranks = self._ranks
        priority_of = ranks.priority
        memo = self._memo
        tokens = 0
        budget = MERGE_BUDGET_BYTES
        for piece in self._split(text):
            known = memo.get(piece)
            if known is None:
                encoded = piece.encode()
                if priority_of(encoded) >= 0:
                    known = 1
                else:
                    budget -= len(encoded)
                    if budget < 0 or len(encoded) > LONG_PIECE_BYTES:
                        return None
                    if not encoded.isascii() and _unassigned_to_python(piece):
                        return None
                    known = ranks.merged_count(encoded)
                if len(piece) <= _MEMO_PIECE_CHARS:
                    if len(memo) >= PIECE_MEMO_SIZE:
                        memo.clear()
                    memo[piece] = known
            tokens += known
        return tokens
