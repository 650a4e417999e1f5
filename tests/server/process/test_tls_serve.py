"""``llmts serve --tls`` as a real subprocess (docs/tls.md): the start-up lines, the generated certificate
and its private directory, a given certificate, ``--workers N`` serving one certificate, and the options'
errors before anything listens."""

from __future__ import annotations

import datetime
import ipaddress
import re
import signal
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from llmts.server.cli import main
from llmts.server.process.tls import VALID_DAYS, TlsError, prepare_tls

_CERT_LINE = re.compile(r"^llmts: TLS certificate: (\S+) \(trust it: docs/tls\.md\)$")
_LISTENING = re.compile(r"^llmts listening on (https://127\.0\.0\.1:\d+)$")
_SUPERVISOR = re.compile(r"^llmts: 2 server processes: (https://\S+) (https://\S+)$")


class _Serve:
    """``python -m llmts serve`` with its stdout read line by line."""

    def __init__(self, *args: str) -> None:
        command = [sys.executable, "-m", "llmts", "serve", "--port", "0", "--no-access-log", *args]
        self.popen = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True
        )
        self.lines: list[str] = []

    def until(self, pattern: re.Pattern[str], timeout: float = 30) -> re.Match[str]:
        assert self.popen.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.popen.stdout.readline()
            if not line and self.popen.poll() is not None:
                break
            self.lines.append(line.rstrip("\n"))
            match = pattern.match(self.lines[-1])
            if match:
                return match
        raise AssertionError(f"no line matching {pattern.pattern}; printed: {self.lines}")

    def stop(self) -> int:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
        code = self.popen.wait(15)
        assert self.popen.stdout is not None
        self.popen.stdout.close()
        return code


@pytest.fixture
def serve() -> Iterator[list[_Serve]]:
    started: list[_Serve] = []
    yield started
    for proc in started:
        if proc.popen.poll() is None:
            proc.popen.kill()
            proc.popen.wait(10)


def _served_certificate(url: str) -> str:
    """The certificate the server at ``url`` presents (PEM), not checked."""
    host, port = url.removeprefix("https://").rsplit(":", 1)
    return ssl.get_server_certificate((host, int(port)))


def _same_certificate(first: str, second: str) -> bool:
    return ssl.PEM_cert_to_DER_cert(first) == ssl.PEM_cert_to_DER_cert(second)


def _strict_health(url: str, cafile: str) -> int:
    context = ssl.create_default_context(cafile=cafile)
    context.verify_flags |= ssl.VERIFY_X509_STRICT  # Python 3.13's default: a stricter certificate check
    with urllib.request.urlopen(f"{url}/health", context=context, timeout=10) as answer:
        return int(answer.status)


def test_generated_certificate_is_announced_served_strictly_valid_and_removed_on_exit(
    serve: list[_Serve],
) -> None:
    proc = _Serve("--tls")
    serve.append(proc)
    url = proc.until(_LISTENING)[1]
    cert_path = next(m[1] for line in proc.lines if (m := _CERT_LINE.match(line)))
    assert proc.lines[-2:] == [
        f"llmts: TLS certificate: {cert_path} (trust it: docs/tls.md)",
        f"llmts listening on {url}",
    ]
    directory = Path(cert_path).parent
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((directory / "key.pem").stat().st_mode) == 0o600
    assert _strict_health(url, cert_path) == 200
    assert _same_certificate(_served_certificate(url), Path(cert_path).read_text())

    certificate = x509.load_pem_x509_certificate(Path(cert_path).read_bytes())
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert names.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1"),
    ]
    key = certificate.public_key()
    assert isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == "secp256r1"
    assert certificate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    lifetime = certificate.not_valid_after_utc - datetime.datetime.now(datetime.timezone.utc)
    assert datetime.timedelta(days=VALID_DAYS - 1) < lifetime <= datetime.timedelta(days=VALID_DAYS)

    assert proc.stop() == 0
    assert not directory.exists(), "the private directory goes with the server"


