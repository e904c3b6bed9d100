"""The game conditions in German, the binding language: the supplied conditions' clauses in
their own words, each number filled from the model (:class:`Facts`), and every reading
RULES.md fixes where the supplied text is open, written out."""

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

LANG = "de"
CELL_NAMES = {"BLANK": "leer (kein Symbol)", "CASH": "Direktgewinnsymbol",
              "MINOR": "„Minor“ Jackpot", "MAJOR": "„Major“ Jackpot",
              "UPGRADE": "Upgrade Booster", "MULTIPLIER": "Multiplikator Booster"}


def _fixed(pays: int) -> str:
    """The name of a fixed prize symbol named by what it pays (``prize_names`` multiplier)."""
    return f"Festgewinnsymbol x{pays}"


FULL_SCREEN = "Vollbildgewinn"
"""The Mega prize named by what wins it (``prize_names`` multiplier)."""


def build(f: Facts, names: dict[str, str]) -> Document:
    """The German conditions of the model ``f`` describes (``names``: symbol code -> German
    name)."""
    doc = Document(title="Ergänzungsspielbedingungen – Elektronische Lotterien – Star Fever",
                   lang=LANG)
    doc.paragraph(f"Mathematisches Modell {f.name}, Version {f.version} (SHA-256 {f.sha256}). "
                  "Diese Spielbedingungen wurden aus diesem Modell erzeugt; jede Zahl darin ist "
                  "die des Modells.")
    _paytable(doc, f, names)
    _lines(doc, f)
    _wins(doc, f, names)
    _features(doc, f)
    if f.has_progressive:
        _jackpot(doc, f)
    else:
        _no_progressive(doc)
    _max_win(doc, f)
    _stake_and_return(doc, f)
    return doc


def _paytable(doc: Document, f: Facts, names: dict[str, str]) -> None:
    doc.heading("Gewinntabelle")
    doc.table(["Symbol", "Gewinnklasse 1 (3 Symbole): Einsatz* x Faktor",
               "Gewinnklasse 2 (4 Symbole): Einsatz* x Faktor",
               "Gewinnklasse 3 (5 Symbole): Einsatz* x Faktor"],
              paytable_rows(f, names))
    doc.paragraph(f"*„Einsatz“ bezieht sich bei „Star Fever“ auf die Einsatzklasse pro "
                  f"Gewinnlinie. Der Gesamteinsatz berechnet sich durch die gewählte "
                  f"Einsatzklasse mal der Anzahl an Gewinnlinien. „Star Fever“ wird mit fixen "
                  f"{f.line_count} Gewinnlinien gespielt (siehe „Einsatz und Ausschüttung“).")


def _lines(doc: Document, f: Facts) -> None:
    doc.heading("Gewinnlinien")
    doc.paragraph(f"Das Display zeigt 5 Walzen mit je 3 Feldern. Es werden immer alle "
                  f"{f.line_count} Gewinnlinien gespielt. Jede Gewinnlinie führt über ein Feld "
                  "jeder Walze; die Tabelle nennt für jede Walze (von links nach rechts 1 bis 5) "
                  "die Reihe (von oben nach unten 1 bis 3):")
    doc.table(["Linie", "Walze 1", "Walze 2", "Walze 3", "Walze 4", "Walze 5"],
              line_rows(f))


