"""The command line: ``llmts serve`` here; ``llmts env`` and ``llmts session`` in ``cli_session.py``,
``llmts show`` in ``cli_show.py`` (docs/server.md, docs/cli.md)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from llmts import __version__
from llmts.server.http.timeouts import DEFAULT_MAX_BODY_BYTES, TIMEOUT_ENV, Timeouts
from llmts.server.process.gunicorn_app import DEFAULT_WORKER_CLASS, LOG_FORMATS, WORKER_CLASSES
from llmts.server.realtime.settings import REALTIME_ENV, RealtimeSettings

if TYPE_CHECKING:
    from llmts.schema.config import SessionConfig
    from llmts.server.process.tls import TlsFiles

__all__ = ["main"]


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def _env_flag(name: str) -> bool:
    return (os.environ.get(name) or "").strip().lower() in ("1", "true", "yes", "on")


def _parser(only_serve: bool = False) -> argparse.ArgumentParser:
    """The CLI's parser; with ``only_serve``, without the client commands (``env``, ``session``, ``show``),
    so that ``llmts serve``'s arbiter never imports their modules: what it imports, its forked worker
    holds too (docs/design/memory.md)."""
    parser = argparse.ArgumentParser(
        prog="llmts", description="LLM test server for the official provider SDKs."
    )
    parser.add_argument("--version", action="version", version=f"llmts {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the server (gunicorn, one gevent worker)")
    serve.add_argument("--host", default=os.environ.get("LLMTS_HOST", "127.0.0.1"))
    serve.add_argument("--port", type=int, default=_env_int("LLMTS_PORT", 8080), help="0 picks a free port")
    serve.add_argument("--control-key", default=os.environ.get("LLMTS_CONTROL_KEY"))
    serve.add_argument(
        "--fixtures",
        default=os.environ.get("LLMTS_FIXTURES"),
        help="JSON or YAML configuration for the default session",
    )
    serve.add_argument(
        "--max-body-bytes", type=int, default=_env_int("LLMTS_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES)
    )
    serve.add_argument("--max-sessions", type=int, default=_env_int("LLMTS_MAX_SESSIONS", 4096))
    serve.add_argument(
        "--max-memory",
        default=os.environ.get("LLMTS_MAX_MEMORY"),
        help="process-wide budget for journals, stored responses, conversation state, configurations, "
        "MCP and A2A state and realtime connections "
        "(bytes, or 512M / 2G; default: a quarter of the machine's memory, 256M..8G)",
    )
    serve.add_argument(
        "--worker-class",
        choices=WORKER_CLASSES,
        default=os.environ.get("LLMTS_WORKER_CLASS", DEFAULT_WORKER_CLASS),
        help="the gevent worker: llmts (default: llmts's own HTTP/1.1 loop, the fastest), gevent_pywsgi "
        "(the previous default, kept for a while) or gevent (gunicorn's parser)",
    )
    _timeout_options(serve)
    _websocket_options(serve)
    serve.add_argument("--no-access-log", action="store_true", help="do not log one line per request")
    serve.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default=os.environ.get("LLMTS_LOG_FORMAT", "text"),
        help="text (gunicorn's formats) or json (one JSON object per line, access and error log)",
    )
    serve.add_argument(
        "--workers",
        type=int,
        default=_env_int("LLMTS_WORKERS", 1),
        help="server processes, each on its own port (--port + i) owning its own sessions "
        "(docs/deployment.md; default 1)",
    )
    serve.add_argument(
        "--drain-seconds",
        type=float,
        default=float(os.environ.get("LLMTS_DRAIN_SECONDS") or 0),
        help="after SIGTERM, seconds /ready answers 503 while requests are still served, before the "
        "graceful stop (LLMTS_DRAIN_SECONDS, default 0)",
    )
    serve.add_argument(
        "--metrics-key",
        default=os.environ.get("LLMTS_METRICS_KEY"),
        help="bearer token GET /metrics requires (default: none needed)",
    )
    serve.add_argument(
        "--allowed-hosts",
        default=os.environ.get("LLMTS_ALLOWED_HOSTS"),
        help="comma-separated Host names answered besides loopback names (.example.com for a domain, * for "
        "any); a server bound to loopback answers only loopback names without it (docs/server.md)",
    )
    _tls_options(serve)
    serve.add_argument("--parent-pid", type=int, default=None, help="exit when this process is gone")
    serve.add_argument("--ready-file", default=None, help="write the base URL to this file once listening")
    serve.add_argument(
        "--restart-file",
        default=None,
        help="append one JSON line to this file each time the worker dies and gunicorn replaces it "
        "(docs/deployment.md)",
    )
    if not only_serve:
        from llmts.server.cli_session import add_env_command, add_session_command
        from llmts.server.cli_show import add_show_command

        add_env_command(commands)
        add_session_command(commands)
        add_show_command(commands)
    return parser


def _tls_options(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--tls",
        action="store_true",
        default=_env_flag("LLMTS_TLS"),
        help="serve HTTPS (and wss) on the port, with a self-signed certificate generated at start-up unless "
        "--tls-cert/--tls-key give one (LLMTS_TLS=1; docs/tls.md)",
    )
    serve.add_argument(
        "--tls-cert",
        default=os.environ.get("LLMTS_TLS_CERT") or None,
        help="PEM certificate (chain) to serve; implies --tls (LLMTS_TLS_CERT)",
    )
    serve.add_argument(
        "--tls-key",
        default=os.environ.get("LLMTS_TLS_KEY") or None,
        help="PEM private key of --tls-cert (LLMTS_TLS_KEY)",
    )
    serve.add_argument(
        "--tls-dir",
        default=os.environ.get("LLMTS_TLS_DIR") or None,
        help="write the generated certificate and key here (cert.pem, key.pem) and keep them; default: a "
        "private temporary directory removed on exit; implies --tls (LLMTS_TLS_DIR)",
    )


def _tls_files(args: argparse.Namespace) -> TlsFiles | str | None:
    """The certificate to serve, None for plain HTTP, or why the options cannot give one. Imported only
    with TLS: a plain server's arbiter stays as it was."""
    if not (args.tls or args.tls_cert or args.tls_key or args.tls_dir):
        return None
    from llmts.server.process.tls import TlsError, prepare_tls

    try:
        return prepare_tls(
            cert=args.tls_cert,
            key=args.tls_key,
            directory=args.tls_dir,
            host=args.host,
            allowed_hosts=args.allowed_hosts,
        )
    except TlsError as exc:
        return str(exc)


