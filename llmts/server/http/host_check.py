"""Which ``Host`` names the server answers: the guard against DNS rebinding (docs/server.md, "Allowed hosts").

A web page the developer opens can make their browser send requests to a name the attacker controls
that resolves, a moment later, to 127.0.0.1 ("DNS rebinding"): the browser then treats llmts as that
page's own origin, and without a control key the page could configure sessions and read their journals.
What gives the trick away is the ``Host`` header: it still names the attacker's domain. So a server bound
only to loopback answers only requests whose ``Host`` is a loopback name (``localhost``, ``*.localhost``,
``127.0.0.0/8``, ``::1``), plus what ``--allowed-hosts`` adds (a name, ``.example.com`` for a domain and its
subdomains, or ``*`` for any); other requests get 403 ``llm_test_server_host_not_allowed`` in the route's
envelope and change nothing. A server bound to another interface is reachable by name from elsewhere, so
without ``--allowed-hosts`` it answers every ``Host``. A request without ``Host`` (HTTP/1.0) is no
browser's and is answered.

Each distinct ``Host`` value is judged once and remembered (a bounded cache that starts over when full),
so the check costs a dict lookup per request.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["ALLOWED_HOSTS_ENV", "HostPolicy", "host_policy", "is_loopback_bind"]

ALLOWED_HOSTS_ENV = "LLMTS_ALLOWED_HOSTS"
_CACHE_LIMIT = 256


def _host_name(header: str) -> str:
    """The name of a ``Host`` header, lower case, without port, brackets or a trailing dot."""
    host = header.strip().lower()
    if host.startswith("["):  # an IPv6 literal: [::1]:8080
        return host[1 : host.find("]")] if "]" in host else host
    if host.count(":") == 1:
        host = host.partition(":")[0]
    return host.rstrip(".")


def _is_loopback_name(name: str) -> bool:
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_loopback_bind(address: str) -> bool:
    """A bind address (``127.0.0.1:8080``, ``[::1]:0``, ``localhost:80``, ``unix:/path``) reachable only from
    this machine."""
    if address.startswith(("unix:", "fd://")):
        return True
    return _is_loopback_name(_host_name(address))


class HostPolicy:
    """The ``Host`` names one server answers: loopback names always, plus ``allowed`` entries."""

    def __init__(self, allowed: Iterable[str]) -> None:
        entries = [entry.strip().lower().rstrip(".") for entry in allowed if entry.strip()]
        self.allowed = tuple(entries)
        self._any = "*" in entries
        self._names = frozenset(_host_name(entry) for entry in entries if not entry.startswith("."))
        self._domains = tuple(entry for entry in entries if entry.startswith("."))
        self._judged: dict[str, bool] = {}

    def allows(self, header: Any) -> bool:
        """Whether a request with this ``Host`` header (None: none sent) is answered."""
        if header is None or self._any:
            return True
        judged = self._judged.get(header)
        if judged is None:
            judged = self._judge(str(header))
            if len(self._judged) >= _CACHE_LIMIT:
                self._judged.clear()
            self._judged[header] = judged
        return judged

    def _judge(self, header: str) -> bool:
        name = _host_name(header)
        if _is_loopback_name(name) or name in self._names:
            return True
        return any(name == domain[1:] or name.endswith(domain) for domain in self._domains)


def host_policy(binds: Iterable[str], allowed: str | None, env: Mapping[str, str]) -> HostPolicy | None:
    """The policy for a server bound to ``binds`` with ``--allowed-hosts`` ``allowed`` (a comma-separated
    list; None: ``LLMTS_ALLOWED_HOSTS``, else unset). None: every ``Host`` is answered."""
    if allowed is None:
        allowed = env.get(ALLOWED_HOSTS_ENV) or None
    if allowed is not None:
        policy = HostPolicy(allowed.split(","))
        return None if policy.allowed == ("*",) else policy
    addresses = list(binds)
    if addresses and all(is_loopback_bind(address) for address in addresses):
        return HostPolicy(())
    return None
