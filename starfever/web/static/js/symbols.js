// Every symbol drawn in SVG (no images, nothing downloaded): one sprite, used by reference.
import { setMarkup } from "./markup.js";

const FONT = `font-family="'Arial Black','Helvetica Neue',Arial,sans-serif" font-weight="900"`;

const DEFS = `
<linearGradient id="g-gold" x1="0" y1="0" x2="0" y2="1">
  <stop offset="0" stop-color="#fff6c2"/><stop offset=".35" stop-color="#ffd34d"/>
  <stop offset=".7" stop-color="#d89412"/><stop offset="1" stop-color="#8a5a00"/></linearGradient>
<linearGradient id="g-goldside" x1="0" y1="0" x2="1" y2="0">
  <stop offset="0" stop-color="#b57a06"/><stop offset="1" stop-color="#6b4300"/></linearGradient>
<radialGradient id="g-lemon" cx=".38" cy=".32" r=".75">
  <stop offset="0" stop-color="#fffbd0"/><stop offset=".45" stop-color="#ffe23b"/><stop offset="1" stop-color="#d9a400"/></radialGradient>
<radialGradient id="g-cherry" cx=".35" cy=".3" r=".7">
  <stop offset="0" stop-color="#ff9a9a"/><stop offset=".4" stop-color="#e8102a"/><stop offset="1" stop-color="#7a0010"/></radialGradient>
<linearGradient id="g-leaf" x1="0" y1="0" x2="1" y2="1">
  <stop offset="0" stop-color="#8ee05a"/><stop offset="1" stop-color="#1f7a1a"/></linearGradient>
<linearGradient id="g-melon" x1="0" y1="0" x2="0" y2="1">
  <stop offset="0" stop-color="#ff6f7d"/><stop offset="1" stop-color="#d3183a"/></linearGradient>
<linearGradient id="g-bell" x1="0" y1="0" x2="1" y2="0">
  <stop offset="0" stop-color="#a76a00"/><stop offset=".3" stop-color="#ffe27a"/>
  <stop offset=".6" stop-color="#f2b01e"/><stop offset="1" stop-color="#8a5400"/></linearGradient>
<linearGradient id="g-seven" x1="0" y1="0" x2="0" y2="1">
  <stop offset="0" stop-color="#ff6b6b"/><stop offset=".5" stop-color="#e0001b"/><stop offset="1" stop-color="#7d0010"/></linearGradient>
<linearGradient id="g-diamond" x1="0" y1="0" x2="1" y2="1">
  <stop offset="0" stop-color="#e8fbff"/><stop offset=".4" stop-color="#5fd3ff"/><stop offset="1" stop-color="#1050c8"/></linearGradient>
<radialGradient id="g-wild" cx=".5" cy=".45" r=".6">
  <stop offset="0" stop-color="#d46bff"/><stop offset=".7" stop-color="#6a11b8"/><stop offset="1" stop-color="#32055e"/></radialGradient>
<radialGradient id="g-coin" cx=".4" cy=".35" r=".7">
  <stop offset="0" stop-color="#fff7c8"/><stop offset=".5" stop-color="#ffc928"/><stop offset="1" stop-color="#b97400"/></radialGradient>
<linearGradient id="g-jackpot" x1="0" y1="0" x2="0" y2="1">
  <stop offset="0" stop-color="#ff4d6a"/><stop offset="1" stop-color="#8f0020"/></linearGradient>
<linearGradient id="g-bar" x1="0" y1="0" x2="0" y2="1">
  <stop offset="0" stop-color="#3a3a48"/><stop offset="1" stop-color="#0c0c12"/></linearGradient>
<filter id="f-shadow" x="-20%" y="-20%" width="140%" height="140%">
  <feDropShadow dx="0" dy="2.5" stdDeviation="2" flood-color="#000" flood-opacity=".55"/></filter>
`;

const STAR = "M50 8l11.5 25.5 27.5 3-20.5 18.8 5.8 27.2L50 68.8 25.7 82.5l5.8-27.2L11 36.5l27.5-3z";

