// A table wider than the screen scrolls in a box of its own, never the page (WCAG 1.4.10). The box
// takes the keyboard's focus, so that it scrolls without a mouse too (2.1.1), and is named by the
// table's caption for whoever lands on it.
import { h } from "../dom.js";

export function scrollBox(table) {
  const name = table.querySelector("caption")?.textContent ?? "";
  return h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": name }, table);
}
