// Markup with per-element CSS variables, under the server's Content-Security-Policy: an
// inline style attribute in markup is refused (style-src 'self', no 'unsafe-inline'), while a
// script's writes to element.style are not. So templates carry data-vars="--x:1;--y:2" and
// setMarkup writes each variable through the CSSOM.

/** Set el's markup, then apply (and drop) the data-vars of every element in it. */
export function setMarkup(el, html) {
  el.innerHTML = html;
  for (const node of el.querySelectorAll("[data-vars]")) {
    for (const pair of node.dataset.vars.split(";")) {
      const at = pair.indexOf(":");
      if (at > 0) node.style.setProperty(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
    node.removeAttribute("data-vars");
  }
}
