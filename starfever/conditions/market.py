"""The market's section of the game conditions: what the market profile the game is offered
under adds to the model's rules (the least time per game, the stake caps, the young adults'
cap, what the presentation may not do, the player protections), in German and English, and in
British English where the ``uk`` market's wording differs ("stake", "net position", "game
cycle"). Amounts are written in the market's own currency (its ISO 4217 code), in minor units
as the profile states them (ADR 0077)."""

from __future__ import annotations

from starfever.conditions.numbers import DECIMAL, GROUP, plain
from starfever.markets import DEMO_FORBIDDEN, DEMO_VERIFIED_ONLY, MarketProfile
from starfever.report.document import Document

BRITISH: frozenset[str] = frozenset({"uk"})
"""The markets whose English is British English of the regulator's words."""


def money(minor: int, currency: str, lang: str) -> str:
    """``GBP 5.00`` (en), ``5,00 GBP`` (de): an amount in minor units of ``currency``."""
    whole, rest = divmod(minor, 100)
    text = f"{whole:,}".replace(",", GROUP[lang]) + f"{DECIMAL[lang]}{rest:02d}"
    return f"{currency} {text}" if lang == "en" else f"{text} {currency}"


def _first_up(text: str) -> str:
    return text[:1].upper() + text[1:]


def section(doc: Document, market: MarketProfile, lang: str) -> None:
    """Add the market's section to ``doc`` in ``lang`` (``de`` or ``en``)."""
    if lang == "de":
        _german(doc, market)
    else:
        _english(doc, market)


def _german(doc: Document, m: MarketProfile) -> None:
    cur = m.currency
    doc.heading(f"Bestimmungen des Marktes „{m.name}“")
    said = []
    if m.min_round_ms:
        said.append(f"Jedes Spiel dauert mindestens {plain(m.min_round_ms / 1000, 'de')} "
                    "Sekunden vom Beginn eines Spiels bis zum Beginn des nächsten; ein früherer "
                    "Einsatz wird vom Server abgelehnt und nicht abgebucht.")
    said.append("Der Gesamteinsatz eines Spiels beträgt höchstens "
                f"{money(m.max_stake_cents, cur, 'de')}.")
    young = m.young_adult_stake_cap
    if young is not None:
        said.append(f"Für Spieler unter {young.below_age} Jahren beträgt er höchstens "
                    f"{money(young.max_stake_cents, cur, 'de')}; das Alter ergibt sich aus "
                    "dem Geburtsdatum des Spielers (beim Spiel über den Betreiber aus dem "
                    "Geburtsdatum, das der Betreiber beim Start übermittelt; ohne dieses "
                    "startet das Spiel nicht).")
    said.append("Es gibt kein automatisches Spiel.")
    if not m.turbo:
        said.append("Es gibt keinen Turbo.")
    if not m.slam_stop:
        said.append("Ein Spiel kann nicht abgekürzt oder übersprungen werden.")
    if m.show_session_clock or m.show_net_position:
        shown = [s for s, on in (("die Spielzeit der Sitzung", m.show_session_clock),
                                 ("das Ergebnis der Sitzung (Gewinne minus Einsätze)",
                                  m.show_net_position)) if on]
        said.append(f"{_first_up(' und '.join(shown))} "
                    f"{'sind' if len(shown) > 1 else 'ist'} immer zu sehen.")
    if not m.celebrate_win_equal_to_stake:
        said.append("Ein Gewinn bis zur Höhe des Einsatzes wird nicht als Gewinn gefeiert.")
    if m.panic_button:
        said.append("Eine Panik-Taste sperrt den Spieler nach einer Bestätigung sofort für 24 "
                    "Stunden.")
    if m.one_session_per_player:
        said.append("Ein Spieler spielt in einer Sitzung zugleich: eine neue beendet die "
                    "vorige.")
    if m.monthly_deposit_limit_cents is not None:
        said.append("Einzahlungen sind auf "
                    f"{money(m.monthly_deposit_limit_cents, cur, 'de')} im Kalendermonat "
                    "begrenzt.")
    if m.demo == DEMO_VERIFIED_ONLY:
        said.append("Spiel ohne Einsatz (Demo) gibt es nur für Spieler, die der Betreiber "
                    "verifiziert hat.")
    elif m.demo == DEMO_FORBIDDEN:
        said.append("Spiel ohne Einsatz (Demo) wird nicht angeboten.")
    doc.paragraph(" ".join(said))


def _english(doc: Document, m: MarketProfile) -> None:
    cur = m.currency
    british = m.name in BRITISH
    stake, game = ("stake", "game cycle") if british else ("total bet", "game")
    doc.heading(f"Rules of the market “{m.name}”")
    said = []
    if m.min_round_ms:
        said.append(f"Every {game} lasts at least {plain(m.min_round_ms / 1000, 'en')} seconds "
                    f"from the start of one to the start of the next; an earlier {stake} is "
                    "refused by the server and not taken.")
    said.append(f"The {stake} of one {'spin' if british else 'game'} is at most "
                f"{money(m.max_stake_cents, cur, 'en')}.")
    young = m.young_adult_stake_cap
    if young is not None:
        said.append(f"For players under {young.below_age} it is at most "
                    f"{money(young.max_stake_cents, cur, 'en')}; the age is taken from the "
                    "player's date of birth (when played through an operator, from the date of "
                    "birth the operator sends at launch, without which the game does not "
                    "start).")
    said.append("There is no autoplay.")
    if not m.turbo:
        said.append("There is no turbo mode.")
    if not m.slam_stop:
        said.append(f"A {game} cannot be cut short or skipped (no slam stop).")
    if m.show_session_clock or m.show_net_position:
        net = ("the net position of the session (winnings minus stakes)" if british
               else "the session's net result (wins minus bets)")
        shown = [s for s, on in (("the elapsed time of the session", m.show_session_clock),
                                 (net, m.show_net_position)) if on]
        said.append(f"{_first_up(' and '.join(shown))} "
                    f"{'are' if len(shown) > 1 else 'is'} always on screen.")
    if not m.celebrate_win_equal_to_stake:
        said.append(f"A win at or below the {stake} is not celebrated as a win.")
    if m.panic_button:
        said.append("A panic button excludes the player at once for 24 hours, after one "
                    "confirmation.")
    if m.one_session_per_player:
        said.append("A player plays in one session at a time: a new one ends the one before.")
    if m.monthly_deposit_limit_cents is not None:
        said.append("Deposits are limited to "
                    f"{money(m.monthly_deposit_limit_cents, cur, 'en')} a calendar month.")
    if m.demo == DEMO_VERIFIED_ONLY:
        said.append("Free-to-play (demo) games are offered only to players the operator has "
                    "verified.")
    elif m.demo == DEMO_FORBIDDEN:
        said.append("Free-to-play (demo) games are not offered.")
    doc.paragraph(" ".join(said))


__all__ = ["BRITISH", "money", "section"]
