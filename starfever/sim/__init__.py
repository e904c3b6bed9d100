"""Compiled Monte Carlo simulation of the full game: ``simulate(model, spins, seed)``.

The simulator never calls the exact maths (``starfever.math``): it is their independent check.
"""

from starfever.sim.result import Estimate, Moments, SimulationResult
from starfever.sim.runner import CHUNK_SPINS, HISTOGRAM_EDGES, simulate

__all__ = ["CHUNK_SPINS", "HISTOGRAM_EDGES", "Estimate", "Moments", "SimulationResult",
           "simulate"]
