// Every text the page shows, in German (the binding language of the game conditions) and English.

const STRINGS = {
  de: {
    login: "Anmelden", signup: "Registrieren", username: "Benutzername", password: "Passwort",
    birthDate: "Geburtsdatum (ab 18 Jahren)",
    usernameHint: "3–32 Zeichen: a–z, 0–9, _ . -; Passwort mindestens 8 Zeichen.",
    responsible: "18+ · Spielen Sie verantwortungsvoll.",
    paytable: "Gewinnplan", rules: "Spielregeln", paytableRules: "Gewinnplan & Spielregeln",
    conditionsLink: "Vollständige Spielbedingungen (verbindlich)",
    history: "Verlauf", protection: "Spielerschutz", logout: "Abmelden",
    balance: "Guthaben", bet: "Einsatz", win: "Gewinn", spin: "Drehen", skip: "Überspringen",
    turbo: "Turbo", respins: "Respins", more: "Mehr laden",
    historyHint: "Wählen Sie eine Runde, um sie erneut abzuspielen.",
    historyEmpty: "Noch keine Runden gespielt.",
    winUnpaid: "Gewinn wartet auf Auszahlung durch den Betreiber",
    depositLimit: "Wöchentliches Einzahlungslimit", newLimit: "Neues Limit", save: "Speichern",
    limitHint: "Eine Senkung gilt sofort, eine Erhöhung nach 72 Stunden.",
    limitNow: "Limit", limitUsed: "Eingezahlt (7 Tage)", limitLeft: "Verfügbar",
    limitPending: "Ab {when}", limitSaved: "Gespeichert.", limitInvalid: "Bitte einen Betrag in Euro eingeben, z. B. 100,00.",
    realityCheck: "Realitätscheck", selfExclusion: "Selbstsperre", exclusionPeriod: "Dauer (Tage)",
    exclusionConfirm: "Ich verstehe, dass die Sperre nicht vorzeitig aufgehoben werden kann.",
    exclude: "Mich sperren", excludedUntil: "Gesperrt bis {when}. Einsätze und Einzahlungen sind nicht möglich.",
    notExcluded: "Keine Selbstsperre aktiv.", exclusionConfirmNeeded: "Bitte bestätigen Sie die Sperre.",
    realityText: "Sie spielen schon eine Weile. Ihre bisherige Sitzung:",
    elapsed: "Spielzeit", netResult: "Ergebnis (Gewinne − Einsätze)", nextCheck: "Nächster Check",
    continue: "Weiterspielen", stop: "Spiel beenden", collect: "Einsammeln",
    lineBetOf: "{n} Linien × {bet}", lineWin: "Linie {line}: {count} × {symbol} = {win}",
    lineWinMult: "Linie {line}: {count} × {symbol} ×{mult} = {win}",
    winTotal: "Gewinn {win}", noWin: "Kein Gewinn – viel Glück beim nächsten Dreh!",
    goodLuck: "Viel Glück!", starWild: "STAR WILD", starWildText: "Die Star Coins werden WILD – ein Respin!",
    holdAndCash: "HOLD & CASH", holdAndCashText: "{n} Star Coins – Hold & Cash!",
    upgrade: "UPGRADE", multiplier: "MULTIPLIKATOR", upgradeText: "UPGRADE: +{amount} auf jeden Geldwert",
    multiplierText: "MULTIPLIKATOR: jeder Geldwert ×2", respinReset: "Neue Symbole – Respins wieder auf 3!",
    mega: "MEGA JACKPOT", megaText: "Alle 15 Felder gefüllt!", hcEnd: "Hold & Cash: {win}",
    hcEndCapped: "Hold & Cash: {win} ausgezahlt – die gehaltenen Werte ({held}) sind auf den Höchstgewinn begrenzt",
    maxWinTitle: "HÖCHSTGEWINN",
    maxWinReached: "Höchstgewinn erreicht: {win} ({x} × Gesamteinsatz). Hier endet der Spielgewinn der Runde.",
    maxWinPlusJackpot: "Ein €€€-Anteil kommt hinzu.",
    jackpot: "€€€ JACKPOT", jackpotText: "Linie {line} · {percent} % des Pools",
    recall: "Rückschau #{id} · {when}", roundDetails: "Details", recallFacts: "Einsatz {bet} · Kontostand {before} → {after}", interrupted: "Runde #{id} wurde unterbrochen – hier ist ihr Ergebnis.",
    featureStarWild: "Star Wild", featureHoldAndCash: "Hold & Cash", featureNone: "–",
    roundNo: "Runde", time: "Zeit", signupDone: "Konto angelegt – willkommen!",
    networkError: "Der Server ist nicht erreichbar. Bitte versuchen Sie es erneut.",
    otherTab: "Das Spiel ist auch in einem anderen Tab geöffnet; der Kontostand ist in allen Tabs derselbe.",
    excludedNotice: "Sie haben sich bis {when} vom Spiel ausgeschlossen. Bis dahin sind keine Einsätze möglich.",
    spinInDoubt: "Der Server ist nicht erreichbar. Ihr Spin ist gespeichert und wird gezeigt, sobald die Verbindung wieder steht – ohne zweiten Einsatz.",
    resumed: "Ihr letzter Spin, Runde #{id}: er wurde gespielt, während die Verbindung unterbrochen war.",
    sessionEnded: "Ihre Sitzung ist abgelaufen. Bitte melden Sie sich erneut an.",
    betChanged: "Einsatz {total}",
    err_insufficient_funds: "Ihr Guthaben reicht für diesen Einsatz nicht aus. Bitte senken Sie den Einsatz.",
    err_self_excluded: "Sie sind selbst gesperrt – Einsätze sind bis zum Ende der Sperre nicht möglich.",
    err_reality_check_due: "Zeit für einen Realitätscheck: bitte bestätigen Sie ihn, um weiterzuspielen.",
    err_invalid_credentials: "Benutzername oder Passwort ist falsch.",
    err_username_taken: "Dieser Benutzername ist bereits vergeben.",
    err_under_age: "Spielen ist erst ab 18 Jahren erlaubt.",
    err_session_time_limit_reached: "Die Spielzeit dieser Sitzung ist abgelaufen: Starten Sie das Spiel beim Betreiber neu, um weiterzuspielen.",
    err_age_unknown: "Ihr Alter ist nicht bekannt: Einsätze und Einzahlungen sind erst mit Geburtsdatum möglich.",
    err_validation_error: "Bitte prüfen Sie Ihre Eingaben.",
    err_deposit_limit_exceeded: "Diese Einzahlung überschreitet Ihr Einzahlungslimit.",
    err_invalid_bet: "Dieser Einsatz ist nicht erlaubt.",
    err_round_not_found: "Diese Runde wurde nicht gefunden.",
    operatorRelaunch: "Bitte starten Sie das Spiel erneut beim Betreiber.",
    netPosition: "Ergebnis", soundOn: "Ton einschalten", soundOff: "Ton ausschalten",
    soundOnLabel: "Ton an", soundOffLabel: "Ton aus", volume: "Lautstärke",
    exit: "Zurück", exitTitle: "Zurück zum Casino",
    announceWin: "Gewinn {win}. Guthaben {balance}.", announceNoWin: "Kein Gewinn. Guthaben {balance}.",
    winBelowStake: "{win} zurück von {stake} Einsatz",
    jackpotWin: "€€€ JACKPOT: Linie {line} · {percent} % des Pools = {win}",
    jackpotWithheld: "{withheld} bleiben im Pool: die Runde hat den Höchstgewinn erreicht.",
    megaSub: "{x} × Gesamteinsatz ({bet})",
    bigWin1: "BIG WIN", bigWin2: "SUPER WIN", bigWin3: "EPIC WIN", bigWinKicker: "{x} × Gesamteinsatz",
    sym_CASH: "Geldsymbol", sym_MINOR: "MINOR", sym_MAJOR: "MAJOR", sym_UPGRADE: "Upgrade",
    sym_MULTIPLIER: "Multiplikator",
    err_round_too_soon: "Bitte einen Moment: in diesem Markt dauert jede Runde eine Mindestzeit.",
    err_stake_above_market_limit: "Dieser Einsatz liegt über dem Höchsteinsatz dieses Marktes.",
    err_player_blocked: "Der Betreiber nimmt derzeit keine Einsätze an (Sperre oder Limit).",
    err_invalid_launch_token: "Dieser Spielstart ist abgelaufen oder wurde schon benutzt.",
    hcPaysAt: "beim aktuellen Gesamteinsatz", totalBetWord: "Gesamteinsatz",
    err_operator_only: "Dafür ist ein Betreiberkonto nötig.",
    err_player_only: "Das Spiel ist nur mit einem Spielerkonto möglich.",
    err_internal_error: "Ein Serverfehler ist aufgetreten; es wurde nichts verändert.",
    err_database_unavailable: "Das Spiel ist gleich wieder da: Ihr Dreh wird in einem Moment noch einmal gesendet und nur einmal gewertet.",
    err_body_too_large: "Die Anfrage ist zu groß.",
    // Paytable & rules
    ptIntro: "Gewinne in Vielfachen des Linieneinsatzes. Beim aktuellen Einsatz ({bet} pro Linie):",
    ptSymbol: "Symbol", ptOf: "{n}×",
    wildRule: "WILD ersetzt alle Gewinnsymbole (nicht Star Coin und €€€). Multiplikator Wild wirkt als WILD und verdreifacht den Liniengewinn.",
    coinRule: "Star Coin ist ein Scatter: genau {sw} Coins lösen Star Wild aus, {hc} oder mehr Hold & Cash.",
    jackpotRule: "3 × €€€ auf den Walzen 1–3 einer Linie gewinnen einen Anteil am progressiven Jackpot.",
    rulesHtml: `
      <h3>Spielablauf</h3>
      <p>5 Walzen × 3 Reihen, {lines} feste Gewinnlinien. Gesamteinsatz = {lines} × Linieneinsatz (der „Einsatz“ der Spielbedingungen); Linieneinsätze: {classes}.</p>
      <p>Linien gewinnen mit 3, 4 oder 5 gleichen Symbolen nebeneinander ab der ersten Walze links, in Vielfachen des Linieneinsatzes. Pro Linie wird nur der höchste Gewinn bezahlt; Gewinne aller Linien werden addiert.</p>
      <h3>Wild</h3>
      <p>WILD und Multiplikator Wild ersetzen jedes Gewinnsymbol, nicht aber Star Coin und €€€. Enthält ein Liniengewinn ein Multiplikator Wild, wird er ×{mult} bezahlt.</p>
      <h3>Star Wild</h3>
      <p>Genau {sw} Star Coins: Nach den Liniengewinnen werden die Coins zu WILDs und bleiben stehen; alle anderen Felder drehen einmal neu. Liegen 3 der 4 Coins auf einer Walze, werden diese drei zu Multiplikator Wilds (×{mult}). Die Walzen des Respins tragen keine Star Coins: der Respin kann Hold &amp; Cash nicht auslösen. {respinRule}</p>
      <h3>Hold &amp; Cash</h3>
      <p>{hc} oder mehr Star Coins: Jeder Coin wird zu einem festgehaltenen Geldsymbol mit {cash} × Gesamteinsatz. Sie haben {respins} Respins; jedes neue Symbol setzt den Zähler auf {respins} zurück. Das Feature wird mit dem Einsatz des auslösenden Spins gespielt.</p>
      <p>Neu landen können Geldsymbole, MINOR ({minor} × Gesamteinsatz), MAJOR ({major} × Gesamteinsatz), UPGRADE und MULTIPLIKATOR (jeder Geldwert ×2). {upgradeRule} Booster wirken nach dem Festhalten der neuen Symbole, in Lesereihenfolge, und verschwinden danach; MINOR und MAJOR verändern sie nicht.</p>
      <p>Sind alle 15 Felder gefüllt, gewinnen Sie zusätzlich den MEGA Jackpot ({mega} × Gesamteinsatz). Am Ende werden alle Werte ausgezahlt.</p>
      <h3>€€€ Jackpot</h3>
      <p>3 × €€€ auf den Walzen 1–3 einer Linie (ohne Wild) gewinnen einen Anteil des Pools: Linieneinsatz / {shareBase} ({shareOne} → 1 %, {shareBase} → 100 %), abgerundet auf die kleinste Einheit der Währung; der Rest bleibt im Pool. Ein Spin gewinnt den €€€ höchstens einmal: zeigen mehrere Linien €€€, erhalten Sie einen Anteil des Pools, wie er vor dem Gewinn stand.</p>
      <p>Der Pool wird von allen Spielern gespeist: {contribution} % jedes Gesamteinsatzes fließen hinein. Er beginnt bei {seed} und wird nach einem Gewinn vom Betreiber wieder auf mindestens {seed} aufgefüllt.</p>
      <h3>Auszahlungsquote</h3>
      <p data-testid="rtp-statement">Die theoretische Auszahlungsquote dieses Spiels (Modell {model}) beträgt <b>{rtp} %</b>: <b>{rtpGame} %</b> aus dem Spiel (Linien, Star Wild, Hold &amp; Cash) und <b>{rtpJackpot} %</b> aus dem €€€-Beitrag. Sie ist exakt berechnet, gilt für jeden Einsatz und über sehr viele Spiele; einzelne Sitzungen weichen davon ab. Auffüllungen des Pools durch den Betreiber kommen hinzu.</p>
      <p data-testid="frequencies">Trefferhäufigkeit (der Gesamtgewinn einer Runde ist größer als null): <b>{hit} %</b>, im Mittel 1 von {hitOneIn} Runden; ein Star-Wild-Respin ohne Gewinn ist kein Treffer. Star Wild kommt im Mittel in 1 von {starWildOneIn} Runden, Hold &amp; Cash in 1 von {holdOneIn} Runden. Exakt berechnet für dieses Modell.</p>
      <h3>Höchstgewinn</h3>
      <p data-testid="max-win">{maxWin}</p>
      <h3>Verbindungsabbruch</h3>
      <p>Jede Runde wird vollständig auf dem Server entschieden und gebucht, sobald der Einsatz angenommen ist. Bricht die Verbindung während einer Runde ab, wird die Runde so zu Ende gespielt, wie sie gezogen wurde, und ihr Gewinn gutgeschrieben; das Spiel zeigt sie Ihnen, sobald die Verbindung wieder steht (ohne zweiten Einsatz), und im Verlauf finden Sie jede Runde.</p>
      {market}
      <p>Fehlfunktionen machen alle Gewinne und Auszahlungen ungültig.</p>`,
    respinJackpot: "Seine Liniengewinne und der €€€ gelten wie in jedem Spin.",
    respinNoJackpot: "Sie tragen auch keine €€€-Symbole: der Respin kann den €€€ nicht gewinnen. Seine Liniengewinne gelten wie in jedem Spin.",
    maxWinNone: "Die Spielbedingungen setzen keinen Höchstgewinn: der höchste Liniengewinn eines Spins beträgt {base} × Gesamteinsatz, Spin und Respin des Star Wild zusammen höchstens {star} × Gesamteinsatz; Hold &amp; Cash hat keine feste Obergrenze (alle 15 Felder mit hohen Werten, MEGA {mega} × Gesamteinsatz, dazu ein €€€-Anteil).",
    maxWinCap: "Der Gesamtgewinn einer Runde (Linien, Star Wild, Hold &amp; Cash und ein €€€-Anteil) ist auf {cap} × Gesamteinsatz begrenzt ({amount} beim aktuellen Einsatz): erreicht er diese Grenze, endet die Runde dort, auch ein laufendes Hold &amp; Cash; der Teil eines €€€-Anteils, für den die Grenze keinen Raum lässt, bleibt im Pool.",
    maxWinCapGame: "Der Gewinn einer Runde (Linien, Star Wild, Hold &amp; Cash) ist auf {cap} × Gesamteinsatz begrenzt ({amount} beim aktuellen Einsatz): erreicht er diese Grenze, endet die Runde dort, auch ein laufendes Hold &amp; Cash. Ein €€€-Anteil kommt hinzu.",
    upgradeLineBet: "UPGRADE erhöht jeden Geldwert um 1 × Linieneinsatz (die „Einsatzhöhe“ der Spielbedingungen).",
    upgradeTotalBet: "UPGRADE erhöht jeden Geldwert um 1 × Gesamteinsatz.",
    upgradeUnknown: "UPGRADE erhöht jeden Geldwert um einen festen Betrag, den das Mathematikmodell des Spiels festlegt.",
    marketHtml: `<h3>Spielregeln dieses Marktes ({name})</h3><p>{turbo} {skip} {minRound} Höchsteinsatz {maxStake} pro Runde. {young} Kein automatisches Spiel. {clock} {celebrate}</p>`,
    marketTurboYes: "Turbo beschleunigt die Darstellung.", marketTurboNo: "Kein Turbo.",
    marketSkipYes: "Überspringen zeigt sofort das Ergebnis.", marketSkipNo: "Runden können nicht übersprungen werden.",
    marketMinRound: "Jede Runde dauert mindestens {s} Sekunden.",
    marketClock: "Spielzeit und Ergebnis der Sitzung sind immer zu sehen.",
    linesTitle: "Gewinnlinien",
    protectionTitle: "Spielerschutz", session: "Sitzung", respinsLeftText: "Noch {n} Respins",
    marquee: "20 GEWINNLINIEN · STAR WILD · HOLD & CASH · €€€",
    // issue 38 (client): every refusal a plain sentence (errors.js), never the API's text
    err_fields: "Bitte prüfen Sie: {fields}.", fieldUsername: "Benutzername (3–32 Zeichen: a–z, 0–9, _ . -)",
    fieldPassword: "Passwort (mindestens 8 Zeichen)", fieldBirthDate: "Geburtsdatum",
    fieldBet: "Einsatz", fieldLimit: "Limit in Euro", fieldDays: "Dauer der Sperre",
    err_unexpected: "Etwas ist schiefgegangen. Bitte laden Sie die Seite neu.",
    err_server: "Der Server hat gerade ein Problem. Bitte versuchen Sie es gleich noch einmal.",
    err_refused: "Das war nicht möglich. Bitte versuchen Sie es noch einmal.",
    err_too_many_attempts: "Zu viele Versuche. Bitte warten Sie {seconds} Sekunden und versuchen Sie es dann erneut.",
    err_wallet_unavailable: "Nicht gespielt: Ihr Einsatz wurde nicht abgebucht. Das Konto beim Casino hat nicht geantwortet; drücken Sie Drehen, um es erneut zu versuchen.",
    err_debit_rolled_back: "Nicht gespielt: Ihr Einsatz wurde nicht abgebucht. Drücken Sie Drehen, um es erneut zu versuchen.",
    err_wallet_refused: "Nicht gespielt: Ihr Einsatz wurde nicht abgebucht. Das Casino nimmt gerade keine Einsätze an.",
    err_server_busy: "Der Server ist gerade ausgelastet. Bitte versuchen Sie es gleich noch einmal.",
    err_not_ready: "Das Spiel ist gerade nicht bereit. Bitte versuchen Sie es gleich noch einmal.",
    err_draining: "Das Spiel wird gerade neu gestartet. Bitte versuchen Sie es gleich noch einmal.",
    err_too_many_concurrent: "Zu viele Anmeldungen zugleich. Bitte versuchen Sie es gleich noch einmal.",
    err_too_many_registrations: "Von diesem Anschluss wurden zu viele Konten angelegt. Bitte später noch einmal.",
    err_birth_date_required: "Bitte geben Sie Ihr Geburtsdatum an.",
    err_invalid_token: "Ihre Sitzung ist abgelaufen. Bitte melden Sie sich erneut an.",
    err_token_expired: "Ihre Sitzung ist abgelaufen. Bitte melden Sie sich erneut an.",
    err_missing_token: "Bitte melden Sie sich an.",
    err_launch_replayed: "Dieser Spielstart wurde schon benutzt. Bitte starten Sie das Spiel erneut beim Casino.",
    err_stale_launch: "Dieser Spielstart ist abgelaufen. Bitte starten Sie das Spiel erneut beim Casino.",
    err_invalid_launch: "Dieser Spielstart ist ungültig. Bitte starten Sie das Spiel erneut beim Casino.",
    err_idempotency_key_reused: "Dieser Spin wurde schon gesendet. Bitte drücken Sie erneut Drehen.",
    // issue 38 (client): the balance
    creditPending: "Ihr Gewinn von {win} wird Ihrem Casino-Konto gutgeschrieben; das Guthaben zeigt ihn, sobald das Casino ihn bestätigt.",
    depositArrived: "Einzahlung angekommen: Guthaben {balance}.",
    // issue 38 (client): pace
    stopReels: "Stopp", linesSummary: "{n} Linien ({lines}): {win}",
    // issue 38 (client): layouts, the reality check's spans, the bet picker, the reels
    spanMinutes: "{m} Min. {s} Sek.", spanHours: "{h} Std. {m} Min.",
    nextCheckIn: "in {n} Min. (um {when})", nextCheckAfter: "{n} Min. nachdem Sie weiterspielen",
    betPick: "Einsatz wählen", betPickTitle: "Einsatz wählen (Gesamteinsatz)",
    interruptedResumed: "Runde #{id} wurde unterbrochen – sie geht hier weiter, wo Sie waren.",
    reelsLabel: "Walzen: 5 Walzen, 3 Reihen", reelN: "Walze {n}", rowN: "Reihe {n}: {name}",
    fundsEmpty: "Ihr Guthaben ({balance}) reicht für keinen Einsatz. Geld zahlen Sie über die Kasse Ihres Casinos ein; es erscheint hier wenige Sekunden danach.",
    fundsEmptyOperator: "Ihr Guthaben ({balance}) reicht für keinen Einsatz. Einzahlen können Sie im Casino (Zurück); das Guthaben erscheint hier wenige Sekunden danach.",
    // demo play and the operator's controls (ADR 0066, 0067)
    demoBadge: "DEMO", demoHint: "Spielgeld – keine echten Einsätze oder Gewinne",
    playForFun: "Zum Spaß spielen",
    err_maintenance: "Das Spiel wird gerade gewartet. Bitte versuchen Sie es in einigen Minuten erneut; es wurde nichts gesetzt.",
    err_session_terminated: "Der Betreiber hat diese Spielsitzung beendet. Starten Sie das Spiel beim Betreiber neu, um weiterzuspielen.",
    err_demo_not_allowed: "Demo-Spiel wird in diesem Markt nicht angeboten.",
    err_demo_requires_verified_player: "Demo-Spiel gibt es in diesem Markt nur für verifizierte Spieler: Starten Sie es beim Betreiber.",
    err_too_many_demo_sessions: "Zu viele Demo-Sitzungen von dieser Adresse. Bitte versuchen Sie es später erneut.",
    err_too_many_demo_spins: "Zu viele Demo-Drehungen in kurzer Zeit. Bitte einen Moment warten.",
    err_invalid_demo_token: "Diese Demo-Sitzung ist abgelaufen. Starten Sie das Demo-Spiel neu.",
  },
  en: {
    login: "Log in", signup: "Sign up", username: "Username", password: "Password",
    birthDate: "Date of birth (18 or older)",
    usernameHint: "3–32 characters: a–z, 0–9, _ . -; password at least 8 characters.",
    responsible: "18+ · Play responsibly.",
    paytable: "Paytable", rules: "Rules", paytableRules: "Paytable & rules",
    conditionsLink: "Full game conditions (the German text binds)",
    history: "History", protection: "Limits", logout: "Log out",
    balance: "Balance", bet: "Bet", win: "Win", spin: "Spin", skip: "Skip",
    turbo: "Turbo", respins: "Respins", more: "Load more",
    historyHint: "Select a round to replay it.", historyEmpty: "No rounds played yet.",
    winUnpaid: "Win pending payment by the operator",
    depositLimit: "Weekly deposit limit", newLimit: "New limit", save: "Save",
    limitHint: "A lower limit applies at once, a higher one after 72 hours.",
    limitNow: "Limit", limitUsed: "Deposited (7 days)", limitLeft: "Available",
    limitPending: "From {when}", limitSaved: "Saved.", limitInvalid: "Please enter an amount in euros, e.g. 100.00.",
    realityCheck: "Reality check", selfExclusion: "Self-exclusion", exclusionPeriod: "Period (days)",
    exclusionConfirm: "I understand that this cannot be lifted early.",
    exclude: "Exclude me", excludedUntil: "Excluded until {when}. Bets and deposits are not possible.",
    notExcluded: "No self-exclusion in force.", exclusionConfirmNeeded: "Please confirm the exclusion.",
    realityText: "You have been playing for a while. Your session so far:",
    elapsed: "Time played", netResult: "Net result (wins − bets)", nextCheck: "Next check",
    continue: "Continue playing", stop: "Stop playing", collect: "Collect",
    lineBetOf: "{n} lines × {bet}", lineWin: "Line {line}: {count} × {symbol} = {win}",
    lineWinMult: "Line {line}: {count} × {symbol} ×{mult} = {win}",
    winTotal: "Win {win}", noWin: "No win – good luck on the next spin!",
    goodLuck: "Good luck!", starWild: "STAR WILD", starWildText: "The Star Coins turn WILD – one respin!",
    holdAndCash: "HOLD & CASH", holdAndCashText: "{n} Star Coins – Hold & Cash!",
    upgrade: "UPGRADE", multiplier: "MULTIPLIER", upgradeText: "UPGRADE: +{amount} on every cash value",
    multiplierText: "MULTIPLIER: every cash value ×2", respinReset: "New symbols – respins reset to 3!",
    mega: "MEGA JACKPOT", megaText: "All 15 cells filled!", hcEnd: "Hold & Cash: {win}",
    hcEndCapped: "Hold & Cash: {win} paid – the held values ({held}) are capped at the maximum win",
    maxWinTitle: "MAXIMUM WIN",
    maxWinReached: "Maximum win reached: {win} ({x} × total bet). The round's game win stops here.",
    maxWinPlusJackpot: "A €€€ share comes on top.",
    jackpot: "€€€ JACKPOT", jackpotText: "Line {line} · {percent} % of the pool",
    recall: "Recall #{id} · {when}", roundDetails: "Details", recallFacts: "bet {bet} · balance {before} → {after}", interrupted: "Round #{id} was interrupted – here is its result.",
    featureStarWild: "Star Wild", featureHoldAndCash: "Hold & Cash", featureNone: "–",
    roundNo: "Round", time: "Time", signupDone: "Account created – welcome!",
    networkError: "The server cannot be reached. Please try again.",
    otherTab: "The game is open in another tab too; the balance shown is the same in every tab.",
    excludedNotice: "You have excluded yourself from play until {when}. No bets can be placed until then.",
    spinInDoubt: "The server cannot be reached. Your spin is kept and will be shown as soon as the connection is back – without a second bet.",
    resumed: "Your last spin, round #{id}: it was played while the connection was down.",
    sessionEnded: "Your session has ended. Please log in again.",
    betChanged: "Bet {total}",
    err_insufficient_funds: "Your balance does not cover this bet. Please lower the bet.",
    err_self_excluded: "You are self-excluded – bets are not possible until the exclusion ends.",
    err_reality_check_due: "Time for a reality check: please acknowledge it to play on.",
    err_invalid_credentials: "Wrong username or password.",
    err_username_taken: "This username is taken.",
    err_under_age: "Play is for adults: you must be 18 or older.",
    err_session_time_limit_reached: "This session's playing time is over: launch the game again from the operator to play on.",
    err_age_unknown: "Your age is not known: bets and deposits need a birth date on record.",
    err_validation_error: "Please check your input.",
    err_deposit_limit_exceeded: "This deposit exceeds your deposit limit.",
    err_invalid_bet: "This bet is not allowed.",
    err_round_not_found: "This round was not found.",
    operatorRelaunch: "Please start the game again from the casino.",
    netPosition: "Net", soundOn: "Turn sound on", soundOff: "Turn sound off",
    soundOnLabel: "Sound on", soundOffLabel: "Sound off", volume: "Volume",
    exit: "Exit", exitTitle: "Back to the casino",
    announceWin: "Win {win}. Balance {balance}.", announceNoWin: "No win. Balance {balance}.",
    winBelowStake: "{win} back of your {stake} stake",
    jackpotWin: "€€€ JACKPOT: line {line} · {percent} % of the pool = {win}",
    jackpotWithheld: "{withheld} stays in the pool: the round has reached the maximum win.",
    megaSub: "{x} × total bet ({bet})",
    bigWin1: "BIG WIN", bigWin2: "SUPER WIN", bigWin3: "EPIC WIN", bigWinKicker: "{x} × total bet",
    sym_CASH: "Cash", sym_MINOR: "MINOR", sym_MAJOR: "MAJOR", sym_UPGRADE: "Upgrade",
    sym_MULTIPLIER: "Multiplier",
    err_round_too_soon: "One moment: in this market every round lasts a minimum time.",
    err_stake_above_market_limit: "This stake is above this market's maximum.",
    err_player_blocked: "The operator takes no bets from you now (an exclusion or a limit).",
    err_invalid_launch_token: "This game start has expired or was used already.",
    hcPaysAt: "at the current total bet", totalBetWord: "total bet",
    err_operator_only: "This needs an operator account.",
    err_player_only: "The game needs a player account.",
    err_internal_error: "The server failed; nothing was changed.",
    err_database_unavailable: "The game will be back in a moment: your spin is sent again shortly and counts once.",
    err_body_too_large: "The request is too large.",
    ptIntro: "Wins in multiples of the line bet. At the current bet ({bet} per line):",
    ptSymbol: "Symbol", ptOf: "{n}×",
    wildRule: "WILD substitutes for every paying symbol (not Star Coin or €€€). The Multiplier Wild acts as WILD and triples the line win.",
    coinRule: "Star Coin is a scatter: exactly {sw} coins trigger Star Wild, {hc} or more Hold & Cash.",
    jackpotRule: "3 × €€€ on reels 1–3 of a line win a share of the progressive jackpot.",
    rulesHtml: `
      <h3>How to play</h3>
      <p>5 reels × 3 rows, {lines} fixed paylines. Total bet = {lines} × line bet (the conditions' "Einsatz" is the line bet); line bets: {classes}.</p>
      <p>Lines win with 3, 4 or 5 matching symbols side by side from the leftmost reel, in multiples of the line bet. Only the highest win per line is paid; wins on all lines add up.</p>
      <h3>Wild</h3>
      <p>WILD and Multiplier Wild substitute for every paying symbol, never for Star Coin or €€€. A line win that includes a Multiplier Wild pays ×{mult}.</p>
      <h3>Star Wild</h3>
      <p>Exactly {sw} Star Coins: after the line wins, the coins turn into WILDs that stay in place while every other cell respins once. If 3 of the 4 coins fill one reel, those three become Multiplier Wilds (×{mult}). The respin's reels hold no Star Coins, so the respin cannot trigger Hold &amp; Cash. {respinRule}</p>
      <h3>Hold &amp; Cash</h3>
      <p>{hc} or more Star Coins: every coin becomes a held cash symbol worth {cash} × total bet. You get {respins} respins; every new symbol resets the counter to {respins}. The feature is played at the bet of the spin that triggered it.</p>
      <p>New cells can land cash symbols, MINOR ({minor} × total bet), MAJOR ({major} × total bet), UPGRADE and MULTIPLIER (every cash value ×2). {upgradeRule} Boosters act after the new symbols are held, in reading order, then vanish; they never change MINOR or MAJOR.</p>
      <p>Fill all 15 cells to win the MEGA jackpot as well ({mega} × total bet). At the end every value is paid.</p>
      <h3>€€€ jackpot</h3>
      <p>3 × €€€ on reels 1–3 of a line (no wilds) win a share of the pool: line bet / {shareBase} ({shareOne} → 1 %, {shareBase} → 100 %), rounded down to the currency's smallest unit; the rest stays in the pool. A spin wins the €€€ at most once: when several lines show it, you win one share of the pool as it stood before the win.</p>
      <p>Every player's bets feed the pool: {contribution} % of every total bet. It starts at {seed}, and after a win the operator refills it to at least {seed}.</p>
      <h3>Return to player</h3>
      <p data-testid="rtp-statement">The theoretical return to player of this game (model {model}) is <b>{rtp} %</b>: <b>{rtpGame} %</b> from the game (lines, Star Wild, Hold &amp; Cash) and <b>{rtpJackpot} %</b> from the €€€ contribution. It is computed exactly, holds at every bet and over very many rounds; single sessions differ. The operator's refills of the pool come on top.</p>
      <p data-testid="frequencies">Hit frequency (a round's total win is above zero): <b>{hit} %</b>, on average 1 in {hitOneIn} rounds; a Star Wild respin that wins nothing is no hit. Star Wild comes on average 1 in {starWildOneIn} rounds, Hold &amp; Cash 1 in {holdOneIn} rounds. Computed exactly for this model.</p>
      <h3>Maximum win</h3>
      <p data-testid="max-win">{maxWin}</p>
      <h3>If the connection drops</h3>
      <p>Every round is decided and booked on the server in full once its bet is accepted. If the connection drops during a round, the round is played to its end as it was drawn and its win is credited; the game shows it to you as soon as the connection is back (without a second bet), and History lists every round.</p>
      {market}
      <p>Malfunction voids all pays and plays.</p>`,
    respinJackpot: "Its line wins and the €€€ count as in any spin.",
    respinNoJackpot: "They hold no €€€ either, so the respin cannot win the €€€; its line wins count as in any spin.",
    maxWinNone: "The conditions set no maximum win: the largest line win of a spin is {base} × total bet, a Star Wild spin and respin together at most {star} × total bet; Hold &amp; Cash has no fixed upper limit (all 15 cells with high values, MEGA {mega} × total bet, plus any €€€ share).",
    maxWinCap: "A round's total win (lines, Star Wild, Hold &amp; Cash and any €€€ share) is capped at {cap} × total bet ({amount} at the current bet): when it gets there the round ends, a running Hold &amp; Cash too; the part of a €€€ share the cap leaves no room for stays in the pool.",
    maxWinCapGame: "A round's win (lines, Star Wild, Hold &amp; Cash) is capped at {cap} × total bet ({amount} at the current bet): when it gets there the round ends, a running Hold &amp; Cash too. A €€€ share comes on top.",
    upgradeLineBet: "UPGRADE raises every cash value by 1 × line bet (the conditions' \"Einsatzhöhe\").",
    upgradeTotalBet: "UPGRADE raises every cash value by 1 × total bet.",
    upgradeUnknown: "UPGRADE raises every cash value by a fixed amount that the game's math model sets.",
    marketHtml: `<h3>Rules of this market ({name})</h3><p>{turbo} {skip} {minRound} Maximum stake {maxStake} a round. {young} No autoplay. {clock} {celebrate}</p>`,
    marketTurboYes: "Turbo speeds up the presentation.", marketTurboNo: "No Turbo.",
    marketSkipYes: "Skip shows the result at once.", marketSkipNo: "Rounds cannot be skipped.",
    marketMinRound: "Every round lasts at least {s} seconds.",
    marketClock: "The session's time and net position are always on screen.",
    linesTitle: "Paylines",
    protectionTitle: "Player protection", session: "Session", respinsLeftText: "{n} respins left",
    marquee: "20 LINES · STAR WILD · HOLD & CASH · €€€",
    // issue 38 (client): every refusal a plain sentence (errors.js), never the API's text
    err_fields: "Please check: {fields}.", fieldUsername: "username (3–32 characters: a–z, 0–9, _ . -)",
    fieldPassword: "password (at least 8 characters)", fieldBirthDate: "date of birth",
    fieldBet: "bet", fieldLimit: "limit in euros", fieldDays: "length of the exclusion",
    err_unexpected: "Something went wrong. Please reload the page.",
    err_server: "The server has a problem right now. Please try again in a moment.",
    err_refused: "That was not possible. Please try again.",
    err_too_many_attempts: "Too many tries. Please wait {seconds} seconds, then try again.",
    err_wallet_unavailable: "Not played: your stake was not taken. The casino's wallet did not answer; press Spin to try again.",
    err_debit_rolled_back: "Not played: your stake was not taken. Press Spin to try again.",
    err_wallet_refused: "Not played: your stake was not taken. The casino takes no bets right now.",
    err_server_busy: "The server is busy right now. Please try again in a moment.",
    err_not_ready: "The game is not ready right now. Please try again in a moment.",
    err_draining: "The game is restarting. Please try again in a moment.",
    err_too_many_concurrent: "Too many log-ins at once. Please try again in a moment.",
    err_too_many_registrations: "Too many accounts were made from this connection. Please try again later.",
    err_birth_date_required: "Please enter your date of birth.",
    err_invalid_token: "Your session has ended. Please log in again.",
    err_token_expired: "Your session has ended. Please log in again.",
    err_missing_token: "Please log in.",
    err_launch_replayed: "This game start was used already. Please start the game again from the casino.",
    err_stale_launch: "This game start has expired. Please start the game again from the casino.",
    err_invalid_launch: "This game start is not valid. Please start the game again from the casino.",
    err_idempotency_key_reused: "This spin was sent already. Please press Spin again.",
    // issue 38 (client): the balance
    creditPending: "Your win of {win} is being credited to your casino account; the balance shows it once the casino confirms it.",
    depositArrived: "Deposit arrived: balance {balance}.",
    // issue 38 (client): pace
    stopReels: "Stop", linesSummary: "{n} lines ({lines}): {win}",
    // issue 38 (client): layouts, the reality check's spans, the bet picker, the reels
    spanMinutes: "{m} min {s} s", spanHours: "{h} h {m} min",
    nextCheckIn: "in {n} min (at {when})", nextCheckAfter: "{n} min after you play on",
    betPick: "Choose bet", betPickTitle: "Choose your bet (total bet)",
    interruptedResumed: "Round #{id} was interrupted – it goes on here where you left it.",
    reelsLabel: "Reels: 5 reels, 3 rows", reelN: "Reel {n}", rowN: "Row {n}: {name}",
    fundsEmpty: "Your balance ({balance}) is below the smallest bet. Money comes in through your casino's cashier; it shows here a few seconds later.",
    fundsEmptyOperator: "Your balance ({balance}) is below the smallest bet. You can deposit at the casino (Exit); it shows here a few seconds later.",
    // demo play and the operator's controls (ADR 0066, 0067)
    demoBadge: "DEMO", demoHint: "Play money – no real bets or wins",
    playForFun: "Play for fun",
    err_maintenance: "The game is under maintenance. Please try again in a few minutes; nothing was bet.",
    err_session_terminated: "The operator ended this game session. Start the game again from the casino to play on.",
    err_demo_not_allowed: "Demo play is not offered in this market.",
    err_demo_requires_verified_player: "In this market demo play is for verified players only: start it from the casino.",
    err_too_many_demo_sessions: "Too many demo sessions from this address. Please try again later.",
    err_too_many_demo_spins: "Too many demo spins in a short time. Please wait a moment.",
    err_invalid_demo_token: "This demo session has ended. Start demo play again.",
  },
};

