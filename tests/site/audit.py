"""What the accessibility tests measure on a page in Chromium: axe-core's findings
(the axe-core bundled by the PyPI package axe-playwright-python, injected by the test,
never served by the site) and the size of every target a person taps.

Tap targets (issue 24, item 2; WCAG 2.5.5 asks 44x44 CSS px, as Apple's and Google's
guidelines do): every visible link, button, field, summary and board target. Two kinds
are measured by what a tap really hits, and one is exempt:
- a checkbox or radio button is tapped through its label too (a click on a <label for>
  ticks it): its target is the union of the box and its label;
- a link inside a sentence is exempt, as WCAG 2.5.8's "inline" exception says: its
  height is the line's, and making it taller would tear the sentence apart. A link is
  inline when it is displayed inline and its paragraph holds other words than its own.
"""

from __future__ import annotations

from typing import Any

from axe_playwright_python.base import AXE_SCRIPT
from playwright.sync_api import Page

TAP = 44  # CSS px, both ways
GRAVE = ("serious", "critical")  # the impacts an audit must not find
RUN_AXE = "() => axe.run(document, {resultTypes: ['violations']})"

SMALL_TARGETS = """(tap) => {
  const wanted = 'a[href], button, input:not([type=hidden]), select, textarea, summary, '
    + '[role=button], [tabindex]:not([tabindex="-1"]), [data-cell], [data-wall]';
  function visible(el) {
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') { return false; }
    if (style.pointerEvents === 'none') { return false; }
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  }
  function block(el) {
    let up = el.parentElement;
    while (up && getComputedStyle(up).display.startsWith('inline')) { up = up.parentElement; }
    return up;
  }
  function inline(el) {
    if (el.tagName !== 'A' || getComputedStyle(el).display !== 'inline') { return false; }
    const around = block(el);
    const text = (around ? around.textContent : '').replace(/\\s+/g, ' ').trim();
    return text.length > el.textContent.replace(/\\s+/g, ' ').trim().length;
  }
  function box(el) {
    let r = el.getBoundingClientRect();
    let [left, top, right, bottom] = [r.left, r.top, r.right, r.bottom];
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (el.tagName === 'INPUT' && (type === 'checkbox' || type === 'radio')) {
      for (const label of el.labels || []) {
        const l = label.getBoundingClientRect();
        left = Math.min(left, l.left); top = Math.min(top, l.top);
        right = Math.max(right, l.right); bottom = Math.max(bottom, l.bottom);
      }
    }
    return {width: right - left, height: bottom - top};
  }
  function name(el) {
    const id = el.id ? '#' + el.id : '';
    const label = el.getAttribute('aria-label') || el.getAttribute('data-cell')
      || el.getAttribute('data-wall') || el.textContent.trim().slice(0, 30);
    return el.tagName.toLowerCase() + id + ' "' + label + '"';
  }
  const small = [];
  for (const el of document.querySelectorAll(wanted)) {
    if (!visible(el) || inline(el)) { continue; }
    const b = box(el);
    if (b.width < tap - 0.01 || b.height < tap - 0.01) {
      small.push(name(el) + ' ' + b.width.toFixed(1) + 'x' + b.height.toFixed(1));
    }
  }
  return small;
}"""

TARGET_SIZES = """() => Array.from(document.querySelectorAll('#board [data-cell]'))
  .map(el => el.getBoundingClientRect()).filter(b => b.width > 0)
  .map(b => [b.width, b.height])"""


def grave_findings(page: Page) -> list[dict[str, Any]]:
    """axe-core's serious and critical findings on the page as it is now."""
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.evaluate(AXE_SCRIPT)  # through the browser's debugger: the site's CSP allows it
    results = page.evaluate(RUN_AXE)
    return [v for v in results["violations"] if v["impact"] in GRAVE]


def counts(findings: list[dict[str, Any]]) -> dict[str, int]:
    return {f"{v['id']} ({v['impact']})": len(v["nodes"]) for v in findings}


def describe(findings: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"{v['id']} ({v['impact']}): {v['help']}: "
        + "; ".join(" ".join(n["target"]) for n in v["nodes"][:5])
        for v in findings
    )


def small_targets(page: Page) -> list[str]:
    """The visible tap targets under 44x44 CSS px (not counting inline links)."""
    return page.evaluate(SMALL_TARGETS, TAP)
