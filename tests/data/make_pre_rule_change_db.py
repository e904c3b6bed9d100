"""Make ``pre_rule_change.sqlite``: a database played by the code from BEFORE the €€€ rule
changed (model default 1.0, every €€€ line paid from what the earlier ones left), so that the
tests can check that its rounds still replay and audit under the current code.

Run it from a checkout of the commit before the change (it must not import today's code):

    git archive e09cb09 | tar -x -C /tmp/old && cd /tmp/old && \
        PYTHONPATH=/tmp/old python /path/to/tests/data/make_pre_rule_change_db.py OUT.sqlite
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import starfever
from starfever.engine import load_model, replay_round
from starfever.engine.rng import ReplayError
from starfever.engine.symbols import JACKPOT
from tests.server.conftest import OPERATOR, OPERATOR_PASSWORD, Server, run_cli
from tests.server.helpers import feature_draws, jackpot_draws


def two_line_draws() -> list[int]:
    """JACKPOT on rows 0, 0, 1 of reels 0-2: lines 9 and 12 both show €€€, no feature."""
    model = load_model("default")
    strips = model.base_reels
    stops = [(strips[reel].index(JACKPOT) - row) % len(strips[reel])
             for reel, row in enumerate((0, 0, 1))]
    for s3 in range(len(strips[3])):
        for s4 in range(len(strips[4])):
            try:
                result = replay_round(model, 50, (*stops, s3, s4))
            except ReplayError:
                continue
            if result.feature is None and sum(
                    e["type"] == "jackpot" for e in result.events) == 2:
                return [*stops, s3, s4]
    raise AssertionError("no two-line draws")


def main(out: Path) -> None:
    print(f"playing with {starfever.__file__}, model {load_model('default').version}")
    assert load_model("default").version == "1.0", "run this from the old code"
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "old.sqlite"
        url = f"sqlite:///{db}"
        created = run_cli("operator", "create", OPERATOR, "--database-url", url,
                          stdin=OPERATOR_PASSWORD + "\n")
        assert created.returncode == 0, created.stderr
        server = Server(url, Path(tmp) / "server.log").start()
        try:
            _, token = server.player(deposit=40_000)
            for bet in (1, 2, 5, 10, 25):
                assert server.spin(token, line_bet=bet).status_code == 201
            for bet, draws in ((50, two_line_draws()), (100, two_line_draws()),
                               (1, list(jackpot_draws())),
                               (3, list(feature_draws("star_wild"))),
                               (4, list(feature_draws("hold_and_cash")))):
                response = server.spin(token, line_bet=bet, draws=draws)
                assert response.status_code == 201, response.text
        finally:
            server.stop()
        shutil.copy(db, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