// The de market (market_de.js; ADR 0072: prizes named by what they pay; ADR 0075: the panic
// button, one session per player, the monthly deposit limit). One block, appended.
Object.assign(STRINGS.de, {
  marqueeNoPool: "20 GEWINNLINIEN · STAR WILD · HOLD & CASH",
  prizeFullScreen: "Vollbild", megaPrize: "VOLLBILDGEWINN",
  wildRuleNoPool: "WILD ersetzt alle Gewinnsymbole (nicht Star Coin). Multiplikator Wild wirkt als WILD und verdreifacht den Liniengewinn.",
  panicButton: "Panik-Taste", panicTitle: "Panik-Taste: 24 Stunden Pause",
  panicText: "Ein Druck auf „Jetzt sperren“ sperrt Sie sofort für 24 Stunden: keine Einsätze und keine Einzahlungen. Die Sperre kann nicht vorzeitig aufgehoben werden.",
  panicConfirm: "Jetzt 24 Stunden sperren", panicCancel: "Abbrechen",
  panicDone: "Gesperrt bis {when}.",
  err_session_replaced: "Diese Sitzung wurde beendet, weil Sie das Spiel an anderer Stelle geöffnet haben: Sie können nur in einer Sitzung zugleich spielen.",
  err_panic_button_pressed: "Sie haben die Panik-Taste gedrückt: Spielen ist 24 Stunden lang nicht möglich.",
  err_panic_not_confirmed: "Bitte bestätigen Sie die Panik-Taste.",
  err_panic_button_not_offered: "In diesem Markt gibt es keine Panik-Taste.",
  err_monthly_deposit_limit_exceeded: "Diese Einzahlung überschreitet das monatliche Einzahlungslimit.",
});
Object.assign(STRINGS.en, {
  marqueeNoPool: "20 LINES · STAR WILD · HOLD & CASH",
  prizeFullScreen: "Full screen", megaPrize: "FULL-SCREEN PRIZE",
  wildRuleNoPool: "WILD substitutes for every paying symbol (not Star Coin). The Multiplier Wild acts as WILD and triples the line win.",
  panicButton: "Panic button", panicTitle: "Panic button: a 24-hour break",
  panicText: "Pressing “Exclude me now” excludes you at once for 24 hours: no bets and no deposits. The exclusion cannot be lifted early.",
  panicConfirm: "Exclude me now for 24 hours", panicCancel: "Cancel",
  panicDone: "Excluded until {when}.",
  err_session_replaced: "This session has ended because you opened the game elsewhere: you can play in one session at a time.",
  err_panic_button_pressed: "You pressed the panic button: play is not possible for 24 hours.",
  err_panic_not_confirmed: "Please confirm the panic button.",
  err_panic_button_not_offered: "This market has no panic button.",
  err_monthly_deposit_limit_exceeded: "This deposit exceeds the monthly deposit limit.",
});
// Free rounds (issue 36; freerounds.js and the refusals of a free spin), in one block.
Object.assign(STRINGS.de, {
  freeRounds: "Freispiele",
  freeGrant: "Noch {left} Freispiele mit {bet} Einsatz, bisher gewonnen: {win} (gültig bis {until})",
  freePlay: "Freispiel spielen",
  freePlayed: "Freispiel gespielt: {paid} ausgezahlt, noch {left} übrig.",
  freeWithheld: "{withheld} lagen über der Gewinngrenze dieser Freispiele und werden nicht ausgezahlt.",
  freeFinished: "Alle Freispiele gespielt, gewonnen insgesamt: {total}.",
  freeGone: "Diese Freispiele können nicht mehr gespielt werden.",
  freeHistory: "Freispiel",
  err_grant_not_found: "Diese Freispiele gibt es nicht.",
  err_grant_of_another_player: "Diese Freispiele gehören einem anderen Spieler.",
  err_grant_cancelled: "Diese Freispiele wurden vom Betreiber zurückgezogen.",
  err_grant_expired: "Diese Freispiele sind abgelaufen.",
  err_grant_bet_mismatch: "Freispiele werden nur mit ihrem eigenen Einsatz gespielt.",
  err_grant_used_up: "Alle Freispiele dieser Gutschrift sind gespielt.",
});
Object.assign(STRINGS.en, {
  freeRounds: "Free rounds",
  freeGrant: "{left} free rounds left at a {bet} bet, won so far: {win} (valid until {until})",
  freePlay: "Play a free round",
  freePlayed: "Free round played: {paid} paid, {left} left.",
  freeWithheld: "{withheld} was above these free rounds' winnings cap and is not paid.",
  freeFinished: "All free rounds played, won in all: {total}.",
  freeGone: "These free rounds can no longer be played.",
  freeHistory: "Free round",
  err_grant_not_found: "These free rounds do not exist.",
  err_grant_of_another_player: "These free rounds belong to another player.",
  err_grant_cancelled: "The operator withdrew these free rounds.",
  err_grant_expired: "These free rounds have expired.",
  err_grant_bet_mismatch: "Free rounds are played at their own bet only.",
  err_grant_used_up: "Every free round of this grant has been played.",
});