def _wins(doc: Document, f: Facts, names: dict[str, str]) -> None:
    doc.heading("Gewinnermittlung")
    doc.paragraph("3 oder mehr übereinstimmende Gewinnsymbole, ganz links beginnend und "
                  "nebeneinanderliegend, auf einer oder mehreren gespielten Linien, stellen eine "
                  "Gewinnkombination dar. Pro Gewinnlinie wird immer die höchste "
                  "Gewinnkombination gebildet und ausbezahlt. „Ganz links beginnend“ heißt: auf "
                  "Walze 1 beginnend, auf den unmittelbar folgenden Walzen fortgesetzt. Die "
                  "Gewinne aller Gewinnlinien werden addiert. Jeder Gewinn ist ein ganzzahliges "
                  "Vielfaches des Einsatzes und damit ein Betrag in ganzen Cent.")
    doc.heading("Wild Symbol", 3)
    not_for = ("ein €€€-Jackpot Symbol oder Star Coins Symbol" if f.has_progressive else
               "ein Star Coins Symbol")
    doc.paragraph("Das Wild Symbol kann jedes der oben angeführten Gewinnsymbole für die Bildung "
                  "einer Gewinnkombination ersetzen. Das Wild Symbol kann jedoch nicht als Ersatz "
                  f"für {not_for} dienen. Wild Symbole werden "
                  "immer als jenes Symbol interpretiert, welches den höchsten Gewinn pro "
                  "Gewinnlinie bringt. Wild Symbole allein auf einer Gewinnlinie zahlen als Wild "
                  "laut Gewinntabelle.")
    doc.heading("Multiplikator Wild", 3)
    doc.paragraph(f"Das Multiplikator Wild enthält einen Multiplikator (x{f.mwild_multiplier}), "
                  "der auf jede Gewinnkombination angewendet wird, zu deren Bildung das "
                  "Multiplikator Wild beiträgt. Multiplikator Wilds können nur im Star Wild Bonus "
                  "Feature erscheinen. Es ersetzt die Gewinnsymbole wie das Wild Symbol. Da alle "
                  "Multiplikator Wilds eines Bonus Spins auf derselben Walze liegen (siehe "
                  "„Star Wild“), trägt zu einer Gewinnkombination höchstens eines bei: der "
                  f"Multiplikator wird höchstens einmal (x{f.mwild_multiplier}) angewendet.")
    doc.heading("Star Coin", 3)
    doc.paragraph("Star Coins sind Symbole, die auf allen Walzen erscheinen können und "
                  "verschiedene Bonus Features auslösen (siehe „Features“). Star Coins selbst "
                  "zahlen keinen Gewinn.")


def _features(doc: Document, f: Facts) -> None:
    doc.heading("Features")
    doc.heading("Star Wild", 3)
    respin_jackpot = ("" if not f.has_progressive else
                      " Auch der €€€-Jackpot kann im Bonus Spin wie bei jedem Spin gewonnen "
                      "werden." if f.respin_jackpot else
                      " Diese Walzen enthalten auch keine €€€-Jackpot Symbole: im Bonus Spin kann "
                      "der €€€-Jackpot nicht gewonnen werden.")
    doc.paragraph(f"Wenn sich nach Ende eines Spins {f.star_wild_coins} Star Coins am Display "
                  "befinden, verwandeln sich diese in Wild Symbole und der Spielteilnehmer "
                  "gewinnt einen Bonus Spin, bei dem die neu entstandenen Wild Symbole auf ihrer "
                  "Walzenposition verbleiben. Wenn sich 3 der 4 Star Coins auf derselben Walze "
                  "vertikal untereinander befinden, verwandeln sich diese in Multiplikator Wilds "
                  f"(x{f.mwild_multiplier}); der vierte Star Coin wird ein Wild Symbol.")
    doc.paragraph(f"Star Wild wird von genau {f.star_wild_coins} Star Coins ausgelöst (ab "
                  f"{f.hold_and_cash_coins} Star Coins: Hold & Cash). Die Gewinne des auslösenden "
                  "Spins werden zuerst ausbezahlt; Star Coins ersetzen in diesem Spin nichts. Im "
                  "Bonus Spin drehen alle übrigen Felder neu, auf eigenen Walzen, die keine Star "
                  "Coins enthalten: der Bonus Spin kann weder Star Wild noch Hold & Cash "
                  "auslösen. Seine Gewinne werden laut Gewinntabelle ermittelt wie bei jedem Spin, "
                  "mit demselben Einsatz wie der auslösende Spin." + respin_jackpot)
    doc.heading("Hold & Cash", 3)
    doc.paragraph(f"Erscheinen {_word(f.hold_and_cash_coins)} oder mehr Star Coins auf dem "
                  "Display (unabhängig von ihrer Position auf den Walzen) wird das Hold & Cash "
                  "Feature ausgelöst. Die Gewinne des auslösenden Spins laut Gewinntabelle werden "
                  "ausbezahlt. Während des Hold & Cash Features können keine Gewinne gemäß der "
                  "Gewinntabelle gewonnen werden. Das Bonus-Feature wird mit demselben Einsatz "
                  "gespielt, wie der das Feature auslösende Spin.")
    if f.prize_names == PRIZES_MULTIPLIER:
        _fixed_prizes(doc, f)
    else:
        _jackpot_prizes(doc, f)
    _boosters(doc, f)


