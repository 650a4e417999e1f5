"""Built rank tables kept on disk, so that only the first process on a machine builds an encoding's
table and every later one maps it (docs/tokens.md, "The rank cache").

Building o200k_base's table from bpe-openai's file costs about 0.3 s of CPU (0.15 s for cl100k_base): a
Python loop over 200,000 tokens. A test suite starts many servers, and each paid it again on its first
OpenAI request, about as much as the server's whole boot. The cache file holds the three arrays of
``MergeableRanks`` as they are in memory; a later process maps it read-only (``mmap``), so loading costs
about 10 ms (two digests), the kernel shares the pages between every process that maps them, and a
worker's resident set holds only the pages its lookups touched.

A cache file is named after the source file's digest (blake2b of bpe-openai's ``.tiktoken.gz``) and the
layout's version, and checked against its header and its content digest (read through the file, not
the mapping) before it is mapped; a file that does not fit is ignored and built again. It is written to a temporary file in the same folder and renamed into place, so no reader
ever maps a half-written file, and no file is changed once written. Where the folder cannot be written
(a read-only home), each process builds the table as before.

The folder is ``LLMTS_CACHE_DIR``, else ``$XDG_CACHE_HOME/llmts``, else ``~/.cache/llmts``;
``LLMTS_CACHE_DIR=""`` turns the cache off.
"""

from __future__ import annotations

import array
import contextlib
import io
import mmap
import os
import struct
import sys
import tempfile
from collections.abc import Callable
from hashlib import blake2b
from pathlib import Path

from llmts.providers.chat_completions.byte_pair import MergeableRanks

__all__ = ["CACHE_DIR_ENV", "FORMAT_VERSION", "cache_folder", "cache_path", "load_ranks"]

CACHE_DIR_ENV = "LLMTS_CACHE_DIR"
# Bumped whenever the layout below or ``MergeableRanks``'s arrays change: a file of another version
# has another name, so it is never read.
FORMAT_VERSION = 2
_MAGIC = b"LLMTSBPE"
# magic, version, item size of the arrays, byte order (0 little, 1 big), tokens, table slots, blob bytes,
# and the blake2b digest of everything after the header's page
_HEADER = struct.Struct("<8sIIIIIQ16s")
_DIGEST_BYTES = 16
_READ_BYTES = 1 << 20
# Each array starts on a page of its own, so the blob can be mapped from its first byte: slicing an
# ``mmap`` gives ``bytes``, as slicing the built blob does.
_ALIGN = mmap.ALLOCATIONGRANULARITY
_PAIRS = 65536
_ITEM = array.array("i").itemsize


def cache_folder() -> Path | None:
    """Where cache files live, or None when ``LLMTS_CACHE_DIR`` is set to the empty string."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured is not None:
        return Path(configured).expanduser() if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "llmts"


def cache_path(encoding: str, source: Path) -> Path | None:
    """The cache file for ``encoding``'s table built from ``source``, or None when the cache is off."""
    folder = cache_folder()
    if folder is None:
        return None
    digest = blake2b(source.read_bytes(), digest_size=16).hexdigest()
    return folder / f"{encoding}-{digest}-v{FORMAT_VERSION}.ranks"


def load_ranks(encoding: str, source: Path, build: Callable[[Path], MergeableRanks]) -> MergeableRanks:
    """``encoding``'s ranks mapped from the cache, else ``build(source)``, written to the cache for the
    next process (silently not, where the folder cannot be written)."""
    path = cache_path(encoding, source)
    if path is not None:
        ranks = _mapped(path)
        if ranks is not None:
            return ranks
    ranks = build(source)
    if path is not None:
        _store(path, ranks)
    return ranks


def _offsets(table_slots: int) -> tuple[int, int, int]:
    """Where the table, the pairs and the blob start in a file."""
    table = _ALIGN
    pairs = table + _round_up(table_slots * _ITEM)
    blob = pairs + _round_up(_PAIRS * _ITEM)
    return table, pairs, blob


def _round_up(size: int) -> int:
    return -(-size // _ALIGN) * _ALIGN


def _mapped(path: Path) -> MergeableRanks | None:
    try:
        with open(path, "rb") as file:
            header = file.read(_HEADER.size)
            size = os.fstat(file.fileno()).st_size
            if len(header) != _HEADER.size:
                return None
            magic, version, item, order, tokens, slots, blob_bytes, digest = _HEADER.unpack(header)
            table_at, pairs_at, blob_at = _offsets(slots)
            fits = (
                magic == _MAGIC
                and version == FORMAT_VERSION
                and item == _ITEM
                and order == (sys.byteorder == "big")
                and slots >= 1024
                and slots & (slots - 1) == 0
                and blob_bytes > 0
                and size == blob_at + blob_bytes
            )
            # The digest is read through the file, not the mapping, so checking it adds no page to
            # the resident set; a table that is not what llmts built (at most half full) could make a
            # lookup probe forever.
            if not fits or _body_digest(file) != digest:
                return None
            whole = mmap.mmap(file.fileno(), blob_at, access=mmap.ACCESS_READ)
            blob = mmap.mmap(file.fileno(), blob_bytes, offset=blob_at, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    view = memoryview(whole)
    table = view[table_at : table_at + slots * _ITEM].cast("i")
    pairs = view[pairs_at : pairs_at + _PAIRS * _ITEM].cast("i")
    return MergeableRanks.of_tables(blob, table, pairs, tokens)


def _body_digest(file: io.BufferedReader) -> bytes:
    file.seek(_ALIGN)
    digest = blake2b(digest_size=_DIGEST_BYTES)
    buffer = bytearray(_READ_BYTES)
    view = memoryview(buffer)
    while read := file.readinto(buffer):
        digest.update(view[:read])
    return digest.digest()


def _store(path: Path, ranks: MergeableRanks) -> None:
    blob, table, pairs = ranks.tables()
    table_at, pairs_at, _ = _offsets(len(table))
    body = [table, _padding(table_at, table), pairs, _padding(pairs_at, pairs), blob]
    digest = blake2b(digest_size=_DIGEST_BYTES)
    for part in body:
        digest.update(part)
    header = _HEADER.pack(
        _MAGIC,
        FORMAT_VERSION,
        _ITEM,
        sys.byteorder == "big",
        ranks.size,
        len(table),
        len(blob),
        digest.digest(),
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError:
        return
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(header.ljust(_ALIGN, b"\0"))
            for part in body:
                file.write(part)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _padding(start: int, part: array.array[int] | memoryview) -> bytes:
    """Zeros from the end of ``part`` (starting at ``start``) to the next array's page."""
    end = start + len(part) * _ITEM
    return bytes(_round_up(end) - end)