// The uk market (ADR 0077): the young adults' stake cap, no celebration at or below the stake,
// British wording where the market's differs (``setMarketWording``), and the rules of a model
// without the €€€ pool, which name no pool and no jackpot (ADR 0072). One block a language.
Object.assign(STRINGS.de, {
  marketYoungCap: "Für Spieler unter {age} Jahren höchstens {stake} pro Runde.",
  marketNoCelebration: "Ein Gewinn bis zur Höhe des Einsatzes wird nicht gefeiert.",
  err_stake_above_age_limit: "Dieser Einsatz liegt über der Grenze für Ihr Alter: wählen Sie einen kleineren.",
  err_birth_date_required: "Dieses Spiel braucht Ihr Geburtsdatum vom Betreiber: starten Sie es erneut aus dem Casino.",
  maxWinNoneNoPool: "Die Spielbedingungen setzen keinen Höchstgewinn: der höchste Liniengewinn eines Spins beträgt {base} × Gesamteinsatz, Spin und Respin des Star Wild zusammen höchstens {star} × Gesamteinsatz; Hold &amp; Cash hat keine feste Obergrenze (alle 15 Felder mit hohen Werten, der Vollbildgewinn {mega} × Gesamteinsatz).",
  maxWinCapNoPool: "Der Gesamtgewinn einer Runde (Linien, Star Wild, Hold &amp; Cash) ist auf {cap} × Gesamteinsatz begrenzt ({amount} beim aktuellen Einsatz): erreicht er diese Grenze, endet die Runde dort, auch ein laufendes Hold &amp; Cash.",
  respinNoPool: "Seine Liniengewinne gelten wie in jedem Spin.",
  rulesHtmlNoPool: `
      <h3>Spielablauf</h3>
      <p>5 Walzen × 3 Reihen, {lines} feste Gewinnlinien. Gesamteinsatz = {lines} × Linieneinsatz (der „Einsatz“ der Spielbedingungen); Linieneinsätze: {classes}.</p>
      <p>Linien gewinnen mit 3, 4 oder 5 gleichen Symbolen nebeneinander ab der ersten Walze links, in Vielfachen des Linieneinsatzes. Pro Linie wird nur der höchste Gewinn bezahlt; Gewinne aller Linien werden addiert.</p>
      <h3>Wild</h3>
      <p>WILD und Multiplikator Wild ersetzen jedes Gewinnsymbol, nicht aber Star Coin. Enthält ein Liniengewinn ein Multiplikator Wild, wird er ×{mult} bezahlt.</p>
      <h3>Star Wild</h3>
      <p>Genau {sw} Star Coins: Nach den Liniengewinnen werden die Coins zu WILDs und bleiben stehen; alle anderen Felder drehen einmal neu. Liegen 3 der 4 Coins auf einer Walze, werden diese drei zu Multiplikator Wilds (×{mult}). Die Walzen des Respins tragen keine Star Coins: der Respin kann Hold &amp; Cash nicht auslösen. {respinRule}</p>
      <h3>Hold &amp; Cash</h3>
      <p>{hc} oder mehr Star Coins: Jeder Coin wird zu einem festgehaltenen Geldsymbol mit {cash} × Gesamteinsatz. Sie haben {respins} Respins; jedes neue Symbol setzt den Zähler auf {respins} zurück. Das Feature wird mit dem Einsatz des auslösenden Spins gespielt.</p>
      <p>Neu landen können Geldsymbole, feste Preise von {minor} × und {major} × Gesamteinsatz, UPGRADE und MULTIPLIKATOR (jeder Geldwert ×2). {upgradeRule} Booster wirken nach dem Festhalten der neuen Symbole, in Lesereihenfolge, und verschwinden danach; die festen Preise verändern sie nicht.</p>
      <p>Sind alle 15 Felder gefüllt, gewinnen Sie zusätzlich den Vollbildgewinn ({mega} × Gesamteinsatz). Am Ende werden alle Werte ausgezahlt.</p>
      <h3>Auszahlungsquote</h3>
      <p data-testid="rtp-statement">Die theoretische Auszahlungsquote dieses Spiels (Modell {model}) beträgt <b>{rtp} %</b> (Linien, Star Wild, Hold &amp; Cash). Sie ist exakt berechnet, gilt für jeden Einsatz und über sehr viele Spiele; einzelne Sitzungen weichen davon ab.</p>
      <p data-testid="frequencies">Trefferhäufigkeit (der Gesamtgewinn einer Runde ist größer als null): <b>{hit} %</b>, im Mittel 1 von {hitOneIn} Runden; ein Star-Wild-Respin ohne Gewinn ist kein Treffer. Star Wild kommt im Mittel in 1 von {starWildOneIn} Runden, Hold &amp; Cash in 1 von {holdOneIn} Runden. Exakt berechnet für dieses Modell.</p>
      <h3>Höchstgewinn</h3>
      <p data-testid="max-win">{maxWin}</p>
      <h3>Verbindungsabbruch</h3>
      <p>Jede Runde wird vollständig auf dem Server entschieden und gebucht, sobald der Einsatz angenommen ist. Bricht die Verbindung während einer Runde ab, wird die Runde so zu Ende gespielt, wie sie gezogen wurde, und ihr Gewinn gutgeschrieben; das Spiel zeigt sie Ihnen, sobald die Verbindung wieder steht (ohne zweiten Einsatz), und im Verlauf finden Sie jede Runde.</p>
      {market}
      <p>Fehlfunktionen machen alle Gewinne und Auszahlungen ungültig.</p>`,
});
Object.assign(STRINGS.en, {
  marketYoungCap: "Players under {age} may stake at most {stake} a round.",
  marketNoCelebration: "A win at or below the stake is not celebrated.",
  err_stake_above_age_limit: "This stake is above the limit for your age: please choose a smaller one.",
  err_birth_date_required: "This game needs your date of birth from the operator: start it again from the casino.",
  maxWinNoneNoPool: "The conditions set no maximum win: the largest line win of a spin is {base} × total bet, a Star Wild spin and respin together at most {star} × total bet; Hold &amp; Cash has no fixed upper limit (all 15 cells with high values, the full-screen prize {mega} × total bet).",
  maxWinCapNoPool: "A round's total win (lines, Star Wild, Hold &amp; Cash) is capped at {cap} × total bet ({amount} at the current bet): when it gets there the round ends, a running Hold &amp; Cash too.",
  respinNoPool: "Its line wins count as in any spin.",
  // the uk market's British English (``KEY__uk`` stands for ``KEY`` there: setMarketWording)
  bet__uk: "Stake", totalBetWord__uk: "stake", netPosition__uk: "Net position",
  netResult__uk: "Net position (winnings − stakes)",
  marketClock__uk: "The elapsed session time and your net position are always on screen.",
  marketMinRound__uk: "Every game cycle lasts at least {s} seconds.",
  marketSkipNo__uk: "A game cycle cannot be cut short (no slam stop).",
  marketYoungCap__uk: "Players under {age} may stake at most {stake} a spin.",
  marketHtml__uk: `<h3>Rules of this market ({name})</h3><p>{turbo} {skip} {minRound} Maximum stake {maxStake} a spin. {young} No autoplay. {clock} {celebrate}</p>`,
  rulesHtmlNoPool: `
      <h3>How to play</h3>
      <p>5 reels × 3 rows, {lines} fixed lines. Total bet = {lines} × line bet (the conditions' “Einsatz”); line bets: {classes}.</p>
      <p>Lines win with 3, 4 or 5 matching symbols side by side from the leftmost reel, in multiples of the line bet. Only the highest win per line is paid; the wins of all lines add up.</p>
      <h3>Wild</h3>
      <p>WILD and Multiplier Wild substitute for every paying symbol, never for Star Coin. A line win that includes a Multiplier Wild pays ×{mult}.</p>
      <h3>Star Wild</h3>
      <p>Exactly {sw} Star Coins: after the line wins the coins turn WILD and stay; every other cell spins once more. If 3 of the 4 coins are on one reel, those three become Multiplier Wilds (×{mult}). The respin's reels hold no Star Coins, so the respin cannot trigger Hold &amp; Cash. {respinRule}</p>
      <h3>Hold &amp; Cash</h3>
      <p>{hc} or more Star Coins: every coin becomes a held cash symbol worth {cash} × total bet. You get {respins} respins; every new symbol resets the counter to {respins}. The feature is played at the bet of the spin that triggered it.</p>
      <p>New symbols may be cash, fixed prizes of {minor} × and {major} × total bet, UPGRADE and MULTIPLIER (every cash value ×2). {upgradeRule} Boosters act after the new symbols are held, in reading order, and then vanish; they never change the fixed prizes.</p>
      <p>Fill all 15 cells to win the full-screen prize as well ({mega} × total bet). At the end every value is paid.</p>
      <h3>Return to player</h3>
      <p data-testid="rtp-statement">The theoretical return to player of this game (model {model}) is <b>{rtp} %</b> (lines, Star Wild, Hold &amp; Cash). It is computed exactly, holds at every bet and over very many rounds; single sessions differ.</p>
      <p data-testid="frequencies">Hit frequency (a round's total win is above zero): <b>{hit} %</b>, on average 1 in {hitOneIn} rounds; a Star Wild respin that wins nothing is no hit. Star Wild comes on average 1 in {starWildOneIn} rounds, Hold &amp; Cash 1 in {holdOneIn} rounds. Computed exactly for this model.</p>
      <h3>Maximum win</h3>
      <p data-testid="max-win">{maxWin}</p>
      <h3>If the connection drops</h3>
      <p>Every round is decided and booked on the server in full once its bet is accepted. If the connection drops during a round, the round is played to its end as it was drawn and its win is credited; the game shows it to you as soon as the connection is back (without a second bet), and History lists every round.</p>
      {market}
      <p>Malfunction voids all pays and plays.</p>`,
});
let current = "en";

