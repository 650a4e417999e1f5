"""The HTTP client that forwards a request to a session's upstream (docs/recording.md, and
docs/architecture.md "Record and replay" for why it is urllib3 and why it lives in the server).

One ``urllib3.PoolManager`` per worker process, created on first use (after gunicorn forked), reused by
every session: connections to an upstream are kept alive and pooled (``_PER_HOST`` per host, more are
opened and discarded when a burst needs them, never waited for). Under the gevent worker the sockets
urllib3 opens are gevent's (the worker monkey-patches ``socket`` and ``select`` before the app loads),
so a slow upstream blocks only its own request's greenlet. urllib3 never retries (``retries=False``) and
never follows redirects: the client's SDK owns its retry policy, and a POST must not be sent twice.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from llmts.errors import LlmtsError, UpstreamTimeout, UpstreamUnreachable
from llmts.schema.recorded import HOP_BY_HOP_HEADERS

if TYPE_CHECKING:
    import urllib3

__all__ = [
    "UpstreamClient",
    "forwarded_headers",
    "upstream_chunks",
    "upstream_error",
    "upstream_failures",
    "upstream_url",
]

# urllib3 is imported on first use, never when the app loads: it imports ``ssl``, which gevent must
# monkey-patch first (gevent warns, and ssl can recurse, when ``ssl`` was imported before the patch).

# Pools (one per upstream origin) and kept-alive connections per origin, per worker process.
_POOLS = 32
_PER_HOST = 16
# Read size when the upstream does not frame its body in chunks (close-delimited or Content-Length).
_READ_BYTES = 65536
# Request headers never forwarded: the connection's own, llmts's own, and the encoding (a recording keeps
# the bytes as sent, so the upstream is asked for ``identity``).
_NOT_FORWARDED = HOP_BY_HOP_HEADERS | {"host", "accept-encoding"}
_OWN_PREFIX = "x-llm-test-server-"
_PATH_SAFE = "/:@!$&'()*+,;=-._~"


def forwarded_headers(environ: Mapping[str, Any]) -> dict[str, str]:
    """The client's end-to-end headers, as they came (credentials included: they are the client's own
    and go to the provider they were meant for), minus hop-by-hop and llmts's own headers."""
    headers: dict[str, str] = {}
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            name = key[5:].replace("_", "-").lower()
        elif key == "CONTENT_TYPE":
            name = "content-type"
        else:
            continue
        if not isinstance(value, str) or not value or name in _NOT_FORWARDED or name.startswith(_OWN_PREFIX):
            continue
        headers[name] = value
    for listed in str(environ.get("HTTP_CONNECTION", "")).split(","):
        headers.pop(listed.strip().lower(), None)
    headers["accept-encoding"] = "identity"
    return headers


def upstream_url(base: str, path: str, query: str) -> str:
    """``base`` + the path below the provider's prefix + the client's query (``api-version``, ``alt``,
    Gemini's ``key``: passed as sent). ``base`` may be the API's root or the base URL its SDK uses: the
    whole path segments ``base`` ends with and ``path`` starts with are sent once
    (``https://api.openai.com/v1`` + ``/v1/chat/completions``: ``.../v1/chat/completions``)."""
    base = base.rstrip("/")
    return base + quote(path[_overlap(base, path) :], safe=_PATH_SAFE) + ("?" + query if query else "")


def _overlap(base: str, path: str) -> int:
    """How many leading characters of ``path`` repeat the whole segments ``base``'s path ends with."""
    base_segments = urlsplit(base).path.split("/")[1:]
    path_segments = path.split("/")[1:]
    for count in range(min(len(base_segments), len(path_segments) - 1), 0, -1):
        if base_segments[-count:] == path_segments[:count]:
            return sum(len(segment) + 1 for segment in path_segments[:count])
    return 0


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"  # never the query (it may hold a key)


def upstream_failures() -> tuple[type[BaseException], ...]:
    """What talking to an upstream may raise (for ``except``: evaluated only when something was raised)."""
    from urllib3.exceptions import HTTPError

    return (HTTPError, OSError)


def upstream_error(error: BaseException, url: str, read_timeout: float) -> LlmtsError:
    """An urllib3 failure as the provider-rendered 502/504 (the message names only the origin)."""
    from urllib3.exceptions import ConnectTimeoutError, NewConnectionError, ReadTimeoutError

    origin = _origin(url)
    if isinstance(error, ReadTimeoutError):
        return UpstreamTimeout(
            f"the upstream {origin} sent nothing for {read_timeout:g} s (recording.read_timeout_seconds)"
        )
    if isinstance(error, ConnectTimeoutError) and not isinstance(error, NewConnectionError):
        return UpstreamTimeout(f"connecting to the upstream {origin} timed out")
    reason = type(error).__name__
    if isinstance(error, NewConnectionError):
        reason = "connection refused or unreachable"
    return UpstreamUnreachable(f"the upstream {origin} could not be reached ({reason})")


class UpstreamClient:
    """The worker process's pooled HTTP client for upstreams (created lazily, after the fork)."""

    def __init__(self) -> None:
        self._manager: urllib3.PoolManager | None = None

    def _pools(self) -> urllib3.PoolManager:
        if self._manager is None:
            import urllib3

            self._manager = urllib3.PoolManager(
                num_pools=_POOLS, maxsize=_PER_HOST, block=False, retries=False
            )
        return self._manager

    def send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes,
        *,
        connect_timeout: float,
        read_timeout: float,
    ) -> urllib3.BaseHTTPResponse:
        """Send the request and return once the upstream's status and headers arrived (the body is read
        by the caller, as it arrives); failures are ``UpstreamUnreachable`` / ``UpstreamTimeout``."""
        import urllib3

        try:
            return self._pools().request(
                method,
                url,
                body=body or None,
                headers=dict(headers),
                preload_content=False,
                decode_content=False,
                redirect=False,
                retries=False,
                timeout=urllib3.Timeout(connect=connect_timeout, read=read_timeout),
            )
        except upstream_failures() as error:
            raise upstream_error(error, url, read_timeout) from None

    def close(self) -> None:
        if self._manager is not None:
            self._manager.clear()


def upstream_chunks(response: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
    """The body as the upstream wrote it: one item per HTTP chunk when it is chunked (so a stream's frame
    boundaries survive), else whatever each read returns; urllib3 errors propagate."""
    from urllib3 import HTTPResponse

    if isinstance(response, HTTPResponse) and response.chunked and response.supports_chunked_reads():
        for chunk in response.read_chunked(decode_content=False):
            if chunk:
                yield chunk
        return
    while True:
        data = response.read1(_READ_BYTES, decode_content=False)
        if not data:
            return
        yield data
