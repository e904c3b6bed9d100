// The balance the page shows, and which of several answers is the newest. Answers arrive out
// of order: this tab's round ends after its animation, another tab's round ends in that tab,
// a wallet read answers whenever it answers. The rule:
// - between two rounds, the higher round id is newer (ids follow the order rounds settle in),
//   whichever animation ended last;
// - between a round and a wallet read, the time wins: a round's balance is as of when its
//   answer arrived, a wallet read's as of when it was sent (what settled before that, it has).
// Tabs of one player tell each other every balance they accept, with its id and time.

export class BalanceBook {
  constructor() {
    this.cents = null;
    this.roundId = 0;  // the newest round whose balance is known
    this.at = 0;  // as of when (ms since the epoch) the shown balance is known
    this.kind = null;  // "round" or "wallet": where it came from
  }

  /** Offer a round's balance (``roundId``, answered at ``at``); true if it is the newest. */
  offerRound(cents, roundId, at) {
    if (!Number.isInteger(cents) || !(roundId > this.roundId)) return false;
    const newer = this.kind !== "wallet" || at >= this.at;
    this.roundId = roundId;
    if (!newer) return false;  // a wallet read sent after its answer already counts it
    this.cents = cents;
    this.at = Math.max(this.at, at);
    this.kind = "round";
    return true;
  }

  /** Offer a wallet read sent at ``at``; true if it is the newest. */
  offerWallet(cents, at) {
    if (!Number.isInteger(cents) || at < this.at) return false;
    this.cents = cents;
    this.at = at;
    this.kind = "wallet";
    return true;
  }

  /** What a tab tells the others. */
  message() { return { cents: this.cents, roundId: this.roundId, at: this.at, kind: this.kind }; }

  /** Take another tab's accepted balance; true if it is newer than ours. */
  heard({ cents, roundId, at, kind }) {
    if (kind === "round") return this.offerRound(cents, roundId, at);
    if (kind === "wallet") {
      if (roundId > this.roundId) this.roundId = roundId;
      return this.offerWallet(cents, at);
    }
    return false;
  }

  forget() {
    this.cents = null;
    this.roundId = 0;
    this.at = 0;
    this.kind = null;
  }
}
