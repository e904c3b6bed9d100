"""The game conditions of a math model, in German (binding) and English, generated from the
model and its exact figures (ADR 0035).

``render(model)`` gives, per language, the conditions as Markdown and as an HTML page;
``starfever certify`` writes them into the bundle and the server serves them beside the rules
page (``GET /api/v1/game/conditions/{lang}``). A model whose conditions cannot be written
raises :class:`ConditionsError` (one line), and the server refuses to start with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from starfever.conditions import english, german
from starfever.conditions.facts import ConditionsError, Facts, gather
from starfever.conditions.market import section as market_section
from starfever.engine.model import MathModel
from starfever.markets import MarketProfile
from starfever.math.figures_format import Figures

LANGUAGES = ("de", "en")
"""German first: it binds."""


@dataclass(frozen=True)
class Conditions:
    """One language's conditions."""

    lang: str
    markdown: str
    html: str


def symbol_names(lang: str) -> dict[str, str]:
    """Every symbol code's name in ``lang`` (the names the client shows)."""
    from starfever.web.routes import SYMBOL_NAMES

    return {code: pair[0 if lang == "de" else 1] for code, pair in SYMBOL_NAMES.items()}


def render(model: MathModel, figures: Figures | None = None,
           market: MarketProfile | None = None) -> dict[str, Conditions]:
    """The conditions of ``model`` per language (``figures``: its exact figures, computed or
    read from their cache when not given), with the section of the ``market`` it is offered
    in where one is given (:mod:`starfever.conditions.market`); :class:`ConditionsError` where
    they cannot be written."""
    facts = gather(model, figures)
    out = {}
    for lang, builder in (("de", german.build), ("en", english.build)):
        doc = builder(facts, symbol_names(lang))
        if market is not None:
            market_section(doc, market, lang)
        out[lang] = Conditions(lang=lang, markdown=doc.markdown(), html=doc.html())
    return out


__all__ = ["LANGUAGES", "Conditions", "ConditionsError", "Facts", "gather", "render"]
