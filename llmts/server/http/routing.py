"""werkzeug routing as the server uses it: URLs are matched, never built.

werkzeug compiles two URL builders per rule (Python source through ``ast`` and ``compile``) when a map
binds it; for the server's ~100 rules that was about 20 ms of each worker's boot, for builders nothing
calls. ``MatchRule`` compiles them on first use instead, so building a URL still works.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from werkzeug.routing import Rule

__all__ = ["MatchRule", "routable"]


class MatchRule(Rule):
    """A werkzeug ``Rule`` whose URL builders compile when first called."""

    def _compile_builder(self, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        compile_builder = super()._compile_builder
        built: list[Callable[..., tuple[str, str]]] = []

        # werkzeug binds what this returns to the rule and calls it with the URL's values as keywords.
        def build(rule: Rule, /, **values: Any) -> tuple[str, str]:
            if not built:
                built.append(compile_builder(append_unknown))
            return built[0](rule, **values)

        return build


def routable(path: str) -> bool:
    """Whether ``path`` may be matched: werkzeug strips extra leading slashes before matching, so ``//x``
    would reach the rule of ``/x``; a path that starts with ``//`` is no route (a 404, or no WebSocket)."""
    return not path.startswith("//")