# Option -> (Timeouts field, help). Defaults: docs/server.md, "Timeouts and shutdown".
_TIMEOUT_OPTIONS = {
    "--request-head-timeout": ("request_head", "seconds a new connection has to send its request head"),
    "--body-timeout": ("body", "seconds a request body has to arrive completely"),
    "--write-timeout": ("write", "seconds one write may wait for a client that does not read"),
    "--keepalive-timeout": ("keepalive", "seconds an idle kept-alive connection stays open"),
    "--graceful-timeout": ("graceful", "seconds SIGTERM waits for in-flight responses at most"),
}


def _timeout_options(serve: argparse.ArgumentParser) -> None:
    for option, (field, text) in _TIMEOUT_OPTIONS.items():
        variable = TIMEOUT_ENV[field]
        default = getattr(Timeouts(), field)
        serve.add_argument(
            option,
            dest=f"timeout_{field}",
            type=float,
            default=None,
            help=f"{text} ({variable}, default {default:g})",
        )


def _timeouts(args: argparse.Namespace) -> Timeouts:
    from_env = Timeouts.from_env(os.environ)
    given = {
        field: value
        for field, _ in _TIMEOUT_OPTIONS.values()
        if (value := getattr(args, f"timeout_{field}")) is not None
    }
    return replace(from_env, **given)


