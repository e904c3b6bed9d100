"""Numbers as each language of the conditions writes them."""

from __future__ import annotations

from fractions import Fraction

DECIMAL = {"de": ",", "en": "."}
GROUP = {"de": ".", "en": ","}


def number(x: float | Fraction | int, lang: str, decimals: int = 0) -> str:
    """``x`` with ``decimals`` decimals, grouped by thousands: 1.234,5 (de), 1,234.5 (en)."""
    text = f"{float(x):,.{decimals}f}"
    return text.replace(",", "\0").replace(".", DECIMAL[lang]).replace("\0", GROUP[lang])


def plain(x: float | int, lang: str) -> str:
    """A number as short as it is exact to 6 significant digits (160.5, 256, 1800)."""
    text = f"{float(x):,.6g}" if abs(x) < 1e6 else f"{float(x):,.0f}"
    return text.replace(",", "\0").replace(".", DECIMAL[lang]).replace("\0", GROUP[lang])


def euros(cents: int, lang: str) -> str:
    """An amount as the conditions write the bet classes: € 1, € 0,75 (de); €1, €0.75 (en)."""
    whole, rest = divmod(cents, 100)
    text = f"{whole:,}".replace(",", GROUP[lang]) + (f"{DECIMAL[lang]}{rest:02d}" if rest
                                                      else "")
    return f"€ {text}" if lang == "de" else f"€{text}"


def percent(fraction: float | Fraction, lang: str, decimals: int = 2) -> str:
    """A fraction as a percentage: 95,50 % (de), 95.50 % (en)."""
    return f"{number(float(fraction) * 100, lang, decimals)} %"


def share_percent(fraction: Fraction, lang: str) -> str:
    """A €€€ share as the conditions' table writes it: 1 %, 75 %, 12,5 %."""
    value = fraction * 100
    if value.denominator == 1:
        return f"{value.numerator} %"
    return f"{plain(float(value), lang)} %"


def one_in(probability: float, lang: str) -> str:
    """The mean number of rounds per event of ``probability``: 53,7 (de), 53.7 (en)."""
    if probability <= 0:
        return "–"
    return number(1 / probability, lang, 1)
