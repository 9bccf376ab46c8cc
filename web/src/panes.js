// On a narrow screen the page shows one pane at a time, Statement, Code or Report, chosen in a
// tab bar that stays at the top; a wide screen shows them all, in two columns, without the bar.
// The tabs follow the ARIA tabs pattern: arrow keys, Home and End move between them.
const NARROW = window.matchMedia("(max-width: 900px)");
const layout = document.querySelector(".layout");
const bar = document.getElementById("pane-tabs");
const tabs = [...bar.querySelectorAll('[role="tab"]')];

// True where it is the only pane shown (a narrow screen).
export function showPane(name, { focus = false } = {}) {
  layout.dataset.pane = name;
  for (const tab of tabs) {
    const selected = tab.dataset.pane === name;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    if (selected && focus) tab.focus();
  }
  if (NARROW.matches) window.scrollTo({ top: 0 });
  return NARROW.matches;
}

const KEYS = { ArrowLeft: -1, ArrowRight: 1 };

bar.addEventListener("keydown", (event) => {
  const at = tabs.indexOf(document.activeElement);
  let next = null;
  if (event.key in KEYS) next = (at + KEYS[event.key] + tabs.length) % tabs.length;
  if (event.key === "Home") next = 0;
  if (event.key === "End") next = tabs.length - 1;
  if (next === null || at < 0) return;
  event.preventDefault();
  showPane(tabs[next].dataset.pane, { focus: true });
});
for (const tab of tabs) tab.addEventListener("click", () => showPane(tab.dataset.pane));
// The skip link leads to the editor, in its pane.
document.querySelector(".skip-link").addEventListener("click", () => showPane("code"));

// The panes are tab panels only where the bar shows.
function panelRoles() {
  for (const tab of tabs) {
    const pane = document.getElementById(tab.getAttribute("aria-controls"));
    if (NARROW.matches) {
      pane.setAttribute("role", "tabpanel");
      pane.setAttribute("aria-labelledby", tab.id);
    } else {
      pane.removeAttribute("role");
      pane.removeAttribute("aria-labelledby");
    }
  }
}
NARROW.addEventListener("change", panelRoles);
panelRoles();
bar.hidden = false;
showPane("statement");
