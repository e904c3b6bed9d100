"""The game conditions in English: a translation of the German text (which binds), the same
facts in the same order (:mod:`starfever.conditions.german`)."""

from __future__ import annotations

from starfever.conditions.facts import (
    Facts,
    alternatives,
    cash_value_rows,
    cell_kind_rows,
    jackpot_payout_rows,
    line_rows,
    paytable_rows,
    return_range,
    return_rows,
    share_rows,
)
from starfever.conditions.numbers import euros, number, one_in, percent, plain
from starfever.engine.model import PRIZES_MULTIPLIER, UPGRADE_LINE_BET
from starfever.engine.money import ONE_SHARE_PER_SPIN
from starfever.report.document import Document

LANG = "en"
CELL_NAMES = {"BLANK": "blank (no symbol)", "CASH": "cash symbol", "MINOR": "MINOR jackpot",
              "MAJOR": "MAJOR jackpot", "UPGRADE": "Upgrade booster",
              "MULTIPLIER": "Multiplier booster"}


def _fixed(pays: int) -> str:
    """The name of a fixed prize symbol named by what it pays (``prize_names`` multiplier)."""
    return f"x{pays} prize symbol"


FULL_SCREEN = "full-screen prize"
"""The Mega prize named by what wins it (``prize_names`` multiplier)."""


def build(f: Facts, names: dict[str, str]) -> Document:
    """The English conditions of the model ``f`` describes (``names``: code -> English name)."""
    doc = Document(title="Supplementary game conditions – electronic lotteries – Star Fever",
                   lang=LANG)
    doc.paragraph(f"Math model {f.name}, version {f.version} (SHA-256 {f.sha256}). These "
                  "conditions were generated from this model; every number in them is the "
                  "model's. A translation: the German text is binding.")
    _paytable(doc, f, names)
    _lines(doc, f)
    _wins(doc, f)
    _features(doc, f)
    if f.has_progressive:
        _jackpot(doc, f)
    else:
        _no_progressive(doc)
    _max_win(doc, f)
    _stake_and_return(doc, f)
    return doc


def _paytable(doc: Document, f: Facts, names: dict[str, str]) -> None:
    doc.heading("Paytable")
    doc.table(["Symbol", "3 symbols: bet* x factor", "4 symbols: bet* x factor",
               "5 symbols: bet* x factor"],
              paytable_rows(f, names))
    doc.paragraph(f"*In Star Fever the “bet” is the bet class per line. The total bet is the "
                  f"chosen bet class times the number of lines. Star Fever is played on "
                  f"{f.line_count} fixed lines (see “Bets and return”).")


def _lines(doc: Document, f: Facts) -> None:
    doc.heading("Lines")
    doc.paragraph(f"The display shows 5 reels of 3 cells each. All {f.line_count} lines are "
                  "always played. Each line passes one cell of every reel; the table gives, "
                  "for each reel (1 to 5 from left to right), the row (1 to 3 from top to "
                  "bottom):")
    doc.table(["Line", "Reel 1", "Reel 2", "Reel 3", "Reel 4", "Reel 5"],
              line_rows(f))


def _wins(doc: Document, f: Facts) -> None:
    doc.heading("How wins are counted")
    doc.paragraph("3 or more matching paying symbols, starting from the far left and adjacent, "
                  "on one or more played lines, form a winning combination. On each line only "
                  "the highest winning combination is formed and paid. “Starting from the far "
                  "left” means starting on reel 1 and continuing on the reels that directly "
                  "follow. The wins of all lines add up. Every win is a whole multiple of the "
                  "bet and so an amount in whole cents.")
    doc.heading("Wild", 3)
    not_for = "a €€€ Jackpot symbol or a Star Coin" if f.has_progressive else "a Star Coin"
    doc.paragraph("The Wild can stand in for every paying symbol above to form a winning "
                  f"combination. It cannot stand in for {not_for}. A "
                  "Wild is always read as the symbol that gives the line its highest win. Wilds "
                  "alone on a line pay as Wild in the paytable.")
    doc.heading("Multiplier Wild", 3)
    doc.paragraph(f"The Multiplier Wild carries a multiplier (x{f.mwild_multiplier}) applied to "
                  "every winning combination it helps to form. Multiplier Wilds can appear only "
                  "in the Star Wild bonus feature. It stands in for paying symbols like the "
                  "Wild. All Multiplier Wilds of a bonus spin lie on one reel (see “Star "
                  "Wild”), so at most one helps to form any combination: the multiplier is "
                  f"applied at most once (x{f.mwild_multiplier}).")
    doc.heading("Star Coin", 3)
    doc.paragraph("Star Coins are symbols that can appear on every reel and trigger the bonus "
                  "features (see “Features”). A Star Coin itself pays nothing.")