# Option -> (RealtimeSettings field, help). Defaults: docs/server.md, "WebSocket limits".
_WEBSOCKET_OPTIONS = {
    "--ws-max-message-bytes": (
        "max_message_bytes",
        "largest message a WebSocket client may send, after inflation; larger: close 1009",
    ),
    "--ws-idle-timeout": ("idle_timeout", "seconds a WebSocket client may send nothing; then close 1001"),
    "--ws-max-messages-per-second": (
        "max_messages_per_second",
        "messages and pings a WebSocket client may send per second; more: close 1008",
    ),
}


def _websocket_options(serve: argparse.ArgumentParser) -> None:
    for option, (field, text) in _WEBSOCKET_OPTIONS.items():
        default = getattr(RealtimeSettings(), field)
        shown = f"{default:g}" if isinstance(default, float) else str(default)
        serve.add_argument(
            option,
            dest=f"ws_{field}",
            type=type(default),
            default=None,
            help=f"{text} ({REALTIME_ENV[field]}, default {shown})",
        )


def _realtime(args: argparse.Namespace) -> RealtimeSettings:
    from_env = RealtimeSettings.from_env(os.environ)
    given = {
        field: value
        for field, _ in _WEBSOCKET_OPTIONS.values()
        if (value := getattr(args, f"ws_{field}")) is not None
    }
    return replace(from_env, **given)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = _parser(only_serve=arguments[:1] == ["serve"]).parse_args(arguments)
    if args.command != "serve":
        from llmts.server.cli_session import run_client_command

        return run_client_command(args)
    fixtures = None
    if args.fixtures:
        # Only with --fixtures: the schema is the worker's, the arbiter of a plain ``llmts serve`` never
        # loads it.
        from llmts.server.process.settings import FixturesFileError, load_fixtures_file

        try:
            fixtures = load_fixtures_file(args.fixtures)
        except FixturesFileError as exc:
            print(f"llmts: {exc}", file=sys.stderr)
            return 2
    if args.max_body_bytes <= 0 or args.max_sessions <= 0:
        print("llmts: --max-body-bytes and --max-sessions must be positive", file=sys.stderr)
        return 2
    try:
        timeouts = _timeouts(args)
        realtime = _realtime(args)
    except ValueError as exc:
        print(f"llmts: {exc}", file=sys.stderr)
        return 2
    max_memory = None
    if args.max_memory:
        from llmts.runtime.memory import MIN_MAX_MEMORY_BYTES, parse_memory_size

        try:
            max_memory = parse_memory_size(args.max_memory)
        except ValueError as exc:
            print(f"llmts: --max-memory: {exc}", file=sys.stderr)
            return 2
        if max_memory < MIN_MAX_MEMORY_BYTES:
            print(f"llmts: --max-memory must be at least {MIN_MAX_MEMORY_BYTES} bytes (1M)", file=sys.stderr)
            return 2

    if fixtures is not None and not _fixtures_fit(fixtures, max_memory):
        return 2
    if args.workers < 1:
        print("llmts: --workers must be at least 1", file=sys.stderr)
        return 2
    if args.drain_seconds < 0:
        print("llmts: --drain-seconds must not be negative", file=sys.stderr)
        return 2
    tls = _tls_files(args)
    if isinstance(tls, str):
        print(f"llmts: {tls}", file=sys.stderr)
        return 2
    try:
        if args.workers > 1:
            return _serve_workers(args, timeouts, realtime, tls)
        _serve(args, timeouts, realtime, fixtures, max_memory, tls)
        return 0
    finally:
        if tls is not None:
            tls.remove()


def _fixtures_fit(fixtures: SessionConfig, max_memory: int | None) -> bool:
    """Whether the default session's configuration fits the memory budget it is charged to (docs/journal.md,
    "Process memory budget"); says why not."""
    from llmts.runtime.memory import default_max_memory
    from llmts.runtime.resident_size import configuration_size

    budget = max_memory if max_memory is not None else default_max_memory()
    size = configuration_size(fixtures)
    if size <= budget:
        return True
    print(
        f"llmts: --fixtures: the configuration needs {size} bytes of the memory budget (its estimated "
        f"resident size) but --max-memory is {budget} bytes",
        file=sys.stderr,
    )
    return False


