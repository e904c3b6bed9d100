"""Compiled Monte Carlo simulation of the full game: ``simulate(model, spins, seed)``.

The simulator never calls the exact maths (``starfever.math``): it is their independent check.

The compiled runner (numba, half a second to import) loads on first use of a name below, not
with the package: ``starfever serve`` and most commands import ``starfever.sim.cli`` only to
register ``simulate`` and read the pool's replay, and every start paid for it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starfever.sim.result import Estimate, Moments, SimulationResult
    from starfever.sim.runner import CHUNK_SPINS, HISTOGRAM_EDGES, simulate

__all__ = ["CHUNK_SPINS", "HISTOGRAM_EDGES", "Estimate", "Moments", "SimulationResult",
           "simulate"]

_HOMES = {"CHUNK_SPINS": "runner", "HISTOGRAM_EDGES": "runner", "simulate": "runner",
          "Estimate": "result", "Moments": "result", "SimulationResult": "result"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'starfever.sim' has no attribute {name!r}")
    return getattr(importlib.import_module(f"starfever.sim.{home}"), name)