def _features(doc: Document, f: Facts) -> None:
    doc.heading("Features")
    doc.heading("Star Wild", 3)
    respin_jackpot = ("" if not f.has_progressive else
                      " The €€€ jackpot can be won in the bonus spin as in any spin."
                      if f.respin_jackpot else
                      " These reels hold no €€€ Jackpot symbols either: the bonus spin cannot "
                      "win the €€€ jackpot.")
    doc.paragraph(f"When {f.star_wild_coins} Star Coins are on the display at the end of a "
                  "spin, they turn into Wilds and the player wins a bonus spin in which the new "
                  "Wilds stay where they are. When 3 of the 4 Star Coins lie on the same reel, "
                  f"one above the other, they turn into Multiplier Wilds (x{f.mwild_multiplier});"
                  " the fourth Star Coin becomes a Wild.")
    doc.paragraph(f"Star Wild is triggered by exactly {f.star_wild_coins} Star Coins ("
                  f"{f.hold_and_cash_coins} or more trigger Hold & Cash). The triggering spin's "
                  "wins are paid first; Star Coins stand in for nothing in that spin. In the "
                  "bonus spin every other cell spins again, on reels of its own that hold no "
                  "Star Coin: the bonus spin can trigger neither Star Wild nor Hold & Cash. Its "
                  "wins are counted by the paytable as in any spin, at the triggering spin's "
                  "bet." + respin_jackpot)
    doc.heading("Hold & Cash", 3)
    doc.paragraph(f"{f.hold_and_cash_coins} or more Star Coins on the display (wherever they "
                  "are on the reels) trigger the Hold & Cash feature. The triggering spin's "
                  "paytable wins are paid. No paytable wins can be won during the feature. The "
                  "feature is played at the bet of the spin that triggered it.")
    if f.prize_names == PRIZES_MULTIPLIER:
        _fixed_prizes(doc, f)
    else:
        _jackpot_prizes(doc, f)
    _boosters(doc, f)


def _jackpot_prizes(doc: Document, f: Facts) -> None:
    """Hold & Cash's Minor, Major and Mega under the supplied conditions' own names."""
    doc.paragraph(f"The player first gets {f.respins} free bonus spins. The Star Coins already "
                  "on the reels are held for the whole feature. Before the first bonus spin they "
                  "turn into cash symbols with a cash value (at random, total bet "
                  f"{alternatives(f.coin_values, 'or')}). During the feature further cash symbols, "
                  "Upgrade boosters, Multiplier boosters and MINOR or MAJOR jackpot symbols can "
                  "appear on the display.")
    doc.paragraph("In every bonus spin each empty cell shows, independently of the others, one "
                  "of these results with the probability given:")
    doc.table(["Result of an empty cell", "Probability"],
              cell_kind_rows(f, CELL_NAMES, LANG))
    doc.paragraph("Cash values (multiples of the total bet) and their probabilities:")
    doc.table(["Cash value", "Star Coin before the first bonus spin", "new cash symbol"],
              cash_value_rows(f, "total bet", LANG))
    doc.paragraph("Each spin that brings at least one new cash symbol, MINOR or MAJOR jackpot "
                  "or booster symbol sets the count of bonus spins left back to "
                  f"{f.respins}. New cash symbols, MINOR and MAJOR jackpots are held on the "
                  "display. Booster symbols vanish once their effect has been applied to every "
                  "cash symbol on the display; their cell stays empty.")
    doc.paragraph("Order within one bonus spin: first the new cash symbols, MINOR and MAJOR "
                  "jackpot symbols are held; then the boosters act one by one in reading order "
                  "(reel 1 to 5, on each reel from top to bottom), each on every cash symbol on "
                  "the display at that moment, those held in the same spin included. Boosters "
                  "never act on MINOR or MAJOR jackpot symbols.")
    doc.paragraph(f"The feature ends after {f.respins} spins in a row without a new cash "
                  "symbol, booster, MINOR or MAJOR jackpot symbol, or when the Mega jackpot is "
                  f"won (all {f.cells} cells of the display hold a cash or jackpot symbol). The "
                  "wins on the display are then collected, settled and credited to the "
                  f"player's account: the sum of the cash values, plus {f.minor} x total bet "
                  f"per MINOR, {f.major} x total bet per MAJOR and {f.mega} x total bet for the "
                  "Mega jackpot.")
    doc.paragraph("The jackpots (Minor, Major and Mega) pay the factors of the table “Jackpot "
                  "payouts”. The Mega jackpot can be won at most once per Hold & Cash feature; "
                  "it is won when every cell is covered by held symbols (cash and jackpot "
                  "symbols). MINOR and MAJOR symbols can appear on the display several times.")
    doc.heading("Jackpot payouts", 3)
    doc.table(["Jackpot", "Minor", "Major", "Mega"],
              jackpot_payout_rows(f, "Payout factor (total bet x)"))


