"""``llmts env`` and ``llmts session create/configure/journal/delete``: the commands that act on a running
server through the Python client (docs/cli.md, docs/server.md "llmts env").

Everything they import beyond argparse loads when one of them runs, never when ``llmts serve``'s
arbiter imports the CLI (docs/architecture.md, "The two processes"). A failure is one line on stderr
and an exit status: 1 when the server refused or could not be reached or a file could not be used,
2 for a usage error (a malformed session id or URL); never a traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from llmts.catalog.sdk_env import SHELLS

if TYPE_CHECKING:
    from llmts.client import LlmTestServer, ServerError, SessionClient

__all__ = ["CommandFailed", "add_env_command", "add_session_command", "run_client_command"]

# Session ids as the server mints them (``ses_`` + hex) or chosen ones; never a path.
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
# ``GET /admin-api/requests`` answers at most this many entries per page; the journal is read page by page
# (it keeps at most 10,000 entries, docs/configuration.md "journal").
# A server error's message as shown on the one line: long enough for a validation message, cut after.
_MESSAGE_CHARS = 300


_T = TypeVar("_T")


class CommandFailed(Exception):
    """What the user is told on stderr (one line, after ``llmts: ``), and the exit status."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def _server_options(parser: argparse.ArgumentParser, *, control_key_help: str) -> None:
    """``--url``, ``--control-key`` and ``--ca-file``. ``llmts session`` takes them before its action too
    (``llmts session --url U create``), so no parser sets a default (a subcommand's default would replace
    what its parent parsed): ``_server_setting`` falls back to the environment."""
    parser.add_argument(
        "--url",
        default=argparse.SUPPRESS,
        help="the server's base URL; the processes of llmts serve --workers N comma-separated, in order "
        "(default: $LLMTS_URL, else http://$LLMTS_HOST:$LLMTS_PORT, i.e. http://127.0.0.1:8080)",
    )
    parser.add_argument("--control-key", default=argparse.SUPPRESS, help=control_key_help)
    parser.add_argument(
        "--ca-file",
        default=argparse.SUPPRESS,
        help="the certificate of an https server (llmts serve --tls) ($LLMTS_CA_FILE; docs/tls.md)",
    )


def _server_setting(args: argparse.Namespace, name: str, variable: str) -> str | None:
    """A server option as given (after the action, else before it), else its environment variable."""
    return getattr(args, name, None) or os.environ.get(variable) or None


_CONTROL_KEY_HELP = "the server's control key, if it has one ($LLMTS_CONTROL_KEY)"


def add_env_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    env = commands.add_parser(
        "env",
        help="print the environment that points the official SDKs at a session",
        description='Print the SDK environment variables for a session, e.g. eval "$(llmts env)"; '
        '--new-session creates the session first: eval "$(llmts env --new-session)".',
    )
    _server_options(
        env,
        control_key_help="to read the session's provider_credentials from (or create a session on) a "
        "server that has a control key ($LLMTS_CONTROL_KEY)",
    )
    env.add_argument("--shell", choices=SHELLS, default="sh", help="output syntax (default: sh)")
    which = env.add_mutually_exclusive_group()
    which.add_argument("--session", default=None, help="session id (default: the default session)")
    which.add_argument(
        "--new-session",
        action="store_true",
        help="create a session and print its environment, LLMTS_SESSION_ID first",
    )
    env.add_argument("--label", default=None, help="with --new-session: the session's label")
    env.add_argument(
        "--config", default=None, metavar="FILE", help="with --new-session: its configuration (JSON or YAML)"
    )
    env.set_defaults(run=_print_env)


