"""Star Fever: rules core, exact math, simulation, game server and web client."""

from starfever.user_cache import use_user_numba_cache

__version__ = "0.1.0"

# Before any module imports numba: its compiled kernels go to the user's cache folder, never
# into the installed package (ADR 0044).
use_user_numba_cache()