def _fixed_prizes(doc: Document, f: Facts) -> None:
    """Hold & Cash's fixed prizes named by what they pay: nothing is called a jackpot."""
    minor, major = _fixed(f.minor), _fixed(f.major)
    doc.paragraph(f"The player first gets {f.respins} free bonus spins. The Star Coins already "
                  "on the reels are held for the whole feature. Before the first bonus spin they "
                  "turn into cash symbols with a cash value (at random, total bet "
                  f"{alternatives(f.coin_values, 'or')}). During the feature further cash symbols, "
                  f"Upgrade boosters, Multiplier boosters and fixed prize symbols ({minor} or "
                  f"{major}) can appear on the display.")
    doc.paragraph("In every bonus spin each empty cell shows, independently of the others, one "
                  "of these results with the probability given:")
    doc.table(["Result of an empty cell", "Probability"],
              cell_kind_rows(f, {**CELL_NAMES, "MINOR": minor, "MAJOR": major}, LANG))
    doc.paragraph("Cash values (multiples of the total bet) and their probabilities:")
    doc.table(["Cash value", "Star Coin before the first bonus spin", "new cash symbol"],
              cash_value_rows(f, "total bet", LANG))
    doc.paragraph("Each spin that brings at least one new cash symbol, fixed prize symbol or "
                  f"booster symbol sets the count of bonus spins left back to {f.respins}. New "
                  "cash and fixed prize symbols are held on the display. Booster symbols vanish "
                  "once their effect has been applied to every cash symbol on the display; their "
                  "cell stays empty.")
    doc.paragraph("Order within one bonus spin: first the new cash and fixed prize symbols are "
                  "held; then the boosters act one by one in reading order (reel 1 to 5, on each "
                  "reel from top to bottom), each on every cash symbol on the display at that "
                  "moment, those held in the same spin included. Boosters never act on fixed "
                  "prize symbols.")
    doc.paragraph(f"The feature ends after {f.respins} spins in a row without a new cash "
                  f"symbol, fixed prize symbol or booster, or when the {FULL_SCREEN} is won (all "
                  f"{f.cells} cells of the display hold a cash or fixed prize symbol). The wins "
                  "on the display are then collected, settled and credited to the player's "
                  f"account: the sum of the cash values, plus {f.minor} x total bet per {minor}, "
                  f"{f.major} x total bet per {major} and {f.mega} x total bet for the "
                  f"{FULL_SCREEN}.")
    doc.paragraph("The fixed prize symbols and the full-screen prize pay fixed multiples of the "
                  "total bet, given in the table “Fixed prizes”; they do not grow and are paid "
                  f"from no pool. The {FULL_SCREEN} can be won at most once per Hold & Cash "
                  "feature; it is won when every cell is covered by held symbols (cash and fixed "
                  "prize symbols). Fixed prize symbols can appear on the display several times.")
    doc.heading("Fixed prizes", 3)
    doc.table(["Name", minor, major, FULL_SCREEN],
              jackpot_payout_rows(f, "Payout factor (total bet x)"))


def _boosters(doc: Document, f: Facts) -> None:
    doc.heading("Boosters", 3)
    doc.paragraph("Two kinds of booster can appear on the reels during the Hold & Cash "
                  "feature.")
    if f.upgrade_unit == UPGRADE_LINE_BET:
        upgrade = "by the bet, that is by 1 x the bet class per line (not the total bet)"
    else:
        upgrade = f"by the total bet, that is by 1 x total bet ({f.line_count} x the line bet)"
    doc.paragraph(f"An Upgrade booster raises the value of every cash symbol already held on "
                  f"the display {upgrade}.")
    doc.paragraph("A Multiplier booster doubles the value of every cash symbol already held on "
                  "the display.")


def _jackpot(doc: Document, f: Facts) -> None:
    doc.heading("€€€ Jackpot")
    doc.paragraph("3 Jackpot symbols on a line (starting from the far left, adjacent) win the "
                  "€€€ slot jackpot. Jackpot symbols appear only on reels 1 to "
                  f"{f.jackpot_reels}; the Wild does not stand in for them. The amount depends "
                  "on the jackpot's level and the bet. The jackpot is shared as follows:")
    doc.table(["Bet", "Win in % of the jackpot's level"],
              share_rows(f, "per line", LANG))
    if f.jackpot_rule == ONE_SHARE_PER_SPIN:
        rule = ("A spin wins the €€€ jackpot at most once: when several lines show 3 Jackpot "
                "symbols, the player wins one share from the table, of the jackpot's level "
                "before the win.")
    else:
        rule = ("When several lines of a spin show 3 Jackpot symbols, each line wins a share "
                "from the table, each further line of what the earlier ones left.")
    doc.paragraph(f"{rule} The win is rounded down to the cent; the rest stays in the jackpot.")
    doc.paragraph("The jackpot is shared by every player of this installation. "
                  f"{percent(f.contribution_rate, LANG)} of every total bet flows into it. It "
                  f"starts at a seed of {euros(f.seed_cents, LANG)}; when a win takes it below "
                  "that, the operator refills it to the seed from its own funds.")


