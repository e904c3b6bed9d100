// Pure logic: turn a round's event log (starfever/engine/round.py, holdcash.py; docs/events.md)
// into the scenes the page plays. Nothing here decides an outcome: every symbol, value and amount
// comes from the server's events; the running totals only add up amounts the events carry.

export const cellKey = (reel, row) => `${reel},${row}`;

function cloneBoard(board) {
  const out = new Map();
  for (const [k, v] of board) out.set(k, { ...v });
  return out;
}

/**
 * Scenes, in order. Kinds: reveal, lines, feature, star_wild, hc_start, hc_respin, mega, hc_end,
 * max_win, jackpot, end. Each scene carries ``winSoFar``: the round's win once the scene has
 * played.
 *
 * A capped round (a ``max_win`` event, docs/events.md) pays its game win (lines, Star Wild
 * respin lines, Hold & Cash) up to the cap only, whatever the line and Hold & Cash events say
 * those parts were worth. A €€€ event's ``win`` is what it pays: where the cap holds the whole
 * round (RULES.md) the engine has already cut it to what the cap left (``withheld`` says what
 * stayed in the pool); in models made before, it comes on top. The engine logs ``max_win``
 * after the €€€, so the cap is read from the whole log first, and the ``max_win`` scene plays
 * right after the scene whose win reached the cap (before any €€€), or at the end where only
 * a €€€ share reached it.
 */