def add_session_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    session = commands.add_parser(
        "session",
        help="create, configure, read and delete sessions of a running server",
        description="Manage the sessions of a running llmts server (docs/cli.md).",
    )
    _server_options(session, control_key_help=_CONTROL_KEY_HELP)
    actions = session.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser(
        "create",
        help="create a session and print its id",
        description="Create a session and print its id alone, so ID=$(llmts session create) works.",
    )
    create.add_argument("--label", default=None, help="the session's label (at most 200 characters)")
    create.add_argument("--config", default=None, metavar="FILE", help="its configuration (JSON or YAML)")
    create.set_defaults(run=_create)
    configure = actions.add_parser(
        "configure",
        help="replace a session's configuration",
        description="Replace the session's whole configuration (and clear its state and journal).",
    )
    configure.add_argument("id", help="the session id")
    configure.add_argument("file", metavar="FILE", help="the configuration (JSON, or YAML as .yaml/.yml)")
    configure.set_defaults(run=_configure)
    journal = actions.add_parser(
        "journal",
        help="print a session's request journal",
        description="Print the session's journal, oldest first: a table (one row per request) or the "
        "entries as GET /admin-api/requests returns them (a JSON array).",
    )
    journal.add_argument("id", help="the session id")
    journal.add_argument("--format", choices=("table", "json"), default="table", help="default: table")
    journal.add_argument(
        "--width", type=int, default=None, help="table width in columns (default: the terminal's, else 120)"
    )
    journal.add_argument(
        "--max-rows", type=int, default=None, help="table: only the last N requests (the most recent)"
    )
    journal.set_defaults(run=_journal)
    delete = actions.add_parser("delete", help="delete a session", description="Delete the session.")
    delete.add_argument("id", help="the session id")
    delete.set_defaults(run=_delete)
    for action in (create, configure, journal, delete):
        _server_options(action, control_key_help=_CONTROL_KEY_HELP)


def run_client_command(args: argparse.Namespace) -> int:
    """Run the command ``args`` was parsed for; a failure is one line on stderr and its exit status."""
    run: Callable[[argparse.Namespace], None] = args.run
    try:
        run(args)
    except CommandFailed as exc:
        print(f"llmts: {exc}", file=sys.stderr)
        return exc.status
    return 0


# --- the commands ---------------------------------------------------------------------------------------


def _print_env(args: argparse.Namespace) -> None:
    """Credentials come from the session's configuration when the server answers, else the default key."""
    from llmts.catalog.sdk_env import render_environment

    if not args.new_session and (args.label is not None or args.config is not None):
        raise CommandFailed("--label and --config go with --new-session", 2)
    if args.session is not None:
        _check_id(args.session, "--session")
    server = _server(args)
    head = ""
    if args.new_session:
        session = _calling(server, lambda: _new_session(server, args.label, args.config))
        head = render_environment({"LLMTS_SESSION_ID": session.id}, args.shell, unset=())
    else:
        session = server.session(args.session or "default")
    environment = _calling(server, session.sdk_environment)
    sys.stdout.write(head + render_environment(environment, args.shell))


def _create(args: argparse.Namespace) -> None:
    server = _server(args)
    session = _calling(server, lambda: _new_session(server, args.label, args.config))
    print(session.id)


def _configure(args: argparse.Namespace) -> None:
    server = _server(args)
    session = server.session(_check_id(args.id, "ID"))
    config = _config_file(args.file)
    _calling(server, lambda: session.configure(config))


def _journal(args: argparse.Namespace) -> None:
    server = _server(args)
    session = server.session(_check_id(args.id, "ID"))
    entries = _calling(server, lambda: session.all_requests()[0])
    if args.format == "json":
        import json

        print(json.dumps(entries, indent=2))  # ASCII: any terminal or pipe takes it
        return
    import shutil

    from llmts.client.journal_table import journal_table

    width = args.width or shutil.get_terminal_size((120, 24)).columns
    table = journal_table(entries, width=width, max_rows=args.max_rows)
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:  # a terminal that cannot show a character gets "?" rather than a traceback
        reconfigure(errors="replace")
    print(table)


