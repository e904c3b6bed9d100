// The win meter: set at once, or counted up (never a live region: the page announces the
// round's final values once, app.js).

let winAnim = 0;
let money = (cents) => String(cents);
const $ = (sel) => document.querySelector(sel);

/** Format amounts with ``format`` (the page's language). */
export function winFormat(format) { money = format; }

/** The win meter; ``glow`` only for a win worth celebrating (never one below the stake). */
export function setWin(cents, { glow = false } = {}) {
  cancelAnimationFrame(winAnim);
  const el = $("#win");
  el.textContent = cents ? money(cents) : money(0);
  el.dataset.cents = String(cents || 0);
  el.classList.toggle("big", Boolean(glow && cents > 0));
  el.classList.remove("counting");
}

export function countWin(from, to, ms, { glow = false } = {}) {
  cancelAnimationFrame(winAnim);
  if (ms <= 0 || to <= from) { setWin(to, { glow }); return; }
  const el = $("#win");
  el.classList.toggle("big", glow);
  el.classList.add("counting");
  const start = performance.now();
  const step = (now) => {
    const p = Math.min(1, (now - start) / ms);
    const value = from + Math.round((to - from) * (1 - (1 - p) ** 3));
    el.textContent = money(value);
    el.dataset.cents = String(value);
    if (p < 1) winAnim = requestAnimationFrame(step);
    else el.classList.remove("counting");
  };
  winAnim = requestAnimationFrame(step);
}
