"""Proxy-style HTML error pages (what a load balancer in front of a provider answers)."""

from __future__ import annotations

__all__ = ["proxy_error_page"]

_TITLES = {502: "502 Bad Gateway", 503: "503 Service Temporarily Unavailable", 504: "504 Gateway Time-out"}


def proxy_error_page(status: int) -> tuple[str, list[tuple[str, str]], bytes]:
    """(status line, headers, body) of an nginx-style error page."""
    title = _TITLES[status]
    body = (
        f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n"
        "<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    ).encode()
    headers = [("Content-Type", "text/html"), ("Content-Length", str(len(body))), ("Connection", "close")]
    return title, headers, body
