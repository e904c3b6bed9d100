// Operator mode (OPERATOR-WALLET.md, "Launching the game"): the operator opens the game at
// /?launch=TOKEN&lang=..&return_url=..&player=..; the page exchanges the single-use token for
// its session (POST /api/v1/sessions {"launch_token"}), shows no register or log-in screen,
// and offers the operator's return_url as the way out.

const KEY = "sf.operator";

/** The operator-mode facts of this page's session ({returnUrl, player}), or null. */
export function operatorMode() {
  try { return JSON.parse(localStorage.getItem(KEY) || "null"); } catch { return null; }
}

/** Where the exit leads: the launch's return_url (an http(s) address only). */
export function exitUrl() {
  const url = operatorMode()?.returnUrl || "";
  return /^https?:\/\//i.test(url) ? url : "/";
}

/** If the address carries a launch token: exchange it, remember the operator mode, take the
 * token out of the address (it is single-use: a reload must not send it again). True when a
 * launch happened; an ApiError when the token was refused. */
export async function launchFromUrl(api, { setLanguage }) {
  const params = new URLSearchParams(location.search);
  const token = params.get("launch");
  if (!token) return false;
  const launch = { returnUrl: params.get("return_url") || "", player: params.get("player") || "",
    language: params.get("lang") };
  for (const name of ["launch", "return_url", "player", "lang"]) params.delete(name);
  const rest = params.toString();
  history.replaceState(null, "", location.pathname + (rest ? `?${rest}` : "") + location.hash);
  // the page is the operator's from here, also when the token is refused: no log-in screen
  localStorage.setItem(KEY, JSON.stringify({ returnUrl: launch.returnUrl, player: launch.player }));
  api.setToken(null);
  if (launch.language === "de" || launch.language === "en") setLanguage(launch.language);
  const data = await api.request("POST", "/sessions", { body: { launch_token: token } });
  api.setToken(data.token);
  // the scope of this player's saved spin and of the tabs' balance: the operator's player id
  // (a spin saved under another player's launch is never sent with this session's token)
  localStorage.setItem("sf.user", `op:${launch.player || data.token.slice(0, 16)}`);
  return true;
}
