"""Built rank tables kept on disk, so that only the first process to use a cache folder builds an
encoding's table and every later one maps it (docs/tokens.md, "The rank cache").

Building o200k_base's table from bpe-openai's file costs about 0.3 s of CPU (0.15 s for cl100k_base): a
Python loop over 200,000 tokens. A test suite starts many servers, and each paid it again on its first
OpenAI request, about as much as the server's whole boot. The cache file holds the three arrays of
``MergeableRanks`` as they are in memory; a later process maps it read-only (``mmap``), so loading costs
about 15 ms (two digests and a look for an empty slot), the kernel shares the pages between every
process that maps them, and a worker's resident set holds only the pages its lookups touched.

A file is named after the source file's digest (blake2b of bpe-openai's ``.tiktoken.gz``), the layout's
version and the machine's array layout (byte order, item size, page granularity), so machines sharing a
home never read or replace each other's files. Before it is mapped, its header and a digest of the whole
file are checked, and its table must have an empty slot (else a lookup of a piece that is no token
would probe forever); all of it is read through the file, not the mapping, so checking adds no page to
the resident set. A file that does not fit is built again and replaced. A new file is written under a
temporary name and published with a hard link, so the first writer wins and no file anyone maps is ever
replaced or changed (an NFS client would fault on a file replaced under it); files of other versions or
sources for the same encoding and layout are removed then, so the folder holds one file per encoding.
Where the folder cannot be used (unwritable, no home), each process builds the table as before.

The folder is ``LLMTS_CACHE_DIR``, else ``$XDG_CACHE_HOME/llmts``, else ``~/.cache/llmts``; only an
absolute path is used, and ``LLMTS_CACHE_DIR=""`` turns the cache off.
"""

from __future__ import annotations

import array
import contextlib
import mmap
import os
import stat
import struct
import sys
import tempfile
from collections.abc import Callable
from hashlib import blake2b
from pathlib import Path
from typing import BinaryIO

from llmts.providers.chat_completions.byte_pair import MergeableRanks

__all__ = ["CACHE_DIR_ENV", "FORMAT_VERSION", "cache_folder", "cache_path", "load_ranks"]

CACHE_DIR_ENV = "LLMTS_CACHE_DIR"
# Bumped whenever the layout below or ``MergeableRanks``'s arrays change: a file of another version
# has another name, so it is never read (and is removed when this version's file is published).
FORMAT_VERSION = 2
_MAGIC = b"LLMTSBPE"
# magic, version, item size of the arrays, byte order (0 little, 1 big), tokens, table slots, blob bytes,
# and the blake2b digest of the whole file with this field zeroed
_HEADER = struct.Struct("<8sIIIIIQ16s")
_DIGEST_BYTES = 16
_NO_DIGEST = bytes(_DIGEST_BYTES)
_DIGEST_AT = _HEADER.size - _DIGEST_BYTES
# Each array starts on a page of its own, so the blob can be mapped from its first byte: slicing an
# ``mmap`` gives ``bytes``, as slicing the built blob does.
_ALIGN = mmap.ALLOCATIONGRANULARITY
_PAIRS = 65536
_ITEM = array.array("i").itemsize
_LAYOUT = f"{sys.byteorder[0]}{_ITEM}p{_ALIGN}"  # e.g. "l4p4096"
# Files are read in slices this size (a larger buffer would come from the heap and stay resident).
_READ_BYTES = 64 * 1024
_EMPTY_ENTRY = array.array("i", [-1]).tobytes()  # an empty slot of the table


def cache_folder() -> Path | None:
    """Where cache files live, or None when the cache is off: ``LLMTS_CACHE_DIR=""``, or no absolute
    folder to be had (a relative setting, or no home to expand ``~`` in)."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured == "":
        return None
    try:
        if configured is not None:
            folder = Path(configured).expanduser()
        else:
            xdg = os.environ.get("XDG_CACHE_HOME", "")
            # The XDG spec: a relative XDG_CACHE_HOME is ignored.
            base = Path(xdg) if os.path.isabs(xdg) else Path("~/.cache").expanduser()
            folder = base / "llmts"
    except RuntimeError:  # ``~`` with no home directory to expand it to
        return None
    return folder if folder.is_absolute() else None


def cache_path(encoding: str, source: Path) -> Path | None:
    """The cache file for ``encoding``'s table built from ``source``, or None when the cache is off."""
    folder = cache_folder()
    if folder is None:
        return None
    with open(source, "rb") as file:
        digest = _digest_of(file).hexdigest()
    return folder / f"{encoding}-{digest}-v{FORMAT_VERSION}-{_LAYOUT}.ranks"


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


