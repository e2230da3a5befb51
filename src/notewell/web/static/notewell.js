// Notewell's pages work without this file; it adds copy buttons and keyboard-usable tabs (WAI-ARIA tabs pattern).
"use strict";
document.documentElement.classList.add("js");

document.addEventListener("click", async (event) => {
  const button = event.target.closest("button.copy");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source) return;
  const label = button.firstChild;
  try {
    await navigator.clipboard.writeText(source.textContent);
    label.textContent = "Copied";
  } catch (_error) {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    label.textContent = "Selected: press Ctrl+C";
  }
  setTimeout(() => { label.textContent = "Copy"; }, 2500);
});

function setUpTabs(root) {
  const tabs = Array.from(root.querySelectorAll('[role="tab"]'));
  const select = (tab, focus) => {
    for (const other of tabs) {
      const selected = other === tab;
      other.setAttribute("aria-selected", selected ? "true" : "false");
      other.tabIndex = selected ? 0 : -1;
      document.getElementById(other.getAttribute("aria-controls")).hidden = !selected;
    }
    if (focus) tab.focus();
  };
  tabs.forEach((tab, index) => {
    tab.addEventListener("click", () => select(tab, false));
    tab.addEventListener("keydown", (event) => {
      const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 };
      if (!(event.key in moves)) return;
      event.preventDefault();
      select(tabs[(moves[event.key] + tabs.length) % tabs.length], true);
    });
  });
  const current = tabs.find((tab) => tab.getAttribute("aria-selected") === "true") || tabs[0];
  if (current) select(current, false);
}

document.querySelectorAll("[data-tabs]").forEach(setUpTabs);