const SYMBOLS = {
  LEMON: `<g filter="url(#f-shadow)">
    <path d="M14 54c0-20 17-34 36-34 6-6 13-7 17-6-1 4-2 8-5 10 14 6 24 18 24 30 0 4-2 6-5 8 1 3 0 5-3 6-10 6-22 10-31 10C28 78 14 68 14 54z"
      fill="url(#g-lemon)" stroke="#a37500" stroke-width="2"/>
    <path d="M63 14c8-6 18-4 22 0-6 6-14 7-22 0z" fill="url(#g-leaf)" stroke="#1f5a12" stroke-width="1.5"/>
    <ellipse cx="36" cy="42" rx="10" ry="5" fill="#fff" opacity=".55" transform="rotate(-25 36 42)"/></g>`,
  CHERRY: `<g filter="url(#f-shadow)">
    <path d="M34 62C40 38 52 20 66 10M68 60C66 40 66 24 66 10" stroke="#3d6b12" stroke-width="4" fill="none" stroke-linecap="round"/>
    <path d="M66 10c10-4 22 0 26 8-10 4-20 2-26-8z" fill="url(#g-leaf)" stroke="#1f5a12" stroke-width="1.5"/>
    <circle cx="32" cy="68" r="19" fill="url(#g-cherry)" stroke="#5a0010" stroke-width="2"/>
    <circle cx="69" cy="66" r="19" fill="url(#g-cherry)" stroke="#5a0010" stroke-width="2"/>
    <ellipse cx="25" cy="61" rx="5" ry="3.5" fill="#fff" opacity=".7"/>
    <ellipse cx="62" cy="59" rx="5" ry="3.5" fill="#fff" opacity=".7"/></g>`,
  MELON: `<g filter="url(#f-shadow)">
    <path d="M8 40h84a42 42 0 0 1-84 0z" fill="#2f8f2a" stroke="#17501a" stroke-width="2"/>
    <path d="M14 40h72a36 36 0 0 1-72 0z" fill="#e8ffd0"/>
    <path d="M18 40h64a32 32 0 0 1-64 0z" fill="url(#g-melon)"/>
    <g fill="#2a1208"><ellipse cx="34" cy="52" rx="2.2" ry="3.6"/><ellipse cx="50" cy="58" rx="2.2" ry="3.6"/>
    <ellipse cx="66" cy="52" rx="2.2" ry="3.6"/><ellipse cx="42" cy="64" rx="2" ry="3.2"/><ellipse cx="58" cy="64" rx="2" ry="3.2"/></g>
    <path d="M20 44h60" stroke="#fff" stroke-opacity=".35" stroke-width="3"/></g>`,
  BAR: `<g filter="url(#f-shadow)">
    <rect x="8" y="30" width="84" height="40" rx="8" fill="url(#g-bar)" stroke="url(#g-gold)" stroke-width="4"/>
    <text x="50" y="62" text-anchor="middle" font-size="30" ${FONT} fill="url(#g-gold)" stroke="#5a3a00" stroke-width="1">BAR</text></g>`,
  GOLD: `<g filter="url(#f-shadow)">
    <path d="M20 66 32 40h48l10 26z" fill="url(#g-gold)" stroke="#6b4300" stroke-width="2"/>
    <path d="M10 80 20 66h70l-10 14z" fill="url(#g-goldside)" stroke="#6b4300" stroke-width="2"/>
    <path d="M10 80h70l10-14" fill="none" stroke="#6b4300" stroke-width="2"/>
    <path d="M36 46h38" stroke="#fff" stroke-opacity=".7" stroke-width="3" stroke-linecap="round"/>
    <text x="55" y="62" text-anchor="middle" font-size="11" ${FONT} fill="#7a4d00">999.9</text></g>`,
  BELL: `<g filter="url(#f-shadow)">
    <circle cx="50" cy="14" r="5" fill="url(#g-gold)" stroke="#6b4300" stroke-width="1.5"/>
    <path d="M50 18c-18 0-26 14-26 30 0 12-6 18-12 22h76c-6-4-12-10-12-22 0-16-8-30-26-30z"
      fill="url(#g-bell)" stroke="#6b4300" stroke-width="2"/>
    <rect x="10" y="70" width="80" height="8" rx="4" fill="url(#g-goldside)" stroke="#6b4300" stroke-width="1.5"/>
    <circle cx="50" cy="84" r="7" fill="url(#g-gold)" stroke="#6b4300" stroke-width="1.5"/>
    <path d="M36 30c-4 8-5 18-5 26" stroke="#fff" stroke-opacity=".6" stroke-width="4" fill="none" stroke-linecap="round"/></g>`,
  SEVEN: `<g filter="url(#f-shadow)">
    <path d="M18 16h66v14L52 88H32l30-56H34v8H18z" fill="url(#g-seven)" stroke="url(#g-gold)" stroke-width="5" stroke-linejoin="round"/>
    <path d="M24 22h54" stroke="#fff" stroke-opacity=".5" stroke-width="3"/></g>`,
  DIAMOND: `<g filter="url(#f-shadow)">
    <path d="M28 16h44l20 24-42 48L8 40z" fill="url(#g-diamond)" stroke="#0a3a8f" stroke-width="2" stroke-linejoin="round"/>
    <path d="M8 40h84M28 16l10 24 12-24 12 24 10-24M38 40l12 48 12-48" fill="none" stroke="#e8fbff" stroke-opacity=".8" stroke-width="1.6"/>
    <path d="M30 20l6 14" stroke="#fff" stroke-width="3" stroke-linecap="round"/></g>`,
  WILD: `<g filter="url(#f-shadow)">
    <path d="${STAR}" fill="url(#g-wild)" stroke="url(#g-gold)" stroke-width="4" stroke-linejoin="round" transform="translate(-6 -4) scale(1.12)"/>
    <text x="50" y="60" text-anchor="middle" font-size="24" ${FONT} fill="url(#g-gold)" stroke="#3a0a00" stroke-width="1.2" letter-spacing="1">WILD</text></g>`,
  MWILD: `<g filter="url(#f-shadow)">
    <path d="${STAR}" fill="url(#g-wild)" stroke="url(#g-gold)" stroke-width="4" stroke-linejoin="round" transform="translate(-6 -8) scale(1.12)"/>
    <text x="50" y="54" text-anchor="middle" font-size="24" ${FONT} fill="url(#g-gold)" stroke="#3a0a00" stroke-width="1.2">WILD</text>
    <rect x="30" y="68" width="40" height="24" rx="12" fill="url(#g-seven)" stroke="url(#g-gold)" stroke-width="3"/>
    <text x="50" y="87" text-anchor="middle" font-size="18" ${FONT} fill="#fff">×3</text></g>`,
  COIN: `<g filter="url(#f-shadow)">
    <circle cx="50" cy="50" r="40" fill="url(#g-coin)" stroke="#8a5600" stroke-width="3"/>
    <circle cx="50" cy="50" r="32" fill="none" stroke="#a86d00" stroke-width="2" stroke-dasharray="3 3"/>
    <path d="${STAR}" fill="#fff3a8" stroke="#b07000" stroke-width="2.5" transform="translate(21.5 22) scale(.57)"/>
    <ellipse cx="36" cy="30" rx="10" ry="5" fill="#fff" opacity=".55" transform="rotate(-30 36 30)"/></g>`,
  JACKPOT: `<g filter="url(#f-shadow)">
    <rect x="6" y="22" width="88" height="56" rx="14" fill="url(#g-jackpot)" stroke="url(#g-gold)" stroke-width="5"/>
    <text x="50" y="63" text-anchor="middle" font-size="32" ${FONT} fill="url(#g-gold)" stroke="#4a0010" stroke-width="1.2">€€€</text></g>`,
  CASH: `<g filter="url(#f-shadow)">
    <circle cx="50" cy="50" r="44" fill="url(#g-coin)" stroke="#8a5600" stroke-width="3"/>
    <circle cx="50" cy="50" r="36" fill="none" stroke="#fff2b0" stroke-opacity=".7" stroke-width="2"/></g>`,
  MINOR: `<g filter="url(#f-shadow)">
    <circle cx="50" cy="50" r="44" fill="url(#g-wild)" stroke="url(#g-gold)" stroke-width="5"/></g>`,
  MAJOR: `<g filter="url(#f-shadow)">
    <circle cx="50" cy="50" r="44" fill="url(#g-jackpot)" stroke="url(#g-gold)" stroke-width="5"/></g>`,
  UPGRADE: `<g filter="url(#f-shadow)">
    <circle cx="50" cy="50" r="44" fill="#0f7a3a" stroke="#7dffb0" stroke-width="4"/>
    <path d="M50 20 74 48H60v26H40V48H26z" fill="#b8ffd4" stroke="#064d22" stroke-width="2"/></g>`,
  MULTIPLIER: `<g filter="url(#f-shadow)">
    <circle cx="50" cy="50" r="44" fill="#c4500a" stroke="#ffd08a" stroke-width="4"/>
    <text x="50" y="64" text-anchor="middle" font-size="40" ${FONT} fill="#fff3d6" stroke="#5a2000" stroke-width="1.2">×2</text></g>`,
};

/** Put the sprite into the page once. */
export function installSprite(host) {
  const body = Object.entries(SYMBOLS)
    .map(([code, art]) => `<symbol id="s-${code}" viewBox="0 0 100 100">${art}</symbol>`).join("");
  setMarkup(host, `<svg width="0" height="0" data-vars="position:absolute"><defs>${DEFS}</defs>${body}</svg>`);
}

let nameOf = (code) => code;

/** How symbols are named to assistive technology: ``fn(code)`` in the page's language. */
export function setSymbolNames(fn) { nameOf = fn; }

/** Markup of one symbol (an SVG that references the sprite), named in the page's language. */
export function symbolSvg(code, extraClass = "") {
  const name = String(nameOf(code)).replace(/[&<>"]/g, "");
  return `<svg class="sym ${extraClass}" viewBox="0 0 100 100" role="img" aria-label="${name}"><use href="#s-${code}"/></svg>`;
}

export const REEL_SYMBOLS = ["LEMON", "CHERRY", "MELON", "BAR", "GOLD", "BELL", "SEVEN", "DIAMOND",
  "WILD", "COIN", "JACKPOT"];