def _jackpot_prizes(doc: Document, f: Facts) -> None:
    """Hold & Cash's Minor, Major and Mega under the supplied conditions' own names."""
    doc.paragraph(f"Im Hold & Cash Feature erhält der Spielteilnehmer zunächst {f.respins} "
                  "gratis Bonus Spins. Während des Features werden die zuvor erzielten Star "
                  "Coins auf den Walzen fixiert. Star Coins werden vor dem ersten Bonusspin in "
                  "Direktgewinnsymbole umgewandelt und erscheinen mit Direktgewinnen (zufällig "
                  f"Gesamteinsatz {alternatives(f.coin_values, 'oder')}). Während des Features "
                  "können weitere Direktgewinnsymbole, Upgrade Booster, Multiplikator Booster "
                  "sowie „Minor Jackpot“ oder „Major Jackpot“ Symbole auf dem Display "
                  "erscheinen.")
    doc.paragraph("In jedem Bonus Spin zeigt jedes freie Feld, unabhängig von den anderen, eines "
                  "der folgenden Ergebnisse mit der angegebenen Wahrscheinlichkeit:")
    doc.table(["Ergebnis eines freien Feldes", "Wahrscheinlichkeit"],
              cell_kind_rows(f, CELL_NAMES, LANG))
    doc.paragraph("Direktgewinne (Vielfache des Gesamteinsatzes) und ihre Wahrscheinlichkeiten:")
    doc.table(["Direktgewinn", "Star Coin vor dem ersten Bonusspin", "neues Direktgewinnsymbol"],
              cash_value_rows(f, "Gesamteinsatz", LANG))
    doc.paragraph("Bei jedem Spin, bei dem zumindest ein weiteres Direktgewinnsymbol, „Minor“ "
                  "oder „Major“ Jackpot oder ein Booster Symbol erscheint, wird der Zähler für "
                  f"die verbleibenden Bonus Spins wieder auf {f.respins} gesetzt. Neu "
                  "hinzugekommene Direktgewinnsymbole, „Minor“ oder „Major“ Jackpot werden am "
                  "Display fixiert. Die Boostersymbole verschwinden wieder, nachdem ihr Effekt "
                  "auf alle am Display befindlichen Star Coin Direktgewinnsymbole angewendet "
                  "wurde; ihr Feld bleibt frei.")
    doc.paragraph("Reihenfolge innerhalb eines Bonus Spins: zuerst werden die neu erschienenen "
                  "Direktgewinnsymbole, „Minor“ und „Major“ Jackpot Symbole am Display fixiert; "
                  "danach wirken die Booster Symbole einzeln nacheinander in Leserichtung (Walze "
                  "1 bis 5, auf jeder Walze von oben nach unten), jeder auf alle in diesem "
                  "Moment am Display befindlichen Direktgewinnsymbole, auch die im selben Spin "
                  "neu fixierten. Booster wirken nicht auf „Minor“ und „Major“ Jackpot Symbole.")
    doc.paragraph(f"Das Feature endet, sobald {f.respins} aufeinanderfolgende Spins ohne weitere "
                  "Direktgewinnsymbole, Boostersymbole, „Minor“ oder „Major“ Jackpot Symbole "
                  "durchgeführt wurden oder der Mega Jackpot gewonnen wurde (d.h. alle "
                  "Felder des Displays sind mit Direktgewinn- oder Bonus Jackpot-Symbolen "
                  f"belegt). Das Display hat {f.cells} Felder. Abschließend werden die am "
                  "Display befindlichen Gewinne gesammelt, abgerechnet und dem Spielerkonto "
                  f"gutgeschrieben: die Summe der Direktgewinne, dazu {f.minor} x "
                  f"Gesamteinsatz je „Minor“, {f.major} x Gesamteinsatz je „Major“ und "
                  f"{f.mega} x Gesamteinsatz für den Mega Jackpot.")
    doc.paragraph("Die Jackpots (Minor, Major und Mega) werden laut Tabelle „Jackpot "
                  "Auszahlungen“ mit den angegebenen Faktoren ausbezahlt. Der Mega Jackpot kann "
                  "maximal einmal pro Hold & Cash-Feature gewonnen werden und wird ausgelöst, "
                  "wenn alle Felder mit Sticky Symbolen (Direktgewinnsymbole und Jackpot Symbole) "
                  "bedeckt wurden. „Minor“ und „Major“ Jackpot Symbole können mehrfach am Display "
                  "erscheinen.")
    doc.heading("Bonus Jackpot Auszahlungen", 3)
    doc.table(["Jackpot Bezeichnung", "Minor", "Major", "Mega"],
              jackpot_payout_rows(f, "Auszahlungsfaktor (Gesamteinsatz x)"))


