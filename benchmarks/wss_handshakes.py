"""Many WebSocket handshakes over TLS, one after another, through the OpenAI SDK's realtime client: how
many time out (benchmarks/README.md, "Realtime handshakes over TLS"; docs/tls.md, "Session tickets").

Usage: ``python benchmarks/wss_handshakes.py [--connects 2000] [--open-timeout 3]``.

It starts ``llmts serve --tls`` (the generated certificate), scripts an Azure OpenAI realtime deployment
that answers every turn, and opens ``--connects`` connections with ``AzureOpenAI(...).realtime.connect``,
each until its ``session.created``. That client is websockets' sync client, which reads in a thread of
its own while the caller writes the upgrade request: with TLS 1.3 session tickets, which reach the
reader during that write, about 1 handshake in 1,000 lost its request and waited for ``--open-timeout``.
Exit code 1 when any handshake timed out.
"""

from __future__ import annotations

import argparse
import sys
import time

from llmts import LlmTestServer

_CONFIG = {
    "azure_deployments": {"voice-prod": "gpt-realtime"},
    "scenarios": [
        {"operation": "realtime", "terminal_policy": "repeat_last_response", "responses": [{"text": "Hi."}]}
    ],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connects", type=int, default=2000, help="handshakes in a row (default 2,000)")
    parser.add_argument(
        "--open-timeout", type=float, default=3.0, help="seconds a handshake may take (default 3)"
    )
    args = parser.parse_args()
    server = LlmTestServer.start(tls=True, access_log=False)
    try:
        session = server.create_session()
        session.configure(_CONFIG)
        client = session.azure_openai_client(api_version="2025-04-01-preview", max_retries=0)
        # The session's trust for websockets (``{"ssl": context}``), plus the handshake's deadline.
        options = {**session.websocket_connection_options(), "open_timeout": args.open_timeout}
        timeouts = 0
        started = time.monotonic()
        for index in range(args.connects):
            try:
                with client.realtime.connect(model="voice-prod", websocket_connection_options=options) as ws:
                    ws.recv()
            except TimeoutError as exc:
                timeouts += 1
                print(f"handshake {index}: {exc}", flush=True)
        elapsed = time.monotonic() - started
        print(f"{timeouts} of {args.connects} handshakes timed out ({elapsed:.1f} s)")
        return 1 if timeouts else 0
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
