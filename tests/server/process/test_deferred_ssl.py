"""The arbiter of a server without TLS never loads OpenSSL; the worker gets the real ``ssl`` everywhere
(llmts/server/process/deferred_ssl.py; docs/design/memory.md, "Why the arbiter imports gunicorn without
`ssl`")."""

from __future__ import annotations

import ssl
import subprocess
import sys
from pathlib import Path

from llmts import LlmTestServer
from llmts.server.process.deferred_ssl import SEEDED_CONSTANTS
from tests.helpers import parent_pid


def _maps_openssl(pid: int) -> bool:
    maps = Path(f"/proc/{pid}/maps").read_text()
    return any(name in maps for name in ("libssl", "libcrypto", "/_ssl.", "/_hashlib."))


def test_the_arbiter_of_a_server_without_tls_maps_no_openssl_and_its_worker_does(
    llmts_server: LlmTestServer,
) -> None:
    worker = int(llmts_server.process_stats()["pid"])
    arbiter = parent_pid(worker)
    assert _maps_openssl(worker), "the worker loads ssl (gevent patches it), so the check can see it"
    assert not _maps_openssl(arbiter), "the arbiter of a server without TLS loaded OpenSSL"


def test_the_arbiter_of_a_tls_server_loads_ssl_and_serves(tls_server: LlmTestServer) -> None:
    # Its certificate is checked before it forks (server/process/tls.py imports ssl after gunicorn, whose
    # modules keep the stand-in, which then forwards to the real module).
    worker = int(tls_server.process_stats()["pid"])
    assert _maps_openssl(parent_pid(worker))


def _run_fresh(code: str) -> None:
    """Run ``code`` in a new interpreter (where nothing imported ssl yet); it prints ``ok`` at its end."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_the_seeded_constants_are_the_real_ones() -> None:
    assert {name: int(getattr(ssl, name)) for name in SEEDED_CONSTANTS} == SEEDED_CONSTANTS


def test_gunicorn_imported_under_the_stand_in_works_with_the_real_ssl_after_settle() -> None:
    code = """
import sys
import llmts.server.process.gunicorn_app
assert "ssl" not in sys.modules and "_ssl" not in sys.modules, sorted(m for m in sys.modules if "ssl" in m)
import gunicorn.config, gunicorn.sock, gunicorn.workers.base
assert gunicorn.config.SSLVersion.default == 2 and gunicorn.config.CertReqs.default == 0
stand_in_error = gunicorn.workers.base.SSLError
assert stand_in_error.__name__ == "_StandInSslError"
# Any other attribute loads the real module and answers from it.
context = gunicorn.sock.ssl.create_default_context(gunicorn.sock.ssl.Purpose.CLIENT_AUTH)
import ssl
assert isinstance(context, ssl.SSLContext) and sys.modules["ssl"] is ssl
from llmts.server.process.deferred_ssl import settle
settle()
assert gunicorn.workers.base.SSLError is ssl.SSLError
assert gunicorn.workers.base_async.ssl is ssl and gunicorn.config.ssl is ssl and gunicorn.sock.ssl is ssl
# Nothing else holds the stand-in class (a tuple of exceptions built at import would).
import gc, types
holders = [r for r in gc.get_referrers(stand_in_error) if not isinstance(r, (type, types.FrameType))]
holders = [r for r in holders if not (isinstance(r, tuple) and r == stand_in_error.__mro__)]
holders = [r for r in holders if getattr(r, "__objclass__", None) is not stand_in_error]
own = (vars(sys.modules["__main__"]), vars(sys.modules["llmts.server.process.deferred_ssl"]))
holders = [r for r in holders if not any(r is namespace for namespace in own)]
assert holders == [], [type(r) for r in holders]
print("ok")
"""
    _run_fresh(code)


def test_nothing_is_deferred_when_ssl_is_already_loaded() -> None:
    code = """
import ssl, sys
import llmts.server.process.gunicorn_app
import gunicorn.workers.base
assert gunicorn.workers.base.SSLError is ssl.SSLError
from llmts.server.process import deferred_ssl
assert deferred_ssl._IMPORTED_UNDER_STAND_IN == []
print("ok")
"""
    _run_fresh(code)


def test_the_worker_boot_settles_before_gevent_patches() -> None:
    # WorkerBoot.patch is what each of the three worker classes runs first in the forked child.
    code = """
import llmts.server.process.gunicorn_app
import gunicorn.workers.base
from llmts.server.process.boot import WorkerBoot
seen = []
class _Base:
    def patch(self):
        seen.append(gunicorn.workers.base.SSLError)
class _Worker(WorkerBoot, _Base):
    pass
_Worker().patch()
import ssl
assert seen == [ssl.SSLError], seen
print("ok")
"""
    _run_fresh(code)