def _delete(args: argparse.Namespace) -> None:
    server = _server(args)
    session = server.session(_check_id(args.id, "ID"))
    _calling(server, session.delete)


# --- shared steps -----------------------------------------------------------------------------------------


def _check_id(session_id: str, name: str) -> str:
    if not _SESSION_ID.fullmatch(session_id):
        raise CommandFailed(f"{name} {session_id!r} is not a session id", 2)
    return session_id


def _server(args: argparse.Namespace) -> LlmTestServer:
    """The server of ``--url``: one URL, or the processes of ``llmts serve --workers N`` in order (each
    session then lives on the process its id names, as in the Python API)."""
    from llmts.client import LlmTestServer

    given = _server_setting(args, "url", "LLMTS_URL") or (
        f"http://{os.environ.get('LLMTS_HOST', '127.0.0.1')}:{os.environ.get('LLMTS_PORT', '8080')}"
    )
    urls = [url.strip() for url in given.split(",") if url.strip()]
    if not urls:
        raise CommandFailed(f"--url {given!r} names no URL", 2)
    for url in urls:
        if not url.startswith(("http://", "https://")):
            raise CommandFailed(f"--url {url!r} must start with http:// or https://", 2)
    control_key = _server_setting(args, "control_key", "LLMTS_CONTROL_KEY")
    ca_file = _server_setting(args, "ca_file", "LLMTS_CA_FILE")
    return LlmTestServer(urls[0], urls=urls, control_key=control_key, ca_file=ca_file)


def _new_session(server: LlmTestServer, label: str | None, config_file: str | None) -> SessionClient:
    config = _config_file(config_file) if config_file is not None else None
    return server.create_session(config=config, label=label)


def _config_file(path: str) -> dict[str, Any]:
    """A configuration file's JSON object (JSON, or YAML by its suffix), unvalidated: the server checks
    it and names what is wrong."""
    from llmts.server.process.settings import FixturesFileError, read_fixtures_file

    try:
        data = read_fixtures_file(path)
    except FixturesFileError as exc:
        raise CommandFailed(str(exc)) from None
    if data is None:  # an empty YAML file: no configuration, like an empty --fixtures file
        return {}
    if not isinstance(data, dict):
        raise CommandFailed(f"{path}: a configuration is a JSON object (a mapping), not {_kind(data)}")
    return data


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean"}.get(type(value), "a number")


def _calling(server: LlmTestServer, call: Callable[[], _T]) -> _T:
    """``call()``, with what can go wrong talking to ``server`` turned into one line for the user."""
    import http.client  # here, with the client: the server's arbiter imports this module and calls nothing
    import urllib.error

    from llmts.client import ServerError

    try:
        return call()
    except ServerError as exc:
        raise CommandFailed(_refusal(exc)) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        text = getattr(reason, "strerror", None) or str(reason)
        raise CommandFailed(f"cannot reach the llmts server at {server.url}: {text}") from None
    except (OSError, http.client.HTTPException) as exc:
        text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise CommandFailed(f"cannot talk to the llmts server at {server.url}: {text}") from None
    except ValueError as exc:  # a 2xx body that is not JSON: something else answers at that URL
        raise CommandFailed(f"{server.url} did not answer as an llmts server: {exc}") from None


def _refusal(error: ServerError) -> str:
    """A control API error as one line: status, code, message and the details' paths."""
    text = f"the server answered {error.status} {error.code}: {' '.join(error.message.split())}"
    details = [  # those the message does not already name
        f"{detail.get('path') or '<root>'}: {detail.get('message')}"
        for detail in error.details
        if isinstance(detail, dict) and str(detail.get("message")) not in error.message
    ]
    if details:
        text += f" ({'; '.join(details)})"
    if len(text) > _MESSAGE_CHARS:
        text = text[: _MESSAGE_CHARS - 1] + "…"
    if error.status == 401:
        text += " (pass --control-key or set LLMTS_CONTROL_KEY)"
    return " ".join(text.split())