def _fixed_prizes(doc: Document, f: Facts) -> None:
    """Hold & Cash's fixed prizes named by what they pay: nothing is called a jackpot."""
    minor, major = _fixed(f.minor), _fixed(f.major)
    doc.paragraph(f"Im Hold & Cash Feature erhält der Spielteilnehmer zunächst {f.respins} "
                  "gratis Bonus Spins. Während des Features werden die zuvor erzielten Star "
                  "Coins auf den Walzen fixiert. Star Coins werden vor dem ersten Bonusspin in "
                  "Direktgewinnsymbole umgewandelt und erscheinen mit Direktgewinnen (zufällig "
                  f"Gesamteinsatz {alternatives(f.coin_values, 'oder')}). Während des Features "
                  "können weitere Direktgewinnsymbole, Upgrade Booster, Multiplikator Booster "
                  f"sowie Festgewinnsymbole ({minor} oder {major}) auf dem Display erscheinen.")
    doc.paragraph("In jedem Bonus Spin zeigt jedes freie Feld, unabhängig von den anderen, eines "
                  "der folgenden Ergebnisse mit der angegebenen Wahrscheinlichkeit:")
    doc.table(["Ergebnis eines freien Feldes", "Wahrscheinlichkeit"],
              cell_kind_rows(f, {**CELL_NAMES, "MINOR": minor, "MAJOR": major}, LANG))
    doc.paragraph("Direktgewinne (Vielfache des Gesamteinsatzes) und ihre Wahrscheinlichkeiten:")
    doc.table(["Direktgewinn", "Star Coin vor dem ersten Bonusspin", "neues Direktgewinnsymbol"],
              cash_value_rows(f, "Gesamteinsatz", LANG))
    doc.paragraph("Bei jedem Spin, bei dem zumindest ein weiteres Direktgewinnsymbol, "
                  "Festgewinnsymbol oder Booster Symbol erscheint, wird der Zähler für die "
                  f"verbleibenden Bonus Spins wieder auf {f.respins} gesetzt. Neu hinzugekommene "
                  "Direktgewinn- und Festgewinnsymbole werden am Display fixiert. Die "
                  "Boostersymbole verschwinden wieder, nachdem ihr Effekt auf alle am Display "
                  "befindlichen Star Coin Direktgewinnsymbole angewendet wurde; ihr Feld bleibt "
                  "frei.")
    doc.paragraph("Reihenfolge innerhalb eines Bonus Spins: zuerst werden die neu erschienenen "
                  "Direktgewinn- und Festgewinnsymbole am Display fixiert; danach wirken die "
                  "Booster Symbole einzeln nacheinander in Leserichtung (Walze 1 bis 5, auf jeder "
                  "Walze von oben nach unten), jeder auf alle in diesem Moment am Display "
                  "befindlichen Direktgewinnsymbole, auch die im selben Spin neu fixierten. "
                  "Booster wirken nicht auf Festgewinnsymbole.")
    doc.paragraph(f"Das Feature endet, sobald {f.respins} aufeinanderfolgende Spins ohne weitere "
                  "Direktgewinn-, Festgewinn- oder Boostersymbole durchgeführt wurden oder der "
                  f"{FULL_SCREEN} gewonnen wurde (d.h. alle Felder des Displays sind mit "
                  f"Direktgewinn- oder Festgewinnsymbolen belegt). Das Display hat {f.cells} "
                  "Felder. Abschließend werden die am Display befindlichen Gewinne gesammelt, "
                  "abgerechnet und dem Spielerkonto gutgeschrieben: die Summe der Direktgewinne, "
                  f"dazu {f.minor} x Gesamteinsatz je {minor}, {f.major} x Gesamteinsatz je "
                  f"{major} und {f.mega} x Gesamteinsatz für den {FULL_SCREEN}.")
    doc.paragraph("Festgewinnsymbole und der Vollbildgewinn zahlen feste Vielfache des "
                  "Gesamteinsatzes laut Tabelle „Festgewinne“; sie wachsen nicht und werden aus "
                  f"keinem Topf bezahlt. Der {FULL_SCREEN} kann maximal einmal pro Hold & "
                  "Cash-Feature gewonnen werden und wird ausgelöst, wenn alle Felder mit "
                  "fixierten Symbolen (Direktgewinn- und Festgewinnsymbole) bedeckt wurden. "
                  "Festgewinnsymbole können mehrfach am Display erscheinen.")
    doc.heading("Festgewinne", 3)
    doc.table(["Bezeichnung", minor, major, FULL_SCREEN],
              jackpot_payout_rows(f, "Auszahlungsfaktor (Gesamteinsatz x)"))


