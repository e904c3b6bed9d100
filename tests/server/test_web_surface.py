"""The web surface (issue 13): security headers on every response, no API docs or schema in
production, nothing loaded from a third party."""

from __future__ import annotations

import pytest

from starfever.engine.model import load_model
from starfever.server.api.security import CONTENT_SECURITY_POLICY
from starfever.web import STATIC_DIR
from tests.harness import Server

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it

PRODUCTION = {"STARFEVER_ENV": "production", "STARFEVER_TEST_MODE": "0",
              "STARFEVER_APPROVED_MODELS": load_model("default").sha256}


def _paths(server: Server) -> list[str]:
    root = server.base.removesuffix("/api/v1")
    return [root + "/", root + "/static/js/app.js", root + "/static/css/app.css",
            server.base + "/health", server.base + "/no-such-thing", server.base + "/wallet",
            server.base + "/game"]


def test_security_headers_on_every_response(server: Server) -> None:
    for url in _paths(server):
        response = server.http.get(url)
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY, url
        assert "default-src 'self'" in CONTENT_SECURITY_POLICY
        assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
        assert response.headers["x-frame-options"] == "DENY"
        assert "strict-transport-security" not in response.headers  # development: plain HTTP
    bad = server.call("POST", "/players", content=b"{", headers={"content-type":
                                                                 "application/json"})
    assert bad.status_code == 400 and "content-security-policy" in bad.headers


def test_the_client_loads_nothing_from_a_third_party() -> None:
    for path in STATIC_DIR.rglob("*"):
        if path.suffix in (".html", ".js", ".css", ".svg"):
            text = path.read_text().replace('xmlns="http://www.w3.org/2000/svg"', "")
            assert "http://" not in text and "https://" not in text, path
            assert " style=" not in text.replace('data-vars="', ""), path  # CSP: no inline
            assert "<script>" not in text and "javascript:" not in text, path


def test_development_serves_the_schema_but_no_swagger_ui(server: Server) -> None:
    root = server.base.removesuffix("/api/v1")
    assert server.http.get(root + "/openapi.json").status_code == 200
    assert server.http.get(root + "/docs").status_code == 404
