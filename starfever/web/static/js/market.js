// The market profile's presentation rules (GET /api/v1/game "market"), as pure functions.

/** Whether a round's win is celebrated: never below the stake; at the stake only where the
 * market allows it; above it always. */
export function celebrated(win, stake, market) {
  if (!(win > 0) || win < stake) return false;
  if (win === stake) return Boolean(market?.celebrate_win_equal_to_stake);
  return true;
}

/** The big-win tier of a win: 0 (none), 1, 2 or 3 by multiples of the total bet. */
export function bigWinTier(win, totalBet, market) {
  const tiers = market?.big_win_x || [10, 30, 100];
  let tier = 0;
  tiers.forEach((x, i) => { if (totalBet > 0 && win >= x * totalBet) tier = i + 1; });
  return tier;
}

/** The bet classes (indices) a market allows: total bet (line bet x lines) up to its maximum,
 * and up to ``playerCap`` (GET /wallet "max_stake_cents": a young adult's lower cap, ADR 0077). */
export function allowedBetCount(game, playerCap = null) {
  const max = Math.min(game.market?.max_stake_cents ?? Infinity, playerCap ?? Infinity);
  const n = game.bet_classes.filter((c) => c * game.line_count <= max).length;
  return Math.max(1, n);
}

/** Coins on the reels before ``reel`` in ``grid`` (grid[reel][row]). */
export function coinsBefore(grid, reel) {
  let n = 0;
  for (let r = 0; r < reel; r++) for (const s of grid[r]) if (s === "COIN") n++;
  return n;
}

/** Whether the reel ``reel`` lands with anticipation: the reels before it show a feature one
 * coin away (3 coins: one more is the Star Wild; 4: one more is Hold & Cash). */
export function anticipates(grid, reel, { starWild = 4, holdAndCash = 5 } = {}) {
  if (reel <= 0 || reel >= grid.length) return false;
  const n = coinsBefore(grid, reel);
  return n === starWild - 1 || n >= holdAndCash - 1;
}
