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
 * jackpot, end. Each scene carries ``winSoFar``: the round's win once the scene has played.
 */
export function buildTimeline(events) {
  const scenes = [];
  let win = 0;
  let lines = null;
  let board = new Map();
  let held = [];
  const flushLines = () => {
    if (lines && lines.wins.length) {
      win += lines.wins.reduce((sum, w) => sum + w.win, 0);
      scenes.push({ ...lines, winSoFar: win });
    }
    lines = null;
  };
  for (const ev of events) {
    if (ev.type !== "line_win") flushLines();
    switch (ev.type) {
      case "reveal":
        scenes.push({ kind: "reveal", phase: ev.phase, grid: ev.grid, stops: ev.stops,
          held: ev.phase === "star_wild" ? held : [], winSoFar: win });
        lines = { kind: "lines", phase: ev.phase, wins: [] };
        break;
      case "line_win":
        if (!lines) lines = { kind: "lines", phase: ev.phase, wins: [] };
        lines.wins.push({ line: ev.line, symbol: ev.symbol, count: ev.count,
          multiplier: ev.multiplier, win: ev.win });
        break;
      case "feature":
        scenes.push({ kind: "feature", feature: ev.feature, coins: ev.star_coins, winSoFar: win });
        break;
      case "star_wild":
        held = ev.wilds.map((w) => ({ reel: w.reel, row: w.row, symbol: w.symbol }));
        scenes.push({ kind: "star_wild", wilds: held, winSoFar: win });
        break;
      case "hold_and_cash_start":
        board = new Map();
        for (const c of ev.cells) board.set(cellKey(c.reel, c.row), { kind: c.kind, value: c.value });
        scenes.push({ kind: "hc_start", board: cloneBoard(board), respinsLeft: ev.respins_left,
          winSoFar: win });
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
          for (const v of b.values) {
            board.set(cellKey(v.reel, v.row), { kind: "CASH", value: v.value });
          }
          return { reel: b.reel, row: b.row, kind: b.kind, board: cloneBoard(board) };
        });
        scenes.push({ kind: "hc_respin", index: ev.index, before, landed, afterLanding, boosters,
          board: cloneBoard(board), respinsLeft: ev.respins_left,
          reset: landed.length > 0 && ev.respins_left > 0, winSoFar: win });
        break;
      }
      case "mega":
        scenes.push({ kind: "mega", win: ev.win, winSoFar: win });
        break;
      case "hold_and_cash_end":
        win += ev.win;
        scenes.push({ kind: "hc_end", cash: ev.cash, minor: ev.minor, major: ev.major,
          mega: ev.mega, win: ev.win, board: cloneBoard(board), winSoFar: win });
        break;
      case "jackpot":
        win += ev.win;
        scenes.push({ kind: "jackpot", line: ev.line, phase: ev.phase, percent: ev.percent,
          win: ev.win, poolLeft: ev.pool_left, winSoFar: win });
        break;
      case "round_end":
        scenes.push({ kind: "end", totalWin: ev.total_win, poolAfter: ev.pool_after, winSoFar: win });
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
