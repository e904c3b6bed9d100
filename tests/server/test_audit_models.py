"""A server may play a model from a file that is not shipped with the package (a tuned one,
``starfever tune --out``): its rounds audit when the audit is given that file (``--model``), and
are reported, not passed, when it is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from starfever.engine.model import load_model
from tests.harness import Databases, run_cli, start_server

pytestmark = pytest.mark.slow


def test_rounds_of_a_model_from_a_file_audit_with_that_file(tmp_path: Path) -> None:
    data = json.loads(run_cli("model", "--json").stdout)
    data.update(name="house-tuned", version="1.0+test")
    model_file = tmp_path / "house-tuned.json"
    model_file.write_text(json.dumps(data))
    assert load_model(str(model_file)).name == "house-tuned"
    server = start_server(Databases(tmp_path / "db"), "sqlite", tmp_path,
                          args=["--model", str(model_file)])
    url = server.database_url
    try:
        _name, token = server.player(deposit=5_000)
        for _ in range(3):
            assert server.spin(token, line_bet=1).status_code == 201
    finally:
        server.stop()

    unknown = run_cli("audit", "--database-url", url)
    assert unknown.returncode == 1
    assert "model house-tuned 1.0+test is not available" in unknown.stdout
    assert "--model PATH" in unknown.stdout

    done = run_cli("audit", "--database-url", url, "--model", str(model_file))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "audit OK: 3 rounds" in done.stdout

    missing = run_cli("audit", "--database-url", url, "--model", str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
