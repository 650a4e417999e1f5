"""The rank cache (llmts/providers/chat_completions/rank_cache.py; docs/tokens.md, "The rank cache"): the
first process builds an encoding's table and writes it; every later one maps the file and counts exactly
as a built table does; a file that does not fit is built again; no folder, no cache, no error."""

from __future__ import annotations

import functools
import mmap
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from llmts import LlmTestServer
from llmts.providers.chat_completions import encodings, rank_cache
from llmts.providers.chat_completions.byte_pair import BytePairCounter, MergeableRanks
from llmts.providers.chat_completions.encodings import CL100K_BASE, O200K_BASE, ranks_file
from llmts.providers.chat_completions.rank_cache import CACHE_DIR_ENV, cache_folder, cache_path, load_ranks
from tests.support.openai_tokens import own_encoding

_TEXTS = [
    "Hello, world! How are you today?",
    "def f(x):\n    return {'k': [x ** 2 for x in range(10)]}  # code\n",
    "Größenmaßstäbe für Übergänge — naïve café résumé",
    "日本語のテキストも数えます。中文也一样。",
    "supercalifragilisticexpialidocious antidisestablishmentarianism " * 3,
    "   leading spaces, trailing tabs\t\t\n\n\nand 1234567890 digits",
]


@functools.cache
def _cl100k_ranks() -> MergeableRanks:
    """cl100k_base's table, built once per process: these tests check what a load does around a build
    (whether it calls it, what it writes, maps or replaces), not the build itself (test_byte_pair.py)."""
    return MergeableRanks.from_tiktoken_file(ranks_file(CL100K_BASE))


class _Builds:
    """The build a load is given: cl100k_base's table, counting the calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, source: Path) -> MergeableRanks:
        assert source == ranks_file(CL100K_BASE)
        self.calls += 1
        return _cl100k_ranks()


def _counter(ranks: MergeableRanks, encoding: str) -> BytePairCounter:
    return BytePairCounter(ranks, encodings._PATTERNS[encoding], encodings._ASCII_PATTERNS[encoding])


def test_the_first_load_builds_and_writes_and_the_next_maps_the_same_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    source = ranks_file(CL100K_BASE)
    builds = _Builds()

    built = load_ranks(CL100K_BASE, source, builds)
    path = cache_path(CL100K_BASE, source)
    assert builds.calls == 1 and path is not None and path.is_file()
    assert [p.name for p in tmp_path.iterdir()] == [path.name], "no temporary file left behind"

    mapped = load_ranks(CL100K_BASE, source, builds)
    assert builds.calls == 1, "the second load built the table again"
    blob, table, pairs = mapped.tables()
    assert isinstance(blob, mmap.mmap) and isinstance(table, memoryview) and isinstance(pairs, memoryview)
    built_blob, built_table, built_pairs = built.tables()
    assert bytes(blob[:]) == built_blob
    assert table.tobytes() == bytes(built_table) and pairs.tobytes() == bytes(built_pairs)
    assert mapped.size == built.size == 100256

    own = own_encoding(CL100K_BASE)
    mapped_counter = _counter(mapped, CL100K_BASE)
    for text in _TEXTS:
        assert mapped_counter.count(text) == len(own.encode_ordinary(text)), text


def _cache_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """cl100k_base's source file and its cache file, with ``tmp_path`` the cache folder."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    source = ranks_file(CL100K_BASE)
    path = cache_path(CL100K_BASE, source)
    assert path is not None
    return source, path


def _table_at() -> int:
    return rank_cache._offsets(0)[0]


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :]


def _header_field(data: bytes, field: int, value: int) -> bytes:
    """``data`` with header field ``field`` (0 magic ... 6 blob bytes) set to ``value``."""
    fields = list(rank_cache._HEADER.unpack(data[: rank_cache._HEADER.size]))
    fields[field] = value
    return rank_cache._HEADER.pack(*fields) + data[rank_cache._HEADER.size :]


