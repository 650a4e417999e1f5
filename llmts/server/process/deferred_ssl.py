"""gunicorn's modules imported without ``ssl``, so that the arbiter of a server without TLS never loads
OpenSSL (docs/design/memory.md, "Why the arbiter imports gunicorn without `ssl`").

gunicorn's ``config``, ``sock`` and worker modules import ``ssl`` at the top, but an arbiter without TLS
only reads three of its constants while its settings are defined (``PROTOCOL_TLS``, ``PROTOCOL_SSLv23``,
``CERT_NONE``). Loading ``ssl`` maps libcrypto and libssl: about 4 MiB of the arbiter's resident memory.
The forked worker needs them anyway (gevent patches ``ssl``), so an idle server's summed RSS counted them
once per process (its PSS, which shares them out, hardly changes). This holds for the ``llmts`` and
``gevent`` worker classes; ``gevent_pywsgi``'s, imported in the arbiter, brings ``ssl`` with gevent's
pywsgi, and a TLS server's arbiter loads it for its certificate (server/process/tls.py).

``ssl_deferred()`` imports gunicorn under a stand-in ``ssl`` module that holds those constants and loads
the real module on the first other attribute it is asked for, so ``ssl.create_default_context`` and the
rest work as before, only later. Two kinds of name keep a stand-in: ``from ssl import SSLError`` (gunicorn's
``workers/base.py``) binds a stand-in class, and ``import ssl`` binds the stand-in module (which forwards
to the real one). ``settle()`` replaces both with the real objects in the forked worker before it serves
(``WorkerBoot.patch``, server/process/boot.py). When ``ssl`` is already loaded, nothing is deferred. It
swaps ``sys.modules["ssl"]`` for the whole process, so it runs at import time, before any thread starts.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

__all__ = ["SEEDED_CONSTANTS", "settle", "ssl_deferred"]

# The constants gunicorn's ``config.py`` reads while its settings are defined, with the values the real
# ``ssl`` gives them (IntEnum members equal to these ints; tests/server/process/test_deferred_ssl.py).
SEEDED_CONSTANTS: dict[str, int] = {"PROTOCOL_TLS": 2, "PROTOCOL_SSLv23": 2, "CERT_NONE": 0}

# The modules imported under the stand-in: where ``settle`` looks for the stand-in error class.
_IMPORTED_UNDER_STAND_IN: list[str] = []


class _StandInSslError(OSError):
    """What ``from ssl import SSLError`` binds while gunicorn imports; ``settle()`` replaces it."""


class _DeferredSsl(ModuleType):
    """The stand-in ``ssl``: the seeded constants, and every other attribute from the real module."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # the import system probing (``__path__``...) must not load OpenSSL
            raise AttributeError(name)
        return getattr(_real_ssl(), name)


def _real_ssl() -> ModuleType:
    if isinstance(sys.modules.get("ssl"), _DeferredSsl):
        del sys.modules["ssl"]  # asked for more while gunicorn imports: from here on, the real one
    import ssl

    return ssl


@contextmanager
def ssl_deferred() -> Iterator[None]:
    """Import gunicorn's modules inside this block without loading ``ssl`` (see the module docstring)."""
    if "ssl" in sys.modules:
        yield
        return
    stand_in = _DeferredSsl("ssl", "llmts's stand-in for ssl until it is needed (deferred_ssl.py)")
    for name, value in SEEDED_CONSTANTS.items():
        setattr(stand_in, name, value)
    stand_in.SSLError = _StandInSslError  # type: ignore[attr-defined]
    before = set(sys.modules)
    sys.modules["ssl"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("ssl") is stand_in:
            del sys.modules["ssl"]
        # Only ``from ssl import SSLError`` needed the stand-in class; ``ssl.SSLError`` read later (gunicorn's
        # ``except ssl.SSLError``) comes from the real module.
        del stand_in.SSLError  # type: ignore[attr-defined]
        _IMPORTED_UNDER_STAND_IN.extend(sorted(set(sys.modules) - before - {"ssl"}))


def settle() -> None:
    """In the forked worker: every name bound to the stand-in error class becomes ``ssl.SSLError``, and
    every name bound to the stand-in module becomes the real ``ssl``."""
    if not _IMPORTED_UNDER_STAND_IN:
        return
    import ssl

    for module_name in _IMPORTED_UNDER_STAND_IN:
        namespace = getattr(sys.modules.get(module_name), "__dict__", {})
        for name, value in list(namespace.items()):
            if value is _StandInSslError:
                namespace[name] = ssl.SSLError
            elif isinstance(value, _DeferredSsl):
                namespace[name] = ssl
    _IMPORTED_UNDER_STAND_IN.clear()
