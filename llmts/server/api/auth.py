"""Who may use the control API: the control key (``Authorization: Bearer`` on ``/admin-api``, or typed
into the dashboard's login), the dashboard's login tokens, and the throttle on wrong keys.

One ``ControlAuth`` belongs to each ``LlmtsApp``, so to one server process (one instance of
``--workers N``): logins and the throttle are per instance. It is not session state: a login and a
client's wrong keys concern the whole control API, and resetting or deleting an llmts session must
not log a browser out (docs/architecture.md, "The dashboard"; docs/dashboard.md, "Login").
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from llmts.errors import ControlKeyThrottled

__all__ = [
    "KEY_LOCKOUT_SECONDS",
    "KEY_WINDOW_SECONDS",
    "MAX_LOGIN_TOKENS",
    "MAX_THROTTLED_CLIENTS",
    "MAX_WRONG_KEYS",
    "TOKEN_IDLE_SECONDS",
    "TOKEN_LIFETIME_SECONDS",
    "ControlAuth",
    "LoginTokens",
    "WrongKeyThrottle",
    "client_address",
]

# The throttle: MAX_WRONG_KEYS wrong control keys from one client address within KEY_WINDOW_SECONDS
# of its first lock the address out for KEY_LOCKOUT_SECONDS: every key it presents meanwhile (the right
# one too, or guessing would go on) gets 429. At most MAX_THROTTLED_CLIENTS addresses are remembered.
MAX_WRONG_KEYS = 10
KEY_WINDOW_SECONDS = 60.0
KEY_LOCKOUT_SECONDS = 60.0
MAX_THROTTLED_CLIENTS = 10_000
# Dashboard logins: at most MAX_LOGIN_TOKENS per process (a new login forgets the oldest), each valid
# until unused for TOKEN_IDLE_SECONDS or TOKEN_LIFETIME_SECONDS after login, or until its logout.
MAX_LOGIN_TOKENS = 1_000
TOKEN_IDLE_SECONDS = 8 * 3600.0
TOKEN_LIFETIME_SECONDS = 24 * 3600.0

Clock = Callable[[], float]


def client_address(environ: Mapping[str, Any]) -> str:
    """The client the throttle counts: ``REMOTE_ADDR`` (behind a proxy, the proxy's); an IPv6 address by
    its /64, which one host usually holds whole."""
    address = str(environ.get("REMOTE_ADDR", ""))
    if ":" not in address:
        return address
    import ipaddress  # only for IPv6 clients sending keys: off the provider path

    try:
        mapped = ipaddress.IPv6Address(address.partition("%")[0]).ipv4_mapped
        if mapped is not None:  # an IPv4 client of a dual-stack bind (``::ffff:a.b.c.d``): its own address
            return str(mapped)
        return str(ipaddress.IPv6Network(f"{address.partition('%')[0]}/64", strict=False))
    except ValueError:
        return address


def _same_key(presented: str, key: str) -> bool:
    """Constant time, and the same time whatever the lengths (digests of both, then compare_digest)."""
    return hmac.compare_digest(
        hashlib.sha256(presented.encode("utf-8", "surrogatepass")).digest(),
        hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest(),
    )


@dataclass(slots=True)
class _Client:
    window_start: float
    wrong: int = 0
    locked_until: float = 0.0


class WrongKeyThrottle:
    """Wrong keys per client address, in a fixed window opened by the first; bounded, oldest forgotten."""

    def __init__(
        self,
        *,
        max_wrong: int = MAX_WRONG_KEYS,
        window: float = KEY_WINDOW_SECONDS,
        lockout: float = KEY_LOCKOUT_SECONDS,
        max_clients: int = MAX_THROTTLED_CLIENTS,
        clock: Clock = time.monotonic,
    ) -> None:
        self._max_wrong = max_wrong
        self._window = window
        self._lockout = lockout
        self._max_clients = max_clients
        self._clock = clock
        # Insertion order is the order windows opened (a new window re-inserts), so the oldest is first.
        self._clients: dict[str, _Client] = {}

    def __len__(self) -> int:
        return len(self._clients)

    def check(self, client: str) -> None:
        """Raise ``ControlKeyThrottled`` while ``client`` is locked out."""
        state = self._clients.get(client)
        if state is None:
            return
        remaining = state.locked_until - self._clock()
        if remaining > 0:
            seconds = max(1, math.ceil(remaining))
            raise ControlKeyThrottled(
                f"too many wrong control keys from this address; try again in {seconds} s", seconds
            )

    def wrong_key(self, client: str) -> None:
        now = self._clock()
        state = self._clients.get(client)
        if state is None or self._stale(state, now):
            self._clients.pop(client, None)
            self._forget_stale(now)
            if len(self._clients) >= self._max_clients:
                del self._clients[next(iter(self._clients))]
            state = self._clients[client] = _Client(now)
        state.wrong += 1
        if state.wrong >= self._max_wrong:
            state.locked_until = now + self._lockout

    def _stale(self, state: _Client, now: float) -> bool:
        """Its lockout, or else its window, has passed: a wrong key now opens a new window."""
        if state.locked_until:
            return now >= state.locked_until
        return now - state.window_start >= self._window

    def _forget_stale(self, now: float) -> None:
        clients = self._clients
        while clients:
            oldest = next(iter(clients))
            if not self._stale(clients[oldest], now):
                return
            del clients[oldest]


class LoginTokens:
    """The dashboard's login tokens: random, revocable, bounded. Looked up by dict: a str hash is keyed
    per process (SipHash), so lookup time says nothing useful about a 256-bit token."""

    def __init__(
        self,
        *,
        max_tokens: int = MAX_LOGIN_TOKENS,
        idle: float = TOKEN_IDLE_SECONDS,
        lifetime: float = TOKEN_LIFETIME_SECONDS,
        clock: Clock = time.monotonic,
    ) -> None:
        self._max_tokens = max_tokens
        self._idle = idle
        self._lifetime = lifetime
        self._clock = clock
        self._tokens: dict[str, list[float]] = {}  # token -> [issued, last used], oldest issued first

    def __len__(self) -> int:
        return len(self._tokens)

    def issue(self) -> str:
        now = self._clock()
        tokens = self._tokens
        while tokens and now - tokens[oldest := next(iter(tokens))][0] >= self._lifetime:
            del tokens[oldest]
        if len(tokens) >= self._max_tokens:
            del tokens[next(iter(tokens))]
        token = secrets.token_hex(32)
        tokens[token] = [now, now]
        return token

    def valid(self, token: str) -> bool:
        """Whether ``token`` is a live login; using it keeps it from going idle."""
        times = self._tokens.get(token)
        if times is None:
            return False
        now = self._clock()
        if now - times[0] >= self._lifetime or now - times[1] >= self._idle:
            del self._tokens[token]
            return False
        times[1] = now
        return True

    def revoke(self, token: str) -> None:
        self._tokens.pop(token, None)


class ControlAuth:
    """The control key of one server process, with its login tokens and wrong-key throttle."""

    def __init__(
        self,
        control_key: str | None,
        *,
        throttle: WrongKeyThrottle | None = None,
        tokens: LoginTokens | None = None,
    ) -> None:
        self._key = control_key or None
        self.throttle = throttle or WrongKeyThrottle()
        self.tokens = tokens or LoginTokens()

    @property
    def key_required(self) -> bool:
        return self._key is not None

    def key_matches(self, environ: Mapping[str, Any], presented: str) -> bool:
        """Whether ``presented`` is the control key, counting a wrong one against the client's address.
        A locked-out address gets ``ControlKeyThrottled`` before its key is looked at."""
        if self._key is None:
            return True
        client = client_address(environ)
        self.throttle.check(client)
        if _same_key(presented, self._key):
            return True
        self.throttle.wrong_key(client)
        return False
