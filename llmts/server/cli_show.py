"""``llmts show FILE``: open an llmts trace file (one self-contained ``.html`` per test, written by the
pytest plugin's ``--llmts-trace``) in the default browser (docs/cli.md).

A file is a trace when it holds the trace's data block, ``<script type="application/json"
id="llmts-trace-data">``; it may sit anywhere in the file, so the file is read in bounded pieces until the
marker shows up, never whole.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from llmts.dashboard import TRACE_DATA_ID
from llmts.server.cli_session import CommandFailed

__all__ = ["TRACE_MARKER", "add_show_command", "is_trace_file"]

TRACE_MARKER = f'id="{TRACE_DATA_ID}"'.encode()
_PIECE_BYTES = 64 * 1024


def add_show_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    show = commands.add_parser(
        "show",
        help="open an llmts trace file in the browser",
        description="Open an llmts trace file (pytest --llmts-trace) in the default browser; without a "
        "browser, print its file:// URL.",
    )
    show.add_argument("file", metavar="FILE", help="the trace's .html file")
    show.add_argument(
        "--print", dest="print_only", action="store_true", help="print the file:// URL instead of opening it"
    )
    show.set_defaults(run=_show)


def is_trace_file(path: Path) -> bool:
    """Whether the file holds an llmts trace's data block (read in 64 KiB pieces, stopping at the marker)."""
    overlap = len(TRACE_MARKER) - 1
    tail = b""
    with path.open("rb") as file:
        while piece := file.read(_PIECE_BYTES):
            window = tail + piece
            if TRACE_MARKER in window:
                return True
            tail = window[-overlap:]
    return False


def _show(args: argparse.Namespace) -> None:
    path = Path(args.file).expanduser().absolute()
    if not path.is_file():
        raise CommandFailed(f"{args.file}: no such file" if not path.exists() else f"{args.file}: not a file")
    try:
        trace = is_trace_file(path)
    except OSError as exc:
        raise CommandFailed(f"{args.file}: cannot read: {exc.strerror or exc}") from None
    if not trace:
        raise CommandFailed(f"{args.file}: not an llmts trace file (no llmts-trace-data block)")
    url = path.as_uri()
    if args.print_only or not _open(url):
        print(url)


def _open(url: str) -> bool:
    """Whether a browser took the URL (``webbrowser`` answers False, or raises, when none is there)."""
    import webbrowser  # here: the server's arbiter imports the CLI and never opens a browser

    try:
        return webbrowser.open(url)
    except webbrowser.Error:
        return False
