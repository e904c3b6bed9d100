"""The served currencies at the server's edge (ADR 0076): which currency a new wallet or a
launch gets, and the one refusal of a currency not served."""

from __future__ import annotations

from starfever.currencies import Currency, load_currency
from starfever.server.services.errors import Unprocessable
from starfever.server.settings import Settings


def served_currency(settings: Settings, wanted: str | None) -> str:
    """``wanted`` if this installation serves it, the first served currency for ``None``;
    ``422 currency_not_served`` otherwise."""
    served = settings.served_currencies
    if wanted is None:
        return served[0]
    if wanted not in served:
        raise Unprocessable(f"this server serves {', '.join(served)}, not {wanted!r}",
                            code="currency_not_served")
    return wanted


def currency_of(code: str) -> Currency:
    """The served currency ``code`` (its file: exponent, ladder)."""
    return load_currency(code)


__all__ = ["currency_of", "served_currency"]
