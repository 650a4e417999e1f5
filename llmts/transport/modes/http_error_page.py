"""``http_error_page``: answer ``status`` with the HTML page a load balancer in front of a provider sends."""

from __future__ import annotations

from llmts.schema.faults import StreamDelivery
from llmts.transport.modes.base import Page, replaces_answer

__all__ = ["page", "proxy_error_page"]

_TITLES = {502: "502 Bad Gateway", 503: "503 Service Temporarily Unavailable", 504: "504 Gateway Time-out"}


def proxy_error_page(status: int) -> Page:
    """An nginx-style error page."""
    title = _TITLES[status]
    body = (
        f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n"
        "<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    ).encode()
    headers = [("Content-Type", "text/html"), ("Content-Length", str(len(body))), ("Connection", "close")]
    return Page(status, title, headers, body)


@replaces_answer("http_error_page")
def page(plan: StreamDelivery) -> Page:
    assert plan.status is not None  # the mode table requires it
    return proxy_error_page(plan.status)
