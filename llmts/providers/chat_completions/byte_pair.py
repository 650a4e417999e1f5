"""Exact token counts of OpenAI's byte-pair encodings, from their published mergeable ranks, in about
5 MiB per encoding (docs/tokens.md, "How llmts counts").

An encoding is a pre-tokenizing pattern and a table of mergeable ranks (a token's bytes -> its rank).
Counting follows tiktoken: the pattern splits the text into pieces; a piece that is a token counts one;
any other piece starts as its bytes, and the adjacent pair whose joined bytes have the lowest rank (the
leftmost of equals) is merged until no pair is a token; the parts left are its tokens.

Why by hand: the maintained tokenizers (tiktoken, bpe-openai) hold o200k_base in hash maps and
automata of about 35 MiB resident, which alone put the server over its idle-memory target (80 MB with
arbiter and worker); the counts are all llmts needs, and a flat table of the same ranks is a seventh of
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
import unicodedata
import zlib
from collections.abc import Iterable
from pathlib import Path

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
# The rank of a pair that is no token: above every rank.
_NO_RANK = 1 << 40
_FIRST = operator.itemgetter(0)
_UNASSIGNED = "Cn"  # unicodedata's category of a code point its tables do not assign


class MergeableRanks:
    """An encoding's ranks in four flat arrays: the tokens' bytes joined in rank order, where each
    starts, an open-addressing table (CRC-32, linear probing, at most half full) from bytes to rank, and
    the ranks of the two-byte tokens by their bytes (4.35 MiB for o200k_base, 2.25 for cl100k_base). Built
    from the tokens one at a time, so that building leaves no freed objects behind in the heap."""

    def __init__(self, tokens: Iterable[bytes]) -> None:
        blob = bytearray()
        starts = array.array("I", [0])
        hashes = array.array("I")
        # Two-byte tokens by their bytes: every piece's first pairs are looked up here.
        pairs = array.array("i", [-1]) * 65536
        for token in tokens:
            if len(token) == 2:
                pairs[token[0] << 8 | token[1]] = len(hashes)
            hashes.append(zlib.crc32(token))
            blob += token
            starts.append(len(blob))
        size = 1 << max(10, (2 * len(hashes)).bit_length())
        mask = size - 1
        table = array.array("i", [-1]) * size
        for rank, slot in enumerate(hashes):
            slot &= mask
            while table[slot] >= 0:
                slot = (slot + 1) & mask
            table[slot] = rank
        self._blob = blob
        self._starts = starts
        self._table = table
        self._mask = mask
        self._pairs = pairs
        self.size = len(hashes)

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
        ranks = cls(map(binascii.a2b_base64, map(_FIRST, fields)))
        if ranks.size != int(last[1]) + 1:
            raise ValueError(f"{path.name} holds {ranks.size} tokens, its last line says {int(last[1]) + 1}")
        return ranks

    def rank(self, piece: bytes) -> int:
        """The rank of ``piece``, or -1 when it is no token."""
        table, starts, blob, mask = self._table, self._starts, self._blob, self._mask
        slot = zlib.crc32(piece) & mask
        while True:
            rank = table[slot]
            if rank < 0 or blob[starts[rank] : starts[rank + 1]] == piece:
                return rank
            slot = (slot + 1) & mask

    def _pair_ranks(self, piece: bytes) -> list[int]:
        pairs = self._pairs
        found = [pairs[piece[index] << 8 | piece[index + 1]] for index in range(len(piece) - 1)]
        return [_NO_RANK if rank < 0 else rank for rank in found]

    def merged_count(self, piece: bytes) -> int:
        """How many tokens ``piece`` (no token itself, two bytes or more) becomes."""
        if len(piece) > _SCAN_MAX_BYTES:
            return self._merged_count_by_heap(piece)
        rank_of = self.rank
        bounds = list(range(len(piece) + 1))
        ranks = self._pair_ranks(piece)
        lowest = min(ranks)
        while lowest != _NO_RANK:
            index = ranks.index(lowest)
            del bounds[index + 1]
            del ranks[index]
            if index < len(ranks):
                rank = rank_of(piece[bounds[index] : bounds[index + 2]])
                ranks[index] = _NO_RANK if rank < 0 else rank
            if index > 0:
                rank = rank_of(piece[bounds[index - 1] : bounds[index + 1]])
                ranks[index - 1] = _NO_RANK if rank < 0 else rank
            if not ranks:
                break
            lowest = min(ranks)
        return len(bounds) - 1

    def _merged_count_by_heap(self, piece: bytes) -> int:
        """``merged_count`` for long pieces: the same merges in the same order. A heap entry is a pair
        (rank, its start, its end); it is stale once either of its parts merged elsewhere, which its
        start's part no longer ending where its end's part starts shows."""
        rank_of = self.rank
        length = len(piece)
        end = list(range(1, length + 1))  # end[start] of the part starting at start
        previous = list(range(-1, length - 1))  # previous[start]: the part before it
        alive = bytearray(b"\x01") * length
        first = self._pair_ranks(piece)
        heap = [(rank, start, start + 2) for start, rank in enumerate(first) if rank != _NO_RANK]
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
                rank = rank_of(piece[start : end[stop]])
                if rank >= 0:
                    heapq.heappush(heap, (rank, start, end[stop]))
            before = previous[start]
            if before >= 0:
                rank = rank_of(piece[before:stop])
                if rank >= 0:
                    heapq.heappush(heap, (rank, before, stop))
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

    def __init__(self, ranks: MergeableRanks, pattern: str) -> None:
        import regex  # the pattern's Unicode classes (\p{L}...) and possessive quantifiers need it

        self._ranks = ranks
        self._split = regex.compile(pattern).findall
        self._memo: dict[str, int] = {}

    def count(self, text: str) -> int | None:
        """The tokens of ``text``, or None when this counter leaves it to bpe-openai's tokenizer (linear
        in a text's length): a piece longer than ``LONG_PIECE_BYTES`` (a run of one character, say:
        merging costs about the square of a piece's length), more than ``MERGE_BUDGET_BYTES`` of pieces
        to merge (a script whose words are seldom single tokens, random letters), or a piece to merge
        with a character newer than Python's Unicode tables. Raises ``UnicodeEncodeError`` for a lone
        surrogate, as bpe-openai's tokenizer does."""
        ranks = self._ranks
        rank_of = ranks.rank
        memo = self._memo
        tokens = 0
        budget = MERGE_BUDGET_BYTES
        for piece in self._split(text):
            known = memo.get(piece)
            if known is None:
                encoded = piece.encode()
                if rank_of(encoded) >= 0:
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