export function buildTimeline(events) {
  const scenes = [];
  const capEvent = events.find((ev) => ev.type === "max_win");
  const cap = capEvent ? capEvent.win : Infinity;
  // a €€€ share still paid after the game win reached the cap (only a model whose cap holds
  // the game win alone pays one)
  const jackpotFollows = events.some((ev) => ev.type === "jackpot" && ev.win > 0);
  let gameWin = 0;  // lines, Star Wild respin lines and Hold & Cash paid so far (<= cap)
  let jackpots = 0;  // €€€ shares, on top of the game win
  let capShown = false;
  let lines = null;
  let board = new Map();
  let held = [];
  const winSoFar = () => gameWin + jackpots;
  /** Add ``amount`` to the game win; returns what of it is paid (the cap cuts the rest). */
  const payGame = (amount) => {
    const paid = Math.max(0, Math.min(amount, cap - gameWin));
    gameWin += paid;
    return paid;
  };
  const showCap = () => {
    if (capEvent && !capShown && gameWin >= cap) {
      capShown = true;
      scenes.push({ kind: "max_win", win: cap, jackpotFollows, winSoFar: winSoFar() });
    }
  };
  const flushLines = () => {
    if (lines && lines.wins.length) {
      const worth = lines.wins.reduce((sum, w) => sum + w.win, 0);
      const paid = payGame(worth);
      scenes.push({ ...lines, paid, capped: paid < worth, winSoFar: winSoFar() });
      showCap();
    }
    lines = null;
  };
  for (const ev of events) {
    if (ev.type !== "line_win") flushLines();
    switch (ev.type) {
      case "reveal":
        scenes.push({ kind: "reveal", phase: ev.phase, grid: ev.grid, stops: ev.stops,
          held: ev.phase === "star_wild" ? held : [], winSoFar: winSoFar() });
        lines = { kind: "lines", phase: ev.phase, wins: [] };
        break;
      case "line_win":
        if (!lines) lines = { kind: "lines", phase: ev.phase, wins: [] };
        lines.wins.push({ line: ev.line, symbol: ev.symbol, count: ev.count,
          multiplier: ev.multiplier, win: ev.win });
        break;
      case "feature":
        scenes.push({ kind: "feature", feature: ev.feature, coins: ev.star_coins,
          winSoFar: winSoFar() });
        break;
      case "star_wild":
        held = ev.wilds.map((w) => ({ reel: w.reel, row: w.row, symbol: w.symbol }));
        scenes.push({ kind: "star_wild", wilds: held, winSoFar: winSoFar() });
        break;
      case "hold_and_cash_start":
        board = new Map();
        for (const c of ev.cells) board.set(cellKey(c.reel, c.row), { kind: c.kind, value: c.value });
        scenes.push({ kind: "hc_start", board: cloneBoard(board), respinsLeft: ev.respins_left,
          winSoFar: winSoFar() });
        break;
      case "respin": {
        const before = cloneBoard(board);
        const landed = ev.landed.map((c) => ({ reel: c.reel, row: c.row, kind: c.kind, value: c.value }));
        for (const c of landed) {
          if (c.kind === "CASH" || c.kind === "MINOR" || c.kind === "MAJOR") {
            board.set(cellKey(c.reel, c.row), { kind: c.kind, value: c.value });
          }
        }
        const afterLanding = cloneBoard(board);
        const boosters = ev.boosters.map((b) => {
          // what an UPGRADE added, read off the values it raised (1 x line bet or 1 x total
          // bet, as the round's model says): never assumed here
          let added = null;
          for (const v of b.values) {
            const was = board.get(cellKey(v.reel, v.row));
            if (added === null && was) added = v.value - was.value;
            board.set(cellKey(v.reel, v.row), { kind: "CASH", value: v.value });
          }
          return { reel: b.reel, row: b.row, kind: b.kind, board: cloneBoard(board),
            added: b.kind === "UPGRADE" ? added : null };
        });
        scenes.push({ kind: "hc_respin", index: ev.index, before, landed, afterLanding, boosters,
          board: cloneBoard(board), respinsLeft: ev.respins_left,
          reset: landed.length > 0 && ev.respins_left > 0, winSoFar: winSoFar() });
        break;
      }
      case "mega":
        scenes.push({ kind: "mega", win: ev.win, winSoFar: winSoFar() });
        break;
      case "hold_and_cash_end": {
        // ``win``: what the held values are worth; ``paid``: what of it the round pays
        const paid = payGame(ev.win);
        scenes.push({ kind: "hc_end", cash: ev.cash, minor: ev.minor, major: ev.major,
          mega: ev.mega, win: ev.win, paid, capped: paid < ev.win, board: cloneBoard(board),
          winSoFar: winSoFar() });
        showCap();
        break;
      }
      case "jackpot":
        jackpots += ev.win;
        scenes.push({ kind: "jackpot", line: ev.line, phase: ev.phase, percent: ev.percent,
          win: ev.win, withheld: ev.withheld || 0, poolLeft: ev.pool_left,
          winSoFar: winSoFar() });
        break;
      case "max_win":
        if (!capShown) {  // shown after the scene that reached the cap; here only if none did
          capShown = true;  // (a €€€ share reached it: nothing follows)
          scenes.push({ kind: "max_win", win: ev.win, jackpotFollows: false,
            winSoFar: winSoFar() });
        }
        break;
      case "round_end":
        scenes.push({ kind: "end", totalWin: ev.total_win, poolAfter: ev.pool_after,
          maxWin: capEvent ? cap : null, winSoFar: winSoFar() });
        break;
      default:
        break; // an event this client does not know: shown through the totals only
    }
  }
  flushLines();
  return scenes;
}

/** Cells of a line win: the first ``count`` cells of the payline. */
export function winCells(lines, win) {
  const rows = lines[win.line - 1];
  return rows.slice(0, win.count).map((row, reel) => ({ reel, row }));
}

/** SVG polyline points (cells 100 x 100 in a 500 x 300 view) across the whole payline. */
export function linePoints(lines, lineNo) {
  const rows = lines[lineNo - 1];
  const pts = rows.map((row, reel) => `${reel * 100 + 50},${row * 100 + 50}`);
  return `${-4},${rows[0] * 100 + 50} ${pts.join(" ")} ${504},${rows[4] * 100 + 50}`;
}

/** The final grid a round shows on its reels (the last reveal). */
export function finalGrid(scenes) {
  const reveals = scenes.filter((s) => s.kind === "reveal");
  return reveals.length ? reveals[reveals.length - 1].grid : null;
}
