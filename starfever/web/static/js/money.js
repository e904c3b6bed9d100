// Money is integer euro cents everywhere; it becomes text only here, at display.

const SEP = {
  de: { group: ".", decimal: ",", before: "", after: "\u00a0€" },
  en: { group: ",", decimal: ".", before: "€", after: "" },
};

function group(digits, sep) {
  let out = "";
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % 3 === 0) out += sep;
    out += digits[i];
  }
  return out;
}

/** "1.234,56 €" (de) or "€1,234.56" (en) from an integer number of cents. */
export function formatCents(cents, lang = "en") {
  if (!Number.isInteger(cents)) throw new TypeError(`cents must be an integer, got ${cents}`);
  const s = SEP[lang] || SEP.en;
  const sign = cents < 0 ? "−" : "";
  const abs = Math.abs(cents);
  const euros = String(Math.trunc(abs / 100));
  const rest = String(abs % 100).padStart(2, "0");
  return `${sign}${s.before}${group(euros, s.group)}${s.decimal}${rest}${s.after}`;
}

/** Cents from what a person typed ("100", "100,5", "1.000,00", "99.99"); null if unreadable. */
export function parseEuros(text) {
  // Whole euros ("12"), with one or two decimals after "." or "," ("12.5", "12,50"), and
  // groups of three with the other separator ("1.234,56", "1,234.56", "1.234.567"). Anything
  // ambiguous or finer than a cent is refused (null), never guessed: "0.001" and "12.505" are
  // not amounts, and "1.234" could be 1234 or 1.234.
  const t = String(text).trim().replace(/\s|€/g, "");
  const m = /^(\d+|\d{1,3}(?:([.,])\d{3})+)(?:([.,])(\d{1,2}))?$/.exec(t);
  if (!m) return null;
  const [, whole, group, decimal, frac = ""] = m;
  if (group && decimal && group === decimal) return null;
  if (group && !decimal && whole.split(group).length === 2) return null;
  const cents = Number(group ? whole.split(group).join("") : whole) * 100
    + Number(frac.padEnd(2, "0"));
  return Number.isSafeInteger(cents) ? cents : null;
}

/** "1:05:09" or "5:09" from seconds. */
export function formatDuration(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}
