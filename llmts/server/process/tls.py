"""``llmts serve --tls``: the certificate and key the server presents (docs/tls.md).

Given (``--tls-cert``/``--tls-key``), the pair is loaded once before anything listens, so a wrong path or a
key that does not match exits with a message instead of failing in the worker. Otherwise a self-signed
certificate is generated at start-up (ECDSA P-256, ``CN=localhost``, valid ``VALID_DAYS`` days) for the
names a client dials: ``localhost``, ``127.0.0.1``, ``::1``, the ``--host`` and the ``--allowed-hosts``
names. It is written to ``--tls-dir`` (kept) or to a private temporary directory (0700) removed when the
process that made it exits. ``cryptography`` (the ``tls`` extra) is imported only to generate one, so the
arbiter of a server without ``--tls`` never loads it (tests/test_layers.py). gunicorn serves the pair
(its ``certfile``/``keyfile``); every process of ``--workers N`` gets the supervisor's one pair.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import ssl
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

__all__ = ["CERT_NAME", "KEY_NAME", "TRUST_DOC", "VALID_DAYS", "TlsError", "TlsFiles", "prepare_tls"]

CERT_NAME = "cert.pem"
KEY_NAME = "key.pem"
VALID_DAYS = 30
# Where the start-up line sends whoever must trust the certificate.
TRUST_DOC = "docs/tls.md"
_MISSING_CRYPTOGRAPHY = (
    "--tls without --tls-cert/--tls-key generates a certificate with the `cryptography` package, which is "
    "not installed: pip install 'llmts[tls]' (or give --tls-cert FILE --tls-key FILE)"
)


class TlsError(Exception):
    """Start-up only (exit code 2, no HTTP status): the TLS options cannot give a certificate to serve."""


@dataclass
class TlsFiles:
    """The certificate and key to serve, and the temporary directory this process made for them."""

    cert: str
    key: str
    made_dir: str | None = None
    _owner: int = field(default_factory=os.getpid)

    def announcement(self) -> str:
        """The start-up line naming the certificate clients must trust."""
        return f"llmts: TLS certificate: {self.cert} (trust it: {TRUST_DOC})"

    def remove(self) -> None:
        """Remove the temporary directory, in the process that made it only: gunicorn's forked workers
        leave through the same stack as the arbiter."""
        if self.made_dir is not None and os.getpid() == self._owner:
            shutil.rmtree(self.made_dir, ignore_errors=True)
            self.made_dir = None


def prepare_tls(
    *,
    cert: str | None,
    key: str | None,
    directory: str | None,
    host: str,
    allowed_hosts: str | None = None,
) -> TlsFiles:
    """The pair to serve: the given one once it loads, else a fresh self-signed one in ``directory`` (or a
    private temporary directory); ``TlsError`` says why not."""
    if (cert is None) != (key is None):
        raise TlsError("--tls-cert and --tls-key go together (the certificate and its private key)")
    if cert is not None and key is not None:
        if directory:
            raise TlsError("--tls-dir is where a generated certificate goes: not with --tls-cert/--tls-key")
        _check_pair(cert, key)
        return TlsFiles(os.path.abspath(cert), os.path.abspath(key))
    made = None
    if directory:
        target = Path(directory).resolve()
        try:
            target.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise TlsError(f"--tls-dir {directory}: {exc.strerror or exc}") from None
    else:
        made = tempfile.mkdtemp(prefix="llmts-tls-")  # mode 0700
        target = Path(made)
    try:
        _generate(target, _names(host, allowed_hosts))
    except BaseException:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        raise
    return TlsFiles(str(target / CERT_NAME), str(target / KEY_NAME), made)


def _check_pair(cert: str, key: str) -> None:
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        reason = exc.strerror if isinstance(exc, FileNotFoundError) else str(exc)
        raise TlsError(f"cannot serve --tls-cert {cert} with --tls-key {key}: {reason}") from None


def _names(host: str, allowed_hosts: str | None) -> tuple[list[str], list[str]]:
    """(DNS names, IP addresses) the certificate is for: loopback, the bound host, the allowed hosts."""
    dns, ips = ["localhost"], ["127.0.0.1", "::1"]
    candidates = [host.strip("[]")]
    for entry in (allowed_hosts or "").split(","):
        entry = entry.strip()
        if entry and entry != "*":
            candidates.append("*" + entry if entry.startswith(".") else entry)
    for name in candidates:
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            if name and name.lower() not in dns:
                dns.append(name.lower())
            continue
        if address.is_unspecified:  # 0.0.0.0 or ::: reached by this machine's name
            hostname = socket.gethostname().lower()
            if hostname and hostname not in dns:
                dns.append(hostname)
        elif str(address) not in ips:
            ips.append(str(address))
    return dns, ips


def _generate(directory: Path, names: tuple[list[str], list[str]]) -> None:
    """Write ``cert.pem`` and ``key.pem`` (0600) into ``directory``. The certificate is an end-entity one
    (not a CA) with the key identifiers and usages strict verifiers ask for (Python 3.13's
    ``VERIFY_X509_STRICT``), trusted directly as its own anchor."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise TlsError(_MISSING_CRYPTOGRAPHY) from None
    dns, ips = names
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, "localhost"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "llmts test server"),
        ]
    )
    alternative: list[x509.GeneralName] = [x509.DNSName(name) for name in dns]
    alternative += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    public = key.public_key()
    now = datetime.now(timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))  # a client clock slightly behind still accepts it
        .not_valid_after(now + timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(alternative), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    _write(directory / KEY_NAME, key_pem, 0o600)
    _write(directory / CERT_NAME, certificate.public_bytes(serialization.Encoding.PEM), 0o644)


def _write(path: Path, data: bytes, mode: int) -> None:
    # Written beside and renamed: a client reading the certificate never sees half of one.
    partial = path.with_name(path.name + ".partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(descriptor, "wb") as handle:
        os.fchmod(descriptor, mode)  # an older file of that name keeps its mode through O_CREAT
        handle.write(data)
    os.replace(partial, path)