def _boosters(doc: Document, f: Facts) -> None:
    doc.heading("Booster Symbole", 3)
    doc.paragraph("Während des Hold & Cash Features können zwei verschiedene Booster Symbole auf "
                  "den Walzen erscheinen.")
    if f.upgrade_unit == UPGRADE_LINE_BET:
        upgrade = ("um die Einsatzhöhe, das heißt um 1 x Einsatz (die Einsatzklasse pro "
                   "Gewinnlinie, nicht den Gesamteinsatz)")
    else:
        upgrade = (f"um den Gesamteinsatz, das heißt um 1 x Gesamteinsatz ({f.line_count} x "
                   "Einsatz)")
    doc.paragraph("Upgrade Booster erhöhen die Gewinnanzeige von jedem bereits auf dem Display "
                  f"fixierten Direktgewinnsymbol {upgrade}.")
    doc.paragraph("Multiplikator Booster verdoppeln die Gewinnanzeige von jedem bereits auf dem "
                  "Display fixierten Direktgewinnsymbol.")


def _word(n: int) -> str:
    return {4: "vier", 5: "fünf", 6: "sechs"}.get(n, str(n))


def _jackpot(doc: Document, f: Facts) -> None:
    doc.heading("€€€-Jackpot")
    doc.paragraph("Bei 3 Jackpot Symbolen auf einer Gewinnlinie (ganz links beginnend, "
                  "nebeneinanderliegend) wird der €€€ Slot Jackpot gewonnen. Jackpot Symbole "
                  f"erscheinen nur auf den Walzen 1 bis {f.jackpot_reels}; das Wild Symbol "
                  "ersetzt sie nicht. Die Gewinnhöhe ist abhängig von jeweiligen Jackpot Stand "
                  "und dem geleisteten Einsatz. Die Gewinnverteilung des Jackpots ist folgende:")
    doc.table(["Einsatzhöhe", "Gewinn in % des jeweiligen Jackpot Standes"],
              share_rows(f, "pro Linie", LANG))
    if f.jackpot_rule == ONE_SHARE_PER_SPIN:
        rule = ("Ein Spin gewinnt den €€€-Jackpot höchstens einmal: zeigen mehrere "
                "Gewinnlinien 3 Jackpot Symbole, erhält der Spielteilnehmer einen einzigen Anteil "
                "laut Tabelle, berechnet vom Jackpot Stand vor dem Gewinn.")
    else:
        rule = ("Zeigen mehrere Gewinnlinien eines Spins 3 Jackpot Symbole, gewinnt jede "
                "Gewinnlinie einen Anteil laut Tabelle; jede weitere Linie von dem, was die "
                "vorherigen im Jackpot gelassen haben.")
    doc.paragraph(f"{rule} Der Gewinn wird auf ganze Cent abgerundet; der Rest bleibt im "
                  "Jackpot.")
    doc.paragraph("Der Jackpot ist allen Spielteilnehmern dieser Installation gemeinsam. "
                  f"{percent(f.contribution_rate, LANG)} jedes Gesamteinsatzes fließen in den "
                  f"Jackpot. Er beginnt mit einem Startwert von {euros(f.seed_cents, LANG)}; "
                  "fällt er durch einen Gewinn darunter, füllt ihn der Betreiber aus eigenen "
                  "Mitteln wieder auf den Startwert auf.")


def _no_progressive(doc: Document) -> None:
    doc.heading("Kein progressiver Gewinn")
    doc.paragraph("Dieses Spiel hat keinen progressiven Gewinn: kein Teil eines Einsatzes fließt "
                  "in einen Topf, und kein Gewinn wächst mit der Zeit oder hängt von anderen "
                  "Spielteilnehmern ab. Jeder Gewinn ist ein festes Vielfaches des Einsatzes laut "
                  "diesen Spielbedingungen.")