def _no_progressive(doc: Document) -> None:
    doc.heading("No progressive prize")
    doc.paragraph("This game has no progressive prize: no part of any bet flows into a pool, and "
                  "no prize grows over time or depends on other players. Every win is a fixed "
                  "multiple of the bet given in these conditions.")


def _max_win(doc: Document, f: Facts) -> None:
    doc.heading("Maximum win")
    largest = (f"The largest paytable win of one spin is {plain(f.max_base_x, LANG)} x total "
               f"bet, that of a Star Wild round (the triggering spin and the bonus spin) "
               f"{plain(f.max_star_wild_x, LANG)} x total bet.")
    if f.cap_x is None:
        doc.paragraph(f"A round's win is not limited: there is no maximum win. {largest} The "
                      "Hold & Cash feature's win has no upper bound (the "
                      + ("Mega jackpot" if f.prize_names != PRIZES_MULTIPLIER else FULL_SCREEN)
                      + f" alone pays {f.mega} x total bet).")
        return
    top = max(f.bet_classes) * f.line_count
    if not f.has_progressive:
        doc.paragraph(f"A round's total win is limited to {number(f.cap_x, LANG)} x the total "
                      f"bet ({euros(f.cap_x * top, LANG)} at a total bet of {euros(top, LANG)}). "
                      "When the win reaches the limit, the Hold & Cash feature ends at once and "
                      f"the limit is paid. {largest}")
        return
    doc.paragraph(f"A round's total win, a €€€ jackpot win included, is limited to "
                  f"{number(f.cap_x, LANG)} x the total bet ({euros(f.cap_x * top, LANG)} at a "
                  f"total bet of {euros(top, LANG)}). When the win reaches the limit, the Hold & "
                  "Cash feature ends at once and the limit is paid; the part of a €€€ jackpot "
                  f"win the limit leaves no room for stays in the jackpot. {largest}")


def _per_class(f: Facts) -> str:
    spread = return_range(f, LANG)
    if spread is None:
        return "It is the same at every bet class."
    low, high = spread
    return (f"Per bet class it lies between {percent(low, LANG)} and {percent(high, LANG)} "
            "(table).")


def _stake_and_return(doc: Document, f: Facts) -> None:
    doc.heading("Bets and return")
    doc.paragraph(f"Average return to player: about {number(f.total * 100, LANG, 1)} %")
    if f.has_progressive:
        doc.paragraph(f"This model's theoretical return, computed exactly, is "
                      f"{percent(f.total, LANG)} of the bets: {percent(f.game, LANG)} from "
                      f"lines, Star Wild and Hold & Cash and {percent(f.progressive, LANG)} from "
                      "the €€€ jackpot (the share of every total bet that flows into it). "
                      f"{_per_class(f)} What the operator adds to refill the jackpot to its seed "
                      "comes on top.")
    else:
        doc.paragraph(f"This model's theoretical return, computed exactly, is "
                      f"{percent(f.total, LANG)} of the bets, all of it from lines, Star Wild and "
                      f"Hold & Cash (no progressive prize). {_per_class(f)}")
    doc.table(["Bet class per line", "Total bet", "Theoretical return"],
              return_rows(f, LANG))
    doc.paragraph(f"Probability that a round wins something (total win above zero): "
                  f"{percent(f.hit, LANG)}. Star Wild is triggered on average once in "
                  f"{one_in(f.star_wild, LANG)} spins, Hold & Cash once in "
                  f"{one_in(f.hold_and_cash, LANG)} spins.")
    doc.paragraph("Bet classes per line: "
                  + "; ".join(euros(bet, LANG) for bet in reversed(f.bet_classes)) + ".")
    doc.paragraph(f"Number of fixed lines: {f.line_count}. Total bet = bet class x "
                  f"{f.line_count} ({euros(min(f.bet_classes) * f.line_count, LANG)} to "
                  f"{euros(max(f.bet_classes) * f.line_count, LANG)}).")
    doc.paragraph("Only persons aged 18 or over may take part.")
