// The bet picker: every bet the market allows as a grid of total bets, opened by the bet meter
// (besides − and +). Choosing one sets the bet and closes it; Escape closes it unchanged.
const $ = (sel) => document.querySelector(sel);

/** ``bets()``: the allowed total bets in cents, ascending; ``current()``: the index chosen;
 * ``pick(index)``: set it; ``money``: the format. */
export function betPicker({ bets, current, pick, money }) {
  const dlg = $("#dlg-bet");
  const grid = $("#bet-grid");

  function open() {
    const now = current();
    grid.innerHTML = bets().map((cents, i) => `<button type="button" class="bet-choice"
      data-bet-index="${i}" aria-pressed="${i === now}">${money(cents)}</button>`).join("");
    if (!dlg.open) dlg.showModal();
    grid.querySelector('[aria-pressed="true"]')?.focus();
  }

  grid.addEventListener("click", (event) => {
    const choice = event.target.closest("[data-bet-index]");
    if (!choice) return;
    pick(Number(choice.dataset.betIndex));
    dlg.close();
  });
  return { open };
}