def _resealed(data: bytes) -> bytes:
    """``data`` with a digest recomputed as llmts computes it: what only a deliberate writer makes."""
    from hashlib import blake2b

    size = rank_cache._DIGEST_BYTES
    header = data[: rank_cache._DIGEST_AT] + bytes(size)
    body = blake2b(data[_table_at() :], digest_size=size).digest()
    digest = blake2b(header + body, digest_size=size).digest()
    return header[: rank_cache._DIGEST_AT] + digest + data[rank_cache._HEADER.size :]


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[: len(data) // 2], id="truncated"),
        pytest.param(lambda data: b"NOTRANKS" + data[8:], id="foreign magic"),
        pytest.param(lambda data: _header_field(data, 1, 99), id="other version"),
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: _flip(data, _table_at() + 1000), id="a flipped bit in the table"),
        pytest.param(lambda data: _flip(data, len(data) - 1), id="a flipped bit in the blob"),
        pytest.param(lambda data: _header_field(data, 4, 12345), id="another token count"),
        pytest.param(
            lambda data: _header_field(data, 3, 1 - (sys.byteorder == "big")), id="other byte order"
        ),
        # Every slot taken, digest and all made to fit: a lookup of a piece that is no token would probe
        # forever, so the table itself is checked.
        pytest.param(
            lambda data: _resealed(
                data[: _table_at()] + b"\0" * (len(data) - _table_at() - 4096) + data[-4096:]
            ),
            id="a full table with a fitting digest",
        ),
    ],
)
def test_a_cache_file_that_does_not_fit_is_built_again_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: Callable[[bytes], bytes]
) -> None:
    source, path = _cache_in(tmp_path, monkeypatch)
    builds = _Builds()
    load_ranks(CL100K_BASE, source, builds)
    good = path.read_bytes()
    path.write_bytes(damage(good))

    ranks = load_ranks(CL100K_BASE, source, builds)

    assert builds.calls == 2
    own = own_encoding(CL100K_BASE)
    assert _counter(ranks, CL100K_BASE).count(_TEXTS[0]) == len(own.encode_ordinary(_TEXTS[0]))
    assert path.read_bytes() == good, "the damaged file was not replaced by a good one"


def test_the_first_writer_wins_and_other_versions_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, path = _cache_in(tmp_path, monkeypatch)
    older = tmp_path / f"{CL100K_BASE}-{'0' * 32}-v1-{rank_cache._LAYOUT}.ranks"
    other_layout = tmp_path / f"{CL100K_BASE}-{'0' * 32}-v{rank_cache.FORMAT_VERSION}-b8p65536.ranks"
    other_encoding = tmp_path / f"{O200K_BASE}-{'0' * 32}-v1-{rank_cache._LAYOUT}.ranks"
    for stale in (older, other_layout, other_encoding):
        stale.write_bytes(b"stale")
    ranks = _cl100k_ranks()

    rank_cache._store(path, ranks)
    first = path.stat().st_ino
    rank_cache._store(path, ranks)  # a second writer that built at the same time

    assert path.stat().st_ino == first, "a published file someone may map was replaced"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [path.name, other_layout.name, other_encoding.name]
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_a_fifo_at_the_cache_path_neither_blocks_nor_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, path = _cache_in(tmp_path, monkeypatch)
    os.mkfifo(path)
    builds = _Builds()

    load_ranks(CL100K_BASE, source, builds)

    assert builds.calls == 1 and path.is_file()
    load_ranks(CL100K_BASE, source, builds)
    assert builds.calls == 1


@pytest.mark.parametrize(
    "setting",
    [
        pytest.param("relative/cache", id="a relative LLMTS_CACHE_DIR"),
        pytest.param("~no-such-user-of-llmts/cache", id="a home that does not exist"),
    ],
)
def test_a_folder_that_is_not_absolute_turns_the_cache_off(
    monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, setting)
    assert cache_folder() is None
    assert cache_path(CL100K_BASE, ranks_file(CL100K_BASE)) is None


def test_the_default_folder_follows_xdg_cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_folder() == tmp_path / "xdg" / "llmts"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # ignored, as the XDG spec says
    assert cache_folder() == tmp_path / ".cache" / "llmts"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_folder() == tmp_path / ".cache" / "llmts"


def _maps(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.skipif(
    not Path("/proc/self/maps").exists(), reason="reads the worker's /proc/<pid>/maps (Linux)"
)
def test_the_second_server_maps_the_table_the_first_one_built_and_both_count_exactly(
    tmp_path: Path, own_server_factory: Callable[..., LlmTestServer]
) -> None:
    """Over HTTP: two servers with one cache folder, each answering a gpt-4o request with bpe-openai's
    own prompt count; the first wrote the cache file, the second's worker maps it."""
    cache = tmp_path / "cache"
    expected_path = cache_path(O200K_BASE, ranks_file(O200K_BASE))
    assert expected_path is not None
    file_name = expected_path.name
    messages = [{"role": "user", "content": text} for text in _TEXTS]
    own = own_encoding(O200K_BASE)
    # The cookbook's rule (docs/tokens.md): 3 per message, 1 per role, 3 to prime the answer.
    expected_prompt = sum(3 + 1 + len(own.encode_ordinary(text)) for text in _TEXTS) + 3

    prompts: list[int] = []
    mapped: list[bool] = []
    for _ in range(2):
        server = own_server_factory(access_log=False, env={CACHE_DIR_ENV: str(cache)})
        session = server.create_session()
        client = session.openai_client(_strict_response_validation=True, max_retries=0)
        completion = client.chat.completions.create(model="gpt-4o", messages=messages)
        assert completion.usage is not None
        prompts.append(completion.usage.prompt_tokens)
        worker = int(server.process_stats()["pid"])
        mapped.append(str(cache / file_name) in _maps(worker))
        assert os.listdir(cache) == [file_name]

    assert prompts == [expected_prompt, expected_prompt]
    assert mapped == [False, True], "the first server builds in memory, the second maps the file"
