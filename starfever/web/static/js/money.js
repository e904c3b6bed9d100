// Money is an integer number of minor units (cents, pence) everywhere; it becomes text only
// here, at display, with the browser's Intl.NumberFormat in the page's language and the
// session's currency (GET /wallet names it: setCurrency). The one formatter of the client.

let current = "EUR";
const formatters = new Map();

/** The currency every amount is shown in from now on (ISO 4217, e.g. "GBP"). */
export function setCurrency(code) {
  if (typeof code === "string" && /^[A-Z]{3}$/.test(code)) current = code;
}

/** The currency amounts are shown in. */
export function currencyCode() { return current; }

function formatter(lang, code) {
  const key = `${lang}|${code}`;
  let found = formatters.get(key);
  if (!found) {
    found = new Intl.NumberFormat(lang, { style: "currency", currency: code });
    formatters.set(key, found);
  }
  return found;
}

/** "1.234,56 €" (de) or "£1,234.56" (en, GBP) from an integer number of minor units. */
export function formatCents(cents, lang = "en", code = current) {
  if (!Number.isInteger(cents)) throw new TypeError(`cents must be an integer, got ${cents}`);
  const fmt = formatter(lang, code);
  const exponent = fmt.resolvedOptions().maximumFractionDigits;
  // a typographic minus, as the page always showed it
  return fmt.formatToParts(cents / 10 ** exponent)
    .map((part) => (part.type === "minusSign" ? "−" : part.value)).join("");
}

/** Cents from what a person typed ("100", "100,5", "1.000,00", "99.99"); null if unreadable. */
export function parseEuros(text) {
  return parseAmount(text, 2);
}

/** Minor units of a currency of ``exponent`` decimals (2: cents, pence; 0: none) from what a
 * person typed; null if unreadable. */
export function parseAmount(text, exponent = 2) {
  // Whole units ("12"), with up to ``exponent`` decimals after "." or "," ("12.5", "12,50"),
  // and groups of three with the other separator ("1.234,56", "1,234.56", "1.234.567").
  // Anything ambiguous or finer than the minor unit is refused (null), never guessed: "0.001"
  // and "12.505" are not amounts in cents, and "1.234" could be 1234 or 1.234.
  if (!Number.isInteger(exponent) || exponent < 0 || exponent > 4) return null;
  const t = String(text).trim().replace(/\s|[€£$]/g, "");
  const fraction = exponent ? `(?:([.,])(\\d{1,${exponent}}))?` : "()()";
  // one grouping separator throughout ("1,234.567" at 3 decimals is 1234.567, not a group)
  const m = new RegExp(`^(\\d+|\\d{1,3}([.,])\\d{3}(?:\\2\\d{3})*)${fraction}$`).exec(t);
  if (!m) return null;
  const [, whole, group, decimal, frac = ""] = m;
  if (group && decimal && group === decimal) return null;
  if (group && !decimal && whole.split(group).length === 2) return null;
  const minor = Number(group ? whole.split(group).join("") : whole) * 10 ** exponent
    + Number(frac.padEnd(exponent, "0") || "0");
  return Number.isSafeInteger(minor) ? minor : null;
}

/** "1:05:09" or "5:09" from seconds. */
export function formatDuration(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}
