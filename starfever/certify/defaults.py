"""The defaults of ``starfever certify`` (apart, so that registering the command imports
nothing heavy)."""

DEFAULT_SPINS = 1_000_000_000
"""A billion spins: about 10 s of simulation on 2 idle cores of CI's kind (under two minutes on
a loaded one), confirming the total RTP to about +/- 0.08 pp at 99 %."""
MIN_SPINS = 100_000
DEFAULT_RNG_STOPS = 200_000
"""Live stops per reel of the RNG tests."""
DEFAULT_RNG_ROUNDS = 20_000
"""Live rounds of the RNG tests."""
DEFAULT_CLASS_SPINS = 100_000_000
"""Simulated spins at each of the 10 bet classes (10^9 in all), beside the main simulation."""
MIN_CLASS_SPINS = 10_000
RNG_MODES = ("quick", "full")
"""``--rng quick`` (the default: live tests at ``--rng-stops``/``--rng-rounds`` and the
dieharder subset) or ``full`` (also 10^8 live stops and the whole dieharder battery: hours)."""
DEFAULT_RNG_VOLUME = 100_000_000
"""Live stops of ``--rng full``'s volume tests, all strips together."""
