"""Signing a request forwarded to a Bedrock upstream again (docs/recording.md, "Bedrock upstreams"): the
``bedrock`` adapter's ``sign_upstream`` hook (``llmts/providers/signing.py``).

A SigV4 signature covers the host the client signed for (llmts), so the client's own one would be refused
by the real service. The forwarded request is signed again, with SigV4 for service ``bedrock``, for the
upstream's host and region, with the AWS credentials of the llmts server process (botocore's standard
chain: ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN``, ``AWS_PROFILE`` and the
shared files, container and instance roles). A Bedrock API key (``Authorization: Bearer ...``) is not
bound to a host and passes unchanged, as other providers' keys do.

botocore is an optional extra (``llmts[bedrock-upstream]``), imported on first use only (in a worker,
after gevent patched the process); signing is computation, no socket of its own. The credentials are
resolved once per worker process and kept by the signer the adapter holds (process-level infrastructure
like the routing map: no session state; docs/architecture.md, "Record and replay"); refreshable ones
(roles, SSO) refresh as botocore decides, read per request with ``get_frozen_credentials``.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from llmts.errors import UpstreamUnsigned
from llmts.providers.bedrock.info import upstream_region
from llmts.providers.signing import SignedRequest, UpstreamRequest

if TYPE_CHECKING:
    from botocore.credentials import Credentials

__all__ = ["SigV4Signer"]
# The client's signature and what it signed with: replaced by the new signature (a ``Date`` header would
# make botocore sign it instead of ``X-Amz-Date``).
_REPLACED = frozenset({"authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256", "date"})
_SCOPE_REGION = re.compile(r"Credential=[^/\s,]+/\d{8}/([a-z0-9-]+)/")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_INSTALL = "install botocore in the llmts server's environment (pip install 'llmts[bedrock-upstream]')"
_SET_CREDENTIALS = (
    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary credentials), "
    "or AWS_PROFILE, in the llmts server's environment and restart it"
)


def _host(url: str) -> str:
    """The ``Host`` header for ``url``: the port only when it is not the scheme's default."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    if parts.port is not None and parts.port == _DEFAULT_PORTS.get(parts.scheme):
        host = host.rsplit(":", 1)[0]
    return host


def _resolve_credentials() -> tuple[Credentials | None, str | None, str | None]:
    """The process's AWS credentials and configured region by botocore's chain, or why there are none."""
    try:
        from botocore.exceptions import BotoCoreError
        from botocore.session import get_session
    except ImportError:
        return None, None, "botocore is not installed; " + _INSTALL
    try:
        session = get_session()
        credentials = session.get_credentials()
        # botocore reads AWS_DEFAULT_REGION and the profile's; the other AWS SDKs read AWS_REGION.
        region = session.get_config_variable("region") or os.environ.get("AWS_REGION")
    except (BotoCoreError, OSError, ValueError) as error:  # a profile that does not exist, a broken file...
        return None, None, f"the AWS credentials could not be resolved ({error}); " + _SET_CREDENTIALS
    if credentials is None:
        return None, None, "the llmts server has no AWS credentials; " + _SET_CREDENTIALS
    return credentials, region if isinstance(region, str) and region else None, None


class SigV4Signer:
    """The worker process's AWS credentials (resolved on first use, kept) and the signing of requests
    forwarded to an upstream of AWS service ``service`` (the credential scope's service)."""

    def __init__(self, service: str) -> None:
        self.service = service
        self._resolved = False
        self._credentials: Credentials | None = None
        self._region: str | None = None
        self._failure: str | None = None

    def _resolve(self) -> None:
        # Resolving may wait on the network (container and instance roles), so another greenlet may
        # resolve at the same time: both reach the same answer, and it is published only when complete.
        credentials, region, failure = _resolve_credentials()
        self._credentials, self._region, self._failure = credentials, region, failure
        self._resolved = True

    def __call__(self, request: UpstreamRequest) -> SignedRequest:
        """The request's headers as they go to its URL, the client's SigV4 signature replaced by the
        server's (a bearer key passes unchanged), and the server's key id and session token they carry (a
        recording redacts them, should the upstream echo them); ``UpstreamUnsigned`` when it cannot be
        signed."""
        headers, url = request.headers, request.url
        authorization = headers.get("authorization", "")
        if authorization[:7].lower() == "bearer ":
            return SignedRequest(headers)
        if not self._resolved:
            self._resolve()
        if self._failure is not None or self._credentials is None:
            raise UpstreamUnsigned(f"cannot sign the request for the Bedrock upstream: {self._failure}")
        region = self._region_for(url, authorization)
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.exceptions import BotoCoreError

        try:
            credentials: Any = self._credentials.get_frozen_credentials()  # refreshed when due
        except BotoCoreError as error:
            raise UpstreamUnsigned(
                f"cannot sign the request for the Bedrock upstream: refreshing the AWS credentials "
                f"failed ({error})"
            ) from None
        kept = {name: value for name, value in headers.items() if name not in _REPLACED}
        kept["host"] = _host(url)
        signed = AWSRequest(method=request.method, url=url, data=request.body, headers=kept)
        SigV4Auth(credentials, self.service, region).add_auth(signed)
        sent = tuple(str(secret) for secret in (credentials.access_key, credentials.token) if secret)
        return SignedRequest({name.lower(): str(value) for name, value in signed.headers.items()}, sent)

    def _region_for(self, url: str, authorization: str) -> str:
        """The upstream host's region, else the one the client signed for, else the server's configured
        region (``AWS_REGION``, ``AWS_DEFAULT_REGION``, the profile's)."""
        region = upstream_region(url)
        if region is None:
            scope = _SCOPE_REGION.search(authorization)
            region = scope.group(1) if scope else self._region
        if region is None:
            raise UpstreamUnsigned(
                "cannot sign the request for the Bedrock upstream: its host names no region and the request "
                "has no SigV4 signature to take it from; use https://bedrock-runtime.<region>.amazonaws.com "
                "or set AWS_REGION in the llmts server's environment"
            )
        return region
