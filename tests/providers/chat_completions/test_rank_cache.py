"""The rank cache (llmts/providers/chat_completions/rank_cache.py; docs/tokens.md, "The rank cache"): the
first process builds an encoding's table and writes it; every later one maps the file and counts exactly
as a built table does; a file that does not fit is built again; no folder, no cache, no error."""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from llmts import LlmTestServer
from llmts.providers.chat_completions import encodings
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


class _Builds:
    """``MergeableRanks.from_tiktoken_file`` that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, source: Path) -> MergeableRanks:
        self.calls += 1
        return MergeableRanks.from_tiktoken_file(source)


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


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[: len(data) // 2], id="truncated"),
        pytest.param(lambda data: b"NOTRANKS" + data[8:], id="foreign magic"),
        pytest.param(lambda data: data[:8] + (99).to_bytes(4, "little") + data[12:], id="other version"),
        pytest.param(lambda data: b"", id="empty"),
        # One bit flipped in the table: a table llmts did not build might have no empty slot left.
        pytest.param(lambda data: data[:5000] + bytes([data[5000] ^ 1]) + data[5001:], id="a flipped bit"),
    ],
)
def test_a_cache_file_that_does_not_fit_is_built_again_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: Callable[[bytes], bytes]
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    source = ranks_file(CL100K_BASE)
    builds = _Builds()
    load_ranks(CL100K_BASE, source, builds)
    path = cache_path(CL100K_BASE, source)
    assert path is not None
    good = path.read_bytes()
    path.write_bytes(damage(good))

    ranks = load_ranks(CL100K_BASE, source, builds)

    assert builds.calls == 2
    assert _counter(ranks, CL100K_BASE).count(_TEXTS[0]) == len(
        own_encoding(CL100K_BASE).encode_ordinary(_TEXTS[0])
    )
    assert path.read_bytes() == good, "the damaged file was not replaced by a good one"


def test_an_empty_setting_turns_the_cache_off_and_an_unwritable_folder_only_costs_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = ranks_file(CL100K_BASE)
    monkeypatch.setenv(CACHE_DIR_ENV, "")
    assert cache_folder() is None and cache_path(CL100K_BASE, source) is None
    builds = _Builds()
    load_ranks(CL100K_BASE, source, builds)
    load_ranks(CL100K_BASE, source, builds)
    assert builds.calls == 2

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_DIR_ENV, str(blocker / "cache"))
    ranks = load_ranks(CL100K_BASE, source, builds)
    assert builds.calls == 3 and ranks.size == 100256


def test_the_default_folder_follows_xdg_cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder() == tmp_path / "llmts"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
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
