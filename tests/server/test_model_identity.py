"""A model file that keeps a shipped (or archived) model's name and version but not its content
is refused by ``starfever serve`` in one line, before anything is created: its rounds would be
stored as that model's, and the audit would replay them under the other one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from starfever.engine.model import load_model, load_model_version, model_from_dict
from starfever.server.identity import check_own_identity
from starfever.server.settings import SettingsError
from tests.conftest import run_cli
from tests.harness import free_port


def _serve(model_file: Path, database: Path) -> tuple[int, str]:
    done = run_cli(["serve", "--port", str(free_port()), "--database-url",
                    f"sqlite:///{database}", "--model", str(model_file)], timeout=120)
    return done.returncode, done.stderr


@pytest.mark.parametrize(("name", "version"), [("default", "2.0"), ("default", "1.0"),
                                               ("rtp94", "1.0")])
def test_serve_refuses_a_file_posing_as_a_shipped_or_archived_model(
        tmp_path: Path, name: str, version: str) -> None:
    data = load_model("default").to_dict()
    data.update(name=name, version=version)
    data["hold_and_cash"]["cell_weights"]["BLANK"] += 1  # another model, the same identity
    model_file = tmp_path / "posing.json"
    model_file.write_text(json.dumps(data), encoding="utf-8")
    database = tmp_path / "x.db"
    code, err = _serve(model_file, database)
    assert code == 2, err
    assert err.startswith("starfever serve: error: ") and err.count("\n") == 1
    assert f"model {name} {version} (sha256 " in err and "differs from the shipped model" in err
    assert not database.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["posing.json"]


def test_the_same_content_or_an_own_identity_is_accepted() -> None:
    """The shipped file, a copy of it, an archived version and a renamed model pass."""
    default = load_model("default")
    check_own_identity(default)
    check_own_identity(model_from_dict(json.loads(json.dumps(default.to_dict()))))
    archived = load_model_version("default", "1.0")
    assert archived is not None
    check_own_identity(archived)
    data = default.to_dict()
    data.update(name="house-tuned", version="1.0+test")
    data["hold_and_cash"]["cell_weights"]["BLANK"] += 1
    check_own_identity(model_from_dict(data))
    data.update(name="default", version="2.0")
    with pytest.raises(SettingsError, match="differs from the shipped model"):
        check_own_identity(model_from_dict(data))
