// The spin request's life before its round: saved before it is sent, sent again with the same
// Idempotency-Key while its fate is in doubt, dropped once the server answered or refused it.
import { ApiError } from "./api.js";
import { NOT_PLAYED } from "./errors.js";

// A spin request saved before it is sent: {user, key, lineBet, draws, grantId?} (grantId: a
// free round). While it is here its fate is unknown to the page (no answer came), so the same
// request — same Idempotency-Key — is sent again until an answer comes; the server settles a
// key at most once and answers a retry with the round it already settled, so the player
// always sees every settled round.
export const SPIN_KEY = "sf.spinInFlight";

/** The spin request whose answer never arrived, if it is this player's. */
export function spinInDoubt() {
  try {
    const saved = JSON.parse(localStorage.getItem(SPIN_KEY) || "null");
    return saved && saved.user === localStorage.getItem("sf.user") ? saved : null;
  } catch { return null; }
}

/** Whether the spin may have been settled behind its answer (lost, or a 5xx of the server or
 * a proxy): kept, sent again with its key. A 4xx, 502 wallet_refused or 503
 * wallet_unavailable: nothing was played. */
export function spinInDoubtAfter(error) {
  if (!(error instanceof ApiError)) return false;
  if (NOT_PLAYED.has(error.code)) return false;  // rolled back: the server says a new key
  return error.code === "network" || (error.status >= 500 && error.code !== "wallet_refused"
    && error.code !== "maintenance");  // closed for maintenance: nothing was played
}

/** Send a spin request, retrying answers in doubt a few times with the same key. */
export async function sendSpin(api, request) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await api.spin(request.lineBet, request.key, request.draws, request.grantId);
    } catch (error) {
      // the market's least time per round, by the server's clock: nothing was debited, so
      // the same request goes again a moment later
      if (error instanceof ApiError && error.code === "round_too_soon" && attempt < 40) {
        await new Promise((r) => setTimeout(r, 150));
        continue;
      }
      if (!spinInDoubtAfter(error) || attempt >= 2) throw error;
      await new Promise((r) => setTimeout(r, 800));
    }
  }
}