def _serve(
    args: argparse.Namespace,
    timeouts: Timeouts,
    realtime: RealtimeSettings,
    fixtures: SessionConfig | None,
    max_memory: int | None,
    tls: TlsFiles | None,
) -> None:
    """One server: gunicorn's arbiter and its one worker."""

    def factory() -> object:
        from llmts.server.app import create_app

        return create_app(
            control_key=args.control_key,
            fixtures=fixtures,
            max_body_bytes=args.max_body_bytes,
            max_sessions=args.max_sessions,
            timeouts=timeouts,
            max_memory_bytes=max_memory,
            metrics_key=args.metrics_key,
            drain_seconds=args.drain_seconds,
            allowed_hosts=args.allowed_hosts,
            binds=[args.host],
            realtime=realtime,
        )

    from llmts.server.process.gunicorn_app import GunicornServer

    GunicornServer(
        factory,
        host=args.host,
        port=args.port,
        access_log=not args.no_access_log,
        log_format=args.log_format,
        parent_pid=args.parent_pid,
        ready_file=args.ready_file,
        worker_class=args.worker_class,
        timeouts=timeouts,
        drain_seconds=args.drain_seconds,
        restart_file=args.restart_file,
        tls=tls,
    ).run()


# What the ``--workers`` processes do not take from the supervisor's environment: it passes them on itself.
_NOT_INHERITED = frozenset(
    {"LLMTS_WORKERS", "LLMTS_PORT", "LLMTS_TLS", "LLMTS_TLS_CERT", "LLMTS_TLS_KEY", "LLMTS_TLS_DIR"}
)


def _serve_workers(
    args: argparse.Namespace, timeouts: Timeouts, realtime: RealtimeSettings, tls: TlsFiles | None
) -> int:
    """``--workers N``: the same settings for N single-process servers (llmts.server.process.workers)."""
    from llmts.server.process.workers import serve_workers

    child = ["--host", args.host, "--worker-class", args.worker_class]
    child += ["--max-body-bytes", str(args.max_body_bytes), "--max-sessions", str(args.max_sessions)]
    if args.fixtures:
        child += ["--fixtures", args.fixtures]
    if args.max_memory:
        child += ["--max-memory", args.max_memory]
    for option, (field, _) in _TIMEOUT_OPTIONS.items():
        child += [option, repr(getattr(timeouts, field))]
    for option, (field, _) in _WEBSOCKET_OPTIONS.items():
        child += [option, repr(getattr(realtime, field))]
    child += ["--drain-seconds", repr(args.drain_seconds), "--log-format", args.log_format]
    if args.allowed_hosts is not None:
        child += ["--allowed-hosts", args.allowed_hosts]
    if args.no_access_log:
        child.append("--no-access-log")
    if tls is not None:  # every process serves the one certificate clients were told to trust
        child += ["--tls-cert", tls.cert, "--tls-key", tls.key]
        print(tls.announcement(), flush=True)
    # Keys travel in the environment, not on command lines other users can read.
    env = {key: value for key, value in os.environ.items() if key not in _NOT_INHERITED}
    for name, value in (("LLMTS_CONTROL_KEY", args.control_key), ("LLMTS_METRICS_KEY", args.metrics_key)):
        env.pop(name, None)
        if value:
            env[name] = value
    return serve_workers(
        child,
        port=args.port,
        workers=args.workers,
        ready_file=args.ready_file,
        parent_pid=args.parent_pid,
        stop_timeout=timeouts.graceful + args.drain_seconds + 5,
        env=env,
        restart_file=args.restart_file,
    )


if __name__ == "__main__":
    raise SystemExit(main())