let market = "";

/** Speak the market's own wording (``name``: the market profile's): a key ``KEY__name`` of the
 * language, where there is one, stands for ``KEY`` (the uk market's British English, ADR 0077). */
export function setMarketWording(name) { market = name || ""; }

export function initialLanguage() {
  const saved = localStorage.getItem("sf.lang");
  if (saved === "de" || saved === "en") return saved;
  return (navigator.language || "").toLowerCase().startsWith("de") ? "de" : "en";
}

export function setLanguage(lang) {
  current = STRINGS[lang] ? lang : "en";
  localStorage.setItem("sf.lang", current);
  document.documentElement.lang = current;
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of document.querySelectorAll("[data-i18n-title]")) el.title = t(el.dataset.i18nTitle);
  for (const el of document.querySelectorAll("[data-lang]")) {
    el.setAttribute("aria-pressed", String(el.dataset.lang === current));
  }
}

export function lang() { return current; }

/** Speak ``lang`` without saving it as the player's choice (the round details page). */
export function useLanguage(lang) { current = STRINGS[lang] ? lang : "en"; }

/** The text for ``key`` in the current language, with ``{name}`` replaced from ``vars``. */
export function t(key, vars = {}) {
  const own = market ? STRINGS[current][`${key}__${market}`] : undefined;
  const text = own ?? STRINGS[current][key] ?? STRINGS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (m, name) => (name in vars ? String(vars[name]) : m));
}

export function has(key) { return key in STRINGS[current]; }

/** A date-time for people, in the current language. */
export function formatWhen(iso) {
  const d = new Date(iso);
  return d.toLocaleString(current === "de" ? "de-AT" : "en-GB",
    { dateStyle: "medium", timeStyle: "short" });
}
