// A server refusal as a plain sentence in the page's language. The page never shows the API's
// own message (written for developers, in English): each code has its sentence in i18n.js
// (``err_<code>``), a validation error names the field in words, and a code the page does not
// know gets the sentence of its status class.
import { ApiError } from "./api.js";
import { has, t } from "./i18n.js";

// the request fields a player fills in, by the name the server gives them
const FIELDS = { username: "fieldUsername", password: "fieldPassword", birth_date: "fieldBirthDate",
  line_bet: "fieldBet", weekly_deposit_limit: "fieldLimit", days: "fieldDays" };

/** The 5xx and 409 codes of a spin that was not played, its stake not taken (the operator's
 * wallet did not answer the debit, and the server rolled it back): the server says to send a
 * new Idempotency-Key, so the request is dropped, never resent with its key (that would only
 * get ``409 debit_rolled_back``); the player's next Spin is a new bet with a new key. Every
 * other 5xx (``commit_unknown``, ``draining``, a proxy's) may hide a settled round: resent with
 * the same key. */
export const NOT_PLAYED = new Set(["wallet_unavailable", "debit_rolled_back"]);

/** A readable sentence for ``error`` (an ApiError, or anything thrown). */
export function errorText(error) {
  if (!(error instanceof ApiError)) return t("err_unexpected");
  if (error.code === "network") return t("networkError");
  if (error.code === "validation_error") return validationText(error);
  const key = `err_${error.code}`;
  if (has(key)) return t(key, { seconds: error.retryAfter ?? "" });
  if (error.status === 429) return t("err_too_many_attempts", { seconds: error.retryAfter ?? "" });
  if (error.status >= 500) return t("err_server");
  return t("err_refused");
}

function validationText(error) {
  const named = [...new Set((error.fields || []).map((f) => FIELDS[String(f.field).split(".").pop()])
    .filter(Boolean))];
  if (!named.length) return t("err_validation_error");
  return t("err_fields", { fields: named.map((k) => t(k)).join(", ") });
}
