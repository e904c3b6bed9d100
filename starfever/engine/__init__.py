"""The pure rules core of Star Fever: imports only the standard library."""

from starfever.engine.lines import (
    GridEvaluation,
    InvalidGrid,
    LinePay,
    evaluate_grid,
    evaluate_line,
)
from starfever.engine.model import MathModel, ModelError, load_model
from starfever.engine.rng import RandomSource, ReplayError, SeededSource, SystemRandomSource
from starfever.engine.round import RoundResult, play_round, replay_round
from starfever.engine.symbols import BET_CLASSES, LINES, PAYTABLE, Cents, InvalidBet

__all__ = [
    "BET_CLASSES", "LINES", "PAYTABLE", "Cents", "GridEvaluation", "InvalidBet", "InvalidGrid",
    "LinePay", "MathModel", "ModelError", "RandomSource", "ReplayError", "RoundResult",
    "SeededSource", "SystemRandomSource", "evaluate_grid", "evaluate_line", "load_model",
    "play_round", "replay_round",
]
