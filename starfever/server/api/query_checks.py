"""Unknown query parameters are ``422 unknown_query_parameter`` on every GET of the API.

FastAPI ignores a query parameter a route does not declare, so a misspelt filter
(``/operator/rounds?player_idd=...``) answered the newest rounds of everyone as if nothing had
been asked (issue 35, finding 2). :func:`known_query_only` is a dependency of the whole
``/api/v1`` router: it compares the request's parameter names with the ones the matched route
(and its dependencies) declare, read once per route from FastAPI's own dependant.

Only reads (GET, HEAD) are checked: their query is what they are asked, while no write takes
its input from the query (a write's is its body), and the spin's tests reach its FastAPI
route, past the lean door, with a query string (``tests/server/test_spin_route.py``).
"""

from __future__ import annotations

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from starfever.server.services.errors import Unprocessable

READS = frozenset(("GET", "HEAD"))
_KNOWN: dict[int, frozenset[str]] = {}
"""The declared query parameter names of each route (by ``id``; routes live as long as the
app)."""


def declared_query(dependant: Dependant) -> frozenset[str]:
    """The names (aliases) of every query parameter ``dependant`` and its sub-dependencies
    read."""
    names: set[str] = set()
    todo = [dependant]
    while todo:
        current = todo.pop()
        names.update(str(field.alias) for field in current.query_params)
        todo.extend(current.dependencies)
    return frozenset(names)


def known_query_only(request: Request) -> None:
    """Refuse a request whose query names a parameter its route does not take."""
    route = request.scope.get("route")
    if request.method not in READS or not isinstance(route, APIRoute) \
            or not request.query_params:
        return
    known = _KNOWN.get(id(route))
    if known is None:
        known = _KNOWN[id(route)] = declared_query(route.dependant)
    unknown = sorted(set(request.query_params.keys()) - known)
    if unknown:
        taken = ", ".join(sorted(known)) or "none"
        raise Unprocessable(f"unknown query parameter {unknown[0][:40]!r}; this route takes: "
                            f"{taken}", code="unknown_query_parameter")


__all__ = ["declared_query", "known_query_only"]