def _max_win(doc: Document, f: Facts) -> None:
    doc.heading("Höchstgewinn")
    largest = (f"Der höchste Gewinn eines Spins laut Gewinntabelle beträgt "
               f"{plain(f.max_base_x, LANG)} x Gesamteinsatz, der einer Star Wild Runde "
               f"(auslösender Spin und Bonus Spin) {plain(f.max_star_wild_x, LANG)} x "
               "Gesamteinsatz.")
    if f.cap_x is None:
        doc.paragraph("Der Gewinn einer Spielrunde ist nicht begrenzt: es gibt keinen "
                      f"Höchstgewinn. {largest} Der Gewinn des Hold & Cash Features hat keine "
                      "obere Grenze (der "
                      + ("Mega Jackpot" if f.prize_names != PRIZES_MULTIPLIER else FULL_SCREEN)
                      + f" allein zahlt {f.mega} x Gesamteinsatz).")
        return
    top = max(f.bet_classes) * f.line_count
    if not f.has_progressive:
        doc.paragraph(f"Der Gesamtgewinn einer Spielrunde ist auf das "
                      f"{number(f.cap_x, LANG)}-fache des Gesamteinsatzes begrenzt (bei "
                      f"{euros(top, LANG)} Gesamteinsatz: {euros(f.cap_x * top, LANG)}). "
                      "Erreicht der Gewinn diese Grenze, endet das Hold & Cash Feature sofort und "
                      f"es wird die Grenze ausbezahlt. {largest}")
        return
    doc.paragraph(f"Der Gesamtgewinn einer Spielrunde, ein Gewinn aus dem €€€-Jackpot "
                  f"eingeschlossen, ist auf das {number(f.cap_x, LANG)}-fache des "
                  f"Gesamteinsatzes begrenzt (bei {euros(top, LANG)} Gesamteinsatz: "
                  f"{euros(f.cap_x * top, LANG)}). Erreicht der Gewinn diese Grenze, endet das "
                  "Hold & Cash Feature sofort und es wird die Grenze ausbezahlt; der Teil eines "
                  "€€€-Jackpot Gewinns, für den die Grenze keinen Platz lässt, verbleibt im "
                  f"Jackpot. {largest}")


def _per_class(f: Facts) -> str:
    spread = return_range(f, LANG)
    if spread is None:
        return "Sie ist in jeder Einsatzklasse dieselbe."
    low, high = spread
    return (f"Je Einsatzklasse liegt sie zwischen {percent(low, LANG)} und "
            f"{percent(high, LANG)} (Tabelle).")


def _stake_and_return(doc: Document, f: Facts) -> None:
    doc.heading("Einsatz und Ausschüttung")
    doc.paragraph(f"Durchschnittliche Ausschüttung: ca. {number(f.total * 100, LANG, 1)} %")
    if f.has_progressive:
        doc.paragraph(f"Die theoretische Ausschüttung dieses Modells ist exakt berechnet "
                      f"{percent(f.total, LANG)} der Einsätze: {percent(f.game, LANG)} aus "
                      f"Linien, Star Wild und Hold & Cash und {percent(f.progressive, LANG)} aus "
                      "dem €€€-Jackpot (der Anteil jedes Gesamteinsatzes, der in den Jackpot "
                      f"fließt). {_per_class(f)} Was der Betreiber zum Auffüllen des Jackpots auf "
                      "den Startwert zuschießt, kommt hinzu.")
    else:
        doc.paragraph(f"Die theoretische Ausschüttung dieses Modells ist exakt berechnet "
                      f"{percent(f.total, LANG)} der Einsätze, zur Gänze aus Linien, Star Wild "
                      f"und Hold & Cash (kein progressiver Gewinn). {_per_class(f)}")
    doc.table(["Einsatzklasse pro Gewinnlinie", "Gesamteinsatz", "Theoretische Ausschüttung"],
              return_rows(f, LANG))
    doc.paragraph(f"Wahrscheinlichkeit, dass eine Spielrunde etwas gewinnt (Gesamtgewinn über "
                  f"null): {percent(f.hit, LANG)}. Star Wild wird durchschnittlich einmal in "
                  f"{one_in(f.star_wild, LANG)} Spins ausgelöst, Hold & Cash einmal in "
                  f"{one_in(f.hold_and_cash, LANG)} Spins.")
    doc.paragraph("Einsatzklassen pro Gewinnlinie: "
                  + "; ".join(euros(bet, LANG) for bet in reversed(f.bet_classes)) + ".")
    doc.paragraph(f"Anzahl fixe Gewinnlinien: {f.line_count}. Gesamteinsatz = Einsatzklasse x "
                  f"{f.line_count} ({euros(min(f.bet_classes) * f.line_count, LANG)} bis "
                  f"{euros(max(f.bet_classes) * f.line_count, LANG)}).")
    doc.paragraph("Die Teilnahme ist nur Personen ab 18 Jahren gestattet.")
