"""Regenerate golden_rounds.json (only when the rules or the default model change on purpose).

    python tests/data/make_golden_rounds.py
"""

from __future__ import annotations

import json
from pathlib import Path

from starfever.engine.model import load_model
from starfever.engine.rng import SeededSource
from starfever.engine.round import play_round


def main() -> None:
    model = load_model("default")
    wanted = {None: 3, "star_wild": 3, "hold_and_cash": 3}
    rounds = []
    seed = 0
    while any(wanted.values()):
        result = play_round(model, 5, SeededSource(seed), pool=250_000)
        if wanted.get(result.feature, 0) > 0:
            wanted[result.feature] -= 1
            rounds.append({"seed": seed, "line_bet": 5, "pool": 250_000,
                           "feature": result.feature, "draws": list(result.draws),
                           "events": list(result.events), "total_win": result.total_win})
        seed += 1
    out = Path(__file__).with_name("golden_rounds.json")
    out.write_text(json.dumps({"model": model.name, "version": model.version,
                               "rounds": rounds}, indent=1) + "\n")


if __name__ == "__main__":
    main()
