"""Giving back the pages of bpe-openai's extension read while its tokenizer was built, for the long texts
it counts (llmts/runtime/file_pages.py; docs/design/memory.md, "Memory beyond the accounted bytes")."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from llmts.runtime.file_pages import Mapping, mappings, untouched_read_only_ranges
from tests.support.openai_tokens import own_encoding

_LIB = "/venv/lib/bpe/_bindings.abi3.so"
_SMAPS = f"""\
7f0000000000-7f0004000000 r--p 00000000 fe:00 11 {_LIB}
Size:              65536 kB
Rss:               32256 kB
Anonymous:             0 kB
VmFlags: rd mr mw me
7f0004000000-7f0004100000 r-xp 04000000 fe:00 11 {_LIB}
Rss:                1024 kB
Anonymous:             0 kB
7f0004100000-7f0004140000 r--p 04100000 fe:00 11 {_LIB}
Rss:                 256 kB
Anonymous:           256 kB
7f0004140000-7f0004142000 rw-p 04140000 fe:00 11 {_LIB}
Anonymous:             8 kB
7f0005000000-7f0005001000 r--p 00000000 fe:00 12 /venv/lib/other.so
Anonymous:             0 kB
7f0006000000-7f0006001000 rw-p 00000000 00:00 0
Anonymous:             4 kB
7f0007000000-7f0007001000 r--s 00000000 fe:00 11 {_LIB}
Anonymous:             0 kB
"""


def test_only_the_files_untouched_read_only_data_is_chosen() -> None:
    # The executable text, the relocated (written) read-only part, the writable data, another file's and
    # an anonymous mapping are all left alone.
    assert untouched_read_only_ranges(Path(_LIB), _SMAPS) == [
        (0x7F0000000000, 0x7F0004000000),
        (0x7F0007000000, 0x7F0007001000),
    ]
    assert untouched_read_only_ranges(Path("/nowhere.so"), _SMAPS) == []


def test_smaps_is_read_as_mappings_with_their_sizes() -> None:
    found = mappings(_SMAPS)
    assert [m.permissions for m in found] == ["r--p", "r-xp", "r--p", "rw-p", "r--p", "rw-p", "r--s"]
    assert found[0] == Mapping(
        0x7F0000000000, 0x7F0004000000, "r--p", _LIB, {"Size": 65536, "Rss": 32256, "Anonymous": 0}
    )
    assert found[5].path == "" and found[5].kib == {"Anonymous": 4}  # an anonymous mapping
    assert mappings("") == []


_PROBE = textwrap.dedent(
    """
    import orjson
    from llmts.providers.chat_completions import encodings
    from llmts.runtime.file_pages import mappings

    def library_kib():
        return sum(m.kib.get("Rss", 0) for m in mappings() if "bpe_openai/_bindings" in m.path)

    count = encodings.text_counter("o200k_base")
    first = count("hello world " * 6000)  # over 64 Ki characters: bpe-openai's tokenizer counts it
    after_load = library_kib()
    texts = [f"tokens and more tokens, {n} " * 2800 for n in range(30)]
    counts = [count(text) for text in texts]
    print(orjson.dumps({"first": first, "after_load": after_load, "after_counts": library_kib(),
                        "counts": counts[:3]}).decode())
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps (Linux only)")
def test_building_the_tokenizer_leaves_the_libraries_pages_out_and_counting_keeps_them_out() -> None:
    # A fresh process, so the figures are this load's alone. Before the page-out, building o200k_base left
    # about 33 MiB of the extension resident (docs/design/memory.md).
    pytest.importorskip("bpe_openai")
    result = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    figures = orjson.loads(result.stdout)
    assert figures["first"] == len(own_encoding("o200k_base").encode("hello world " * 6000))
    assert figures["after_load"] < 4 * 1024, figures
    assert figures["after_counts"] < 4 * 1024, figures  # counting does not read the vocabulary's pages back
    expected = [f"tokens and more tokens, {n} " * 2800 for n in range(3)]
    assert figures["counts"] == [len(own_encoding("o200k_base").encode(text)) for text in expected]