def _digest_of(file: BinaryIO, on_slice: Callable[[int, bytes], None] | None = None) -> blake2b:
    """blake2b of ``file`` from where it stands to its end, read in slices that ``on_slice`` also sees,
    with where each one starts."""
    digest = blake2b(digest_size=_DIGEST_BYTES)
    at = file.tell()
    while part := file.read(_READ_BYTES):
        digest.update(part)
        if on_slice is not None:
            on_slice(at, part)
        at += len(part)
    return digest


def _mapped(path: Path) -> MergeableRanks | None:
    try:
        # Non-blocking: a FIFO planted at the path must not hang the server.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        with open(descriptor, "rb", buffering=0) as file:
            found = os.fstat(descriptor)
            header = file.read(_HEADER.size)
            if not stat.S_ISREG(found.st_mode) or len(header) != _HEADER.size:
                return None
            magic, version, item, order, tokens, slots, blob_bytes, digest = _HEADER.unpack(header)
            table_at, pairs_at, blob_at = _offsets(slots)
            fits = (
                magic == _MAGIC
                and version == FORMAT_VERSION
                and item == _ITEM
                and order == (sys.byteorder == "big")
                and 0 < tokens <= slots // 2
                and slots >= 1024
                and slots & (slots - 1) == 0
                and blob_bytes > 0
                and found.st_size == blob_at + blob_bytes
            )
            if not fits or not _checked(file, header, digest, table_at, slots):
                return None
            whole = mmap.mmap(descriptor, blob_at, access=mmap.ACCESS_READ)
            blob = mmap.mmap(descriptor, blob_bytes, offset=blob_at, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    view = memoryview(whole)
    table = view[table_at : table_at + slots * _ITEM].cast("i")
    pairs = view[pairs_at : pairs_at + _PAIRS * _ITEM].cast("i")
    return MergeableRanks.of_tables(blob, table, pairs, tokens)


def _checked(file: BinaryIO, header: bytes, digest: bytes, table_at: int, slots: int) -> bool:
    """Whether the file's digest is the header's and its table has an empty slot."""
    table_end = table_at + slots * _ITEM
    found_empty = False

    def look_for_empty(at: int, part: bytes) -> None:
        nonlocal found_empty
        start, end = max(at, table_at) - at, min(at + len(part), table_end) - at
        # Slices start on page boundaries, so an entry starts where its offset is a multiple of _ITEM.
        while not found_empty and start < end:
            start = part.find(_EMPTY_ENTRY, start, end)
            if start < 0:
                return
            found_empty = start % _ITEM == 0
            start += 1

    file.seek(_ALIGN)
    whole = blake2b(header[:_DIGEST_AT] + _NO_DIGEST, digest_size=_DIGEST_BYTES)
    whole.update(_digest_of(file, on_slice=look_for_empty).digest())
    return whole.digest() == digest and found_empty


def _store(path: Path, ranks: MergeableRanks) -> None:
    blob, table, pairs = ranks.tables()
    table_at, pairs_at, _ = _offsets(len(table))
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError:
        return
    try:
        header = _HEADER.pack(
            _MAGIC,
            FORMAT_VERSION,
            _ITEM,
            sys.byteorder == "big",
            ranks.size,
            len(table),
            len(blob),
            _NO_DIGEST,
        )
        body = blake2b(digest_size=_DIGEST_BYTES)  # as ``_checked`` reads it back: from the table on
        with open(descriptor, "wb") as file:
            file.write(header.ljust(_ALIGN, b"\0"))
            for part in (table, _padding(table_at, table), pairs, _padding(pairs_at, pairs), blob):
                file.write(part)
                body.update(part)
            file.seek(_DIGEST_AT)
            file.write(blake2b(header + body.digest(), digest_size=_DIGEST_BYTES).digest())
        _publish(temporary, path)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _publish(temporary: str, path: Path) -> None:
    """``temporary`` under ``path``: linked, so the first writer wins and a file someone maps is never
    replaced; replacing only a file that failed the checks (or where the file system has no links)."""
    try:
        os.link(temporary, path)
    except FileExistsError:
        if _mapped(path) is not None:
            return  # another process published a good one meanwhile
        os.replace(temporary, path)
    except OSError:
        os.replace(temporary, path)
    encoding = path.name.split("-", 1)[0]
    for other in path.parent.glob(f"{encoding}-*-{_LAYOUT}.ranks"):
        if other.name != path.name:
            with contextlib.suppress(OSError):
                other.unlink()


def _padding(start: int, part: array.array[int] | memoryview) -> bytes:
    """Zeros from the end of ``part`` (starting at ``start``) to the next array's page."""
    end = start + len(part) * _ITEM
    return bytes(_round_up(end) - end)