def _self_signed(directory: Path, common_name: str) -> tuple[Path, Path]:
    """A certificate made by the test (not by llmts) for 127.0.0.1, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .sign(key, hashes.SHA256())
    )
    cert, key_file = directory / f"{common_name}.pem", directory / f"{common_name}.key"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert, key_file


def test_a_given_certificate_is_served_and_left_in_place(serve: list[_Serve], tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path, "given-by-the-test")
    proc = _Serve("--tls-cert", str(cert), "--tls-key", str(key))  # --tls implied
    serve.append(proc)
    url = proc.until(_LISTENING)[1]
    assert f"llmts: TLS certificate: {cert} (trust it: docs/tls.md)" in proc.lines
    assert _same_certificate(_served_certificate(url), cert.read_text())
    with urllib.request.urlopen(
        f"{url}/health", context=ssl.create_default_context(cafile=str(cert))
    ) as answer:
        assert answer.status == 200
    assert proc.stop() == 0
    assert cert.exists() and key.exists()


def test_workers_serve_one_certificate_kept_in_tls_dir(serve: list[_Serve], tmp_path: Path) -> None:
    directory = tmp_path / "certs"
    proc = _Serve("--workers", "2", "--tls-dir", str(directory))
    serve.append(proc)
    urls = proc.until(_SUPERVISOR).groups()
    cert = directory / "cert.pem"
    assert proc.lines.count(f"llmts: TLS certificate: {cert} (trust it: docs/tls.md)") == 3, "\n".join(
        proc.lines
    )
    for url in urls:
        assert _same_certificate(_served_certificate(url), cert.read_text())
        assert _strict_health(url, str(cert)) == 200
    assert proc.stop() == 0
    assert cert.exists() and (directory / "key.pem").exists(), "--tls-dir is kept"


def test_workers_supervisor_removes_its_generated_certificate(serve: list[_Serve]) -> None:
    proc = _Serve("--workers", "2", "--tls")
    serve.append(proc)
    urls = proc.until(_SUPERVISOR).groups()
    cert = next(m[1] for line in proc.lines if (m := _CERT_LINE.match(line)))
    assert all(_same_certificate(_served_certificate(url), Path(cert).read_text()) for url in urls)
    assert proc.stop() == 0
    assert not Path(cert).parent.exists()


# --- errors before anything listens (in process: main returns before gunicorn starts) --------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
        (["--tls", "--tls-key", "k.pem"], "--tls-cert and --tls-key go together"),
        (["--tls-cert", "missing.pem", "--tls-key", "missing.key"], "cannot serve --tls-cert missing.pem"),
        (["--tls-cert", "a.pem", "--tls-key", "b.key"], "cannot serve --tls-cert a.pem with --tls-key b.key"),
        (["--tls-cert", "a.pem", "--tls-key", "a.key", "--tls-dir", "d"], "--tls-dir is where a generated"),
    ],
)
def test_tls_options_that_give_no_certificate_exit_with_2(
    args: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    _self_signed(tmp_path, "a")
    _self_signed(tmp_path, "b")  # b.key does not match a.pem
    assert main(["serve", "--port", "0", *args]) == 2
    assert message in capsys.readouterr().err


def test_without_cryptography_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "cryptography", None)  # import cryptography fails
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("LLMTS_TLS", "1")
    assert main(["serve", "--port", "0"]) == 2
    assert "pip install 'llmts[tls]'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [], "the private directory made for it is gone"


def test_the_certificate_names_the_bound_and_allowed_hosts(tmp_path: Path) -> None:
    files = prepare_tls(
        cert=None,
        key=None,
        directory=str(tmp_path),
        host="0.0.0.0",
        allowed_hosts=".corp.example, llmts.test,*",
    )
    assert files.made_dir is None and files.cert == str(tmp_path / "cert.pem")
    names = (
        x509.load_pem_x509_certificate(Path(files.cert).read_bytes())
        .extensions.get_extension_for_class(x509.SubjectAlternativeName)
        .value
    )
    hostname = socket.gethostname().lower()
    assert names.get_values_for_type(x509.DNSName) == ["localhost", hostname, "*.corp.example", "llmts.test"]
    files = prepare_tls(cert=None, key=None, directory=str(tmp_path), host="192.0.2.7")
    names = (
        x509.load_pem_x509_certificate(Path(files.cert).read_bytes())
        .extensions.get_extension_for_class(x509.SubjectAlternativeName)
        .value
    )
    assert ipaddress.ip_address("192.0.2.7") in names.get_values_for_type(x509.IPAddress)
    with pytest.raises(TlsError, match="--tls-dir"):
        prepare_tls(
            cert=None, key=None, directory=str(tmp_path / "cert.pem" / "below-a-file"), host="127.0.0.1"
        )
