"""Star Fever: rules core, exact math, simulation, game server and web client."""

__version__ = "0.1.0"
