"""``llmts show FILE``: a trace file opens in the browser ``webbrowser`` picks (``$BROWSER`` here, a
recorder), its ``file://`` URL is printed with ``--print`` or when no browser takes it, and anything that
is not a trace is refused with one line and exit status 1."""

from __future__ import annotations

import os
import subprocess
import sys
import webbrowser
from collections.abc import Callable
from pathlib import Path

import pytest

from llmts.server.cli_show import TRACE_MARKER, is_trace_file

ROOT = Path(__file__).resolve().parents[2]
DATA_BLOCK = '<script type="application/json" id="llmts-trace-data">{"requests": []}</script>'


def _trace(path: Path, *, padding: int = 0) -> Path:
    """A minimal trace file; ``padding`` bytes of markup before the data block (a large trace's is late)."""
    filler = "<p>" + "x" * max(padding - 7, 0) + "</p>" if padding else ""
    path.write_text(f"<!doctype html><html><body>{filler}{DATA_BLOCK}</body></html>", encoding="utf-8")
    return path


def test_a_trace_opens_in_the_browser_of_a_real_process(tmp_path: Path) -> None:
    trace = _trace(tmp_path / "my test trace.html")
    opened = tmp_path / "opened.txt"
    recorder = tmp_path / "browser.py"
    recorder.write_text(f"import sys\nopen({str(opened)!r}, 'w').write(sys.argv[1])\n")
    # webbrowser runs $BROWSER first; without a display it registers no graphical browser after it.
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env |= {"PYTHONPATH": str(ROOT), "BROWSER": f"{sys.executable} {recorder} %s"}
    result = subprocess.run(  # a relative path, opened by its absolute URL
        [sys.executable, "-m", "llmts", "show", trace.name],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
        check=False,
    )

    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert opened.read_text() == trace.absolute().as_uri()
    assert opened.read_text().startswith("file:///") and "my%20test%20trace.html" in opened.read_text()


def test_print_gives_the_url_without_opening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., tuple[int, str, str]]
) -> None:
    trace = _trace(tmp_path / "t.html")

    def refuse(url: str) -> bool:
        raise AssertionError("--print must not open a browser")

    monkeypatch.setattr(webbrowser, "open", refuse)

    assert cli("show", "--print", str(trace)) == (0, trace.as_uri() + "\n", "")


@pytest.mark.parametrize("outcome", ["declined", "raised"])
def test_without_a_browser_the_url_is_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., tuple[int, str, str]], outcome: str
) -> None:
    trace = _trace(tmp_path / "t.html")
    asked: list[str] = []

    def no_browser(url: str) -> bool:
        asked.append(url)
        if outcome == "raised":
            raise webbrowser.Error("could not locate runnable browser")
        return False

    monkeypatch.setattr(webbrowser, "open", no_browser)

    assert cli("show", str(trace)) == (0, trace.as_uri() + "\n", "")
    assert asked == [trace.as_uri()]


def test_what_is_not_a_trace_is_refused(tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    page = tmp_path / "page.html"
    page.write_text('<html><script id="other-data">{}</script></html>')
    cases = {
        str(tmp_path / "missing.html"): "missing.html: no such file",
        str(tmp_path): "not a file",
        str(page): "page.html: not an llmts trace file",
    }
    for path, message in cases.items():
        status, out, err = cli("show", path)
        assert (status, out) == (1, ""), path
        assert err.startswith("llmts: ") and message in err and err.count("\n") == 1


def test_the_marker_is_found_anywhere_in_the_file(tmp_path: Path) -> None:
    # Late in a large trace, and across the boundary of the 64 KiB pieces the file is read in.
    assert is_trace_file(_trace(tmp_path / "late.html", padding=3 * 1024 * 1024))
    piece = 64 * 1024
    before_marker = len(_trace(tmp_path / "probe.html").read_bytes().split(TRACE_MARKER)[0])
    for bytes_before_boundary in range(
        len(TRACE_MARKER) + 1
    ):  # wholly after, split at every byte, wholly before
        start = piece - bytes_before_boundary
        straddling = _trace(tmp_path / f"s{start}.html", padding=start - before_marker)
        assert straddling.read_bytes().index(TRACE_MARKER) == start
        assert is_trace_file(straddling), bytes_before_boundary
    broken = tmp_path / "broken.html"
    broken.write_bytes(b"\xff\xfe" + TRACE_MARKER[:-1] + b"x" * 70_000)
    assert not is_trace_file(broken)
