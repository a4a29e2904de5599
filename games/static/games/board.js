/* Clicks on the interactive board fill the move fields: a cell (data-cell) or an
   edge (data-wall) is added to the field last focused, or to the text fallback
   (#move-text); a second click takes it out again.

   Highlights: each target the engine lists says for which kinds of field it is legal
   (data-legal="knight expansion", games/show/board_svg.py); each field says the kind it
   fills (data-board-kind, games/play_forms.py; "any" for the text fallback). The
   focused field's kind decides which targets are marked "legal"; before any field is
   focused, the form's default field (data-board-default) decides.

   games/static/games/live.js swaps the page's container and runs this script again for
   the new board and forms: the listeners are delegated to the document and bound once
   (window.lowenherzBoard), and a second run only sets up the new board. No framework,
   no build step, no inline script or style (the site's CSP). */
(function () {
  "use strict";
  if (window.lowenherzBoard) { window.lowenherzBoard.init(); return; }

  var target = null;  // the field clicks fill: the one last focused, else the default

  function board() { return document.getElementById("board"); }

  function defaultField() { return document.querySelector("[data-board-default]"); }

  function current() {
    if (target && !document.contains(target)) { target = null; }  // swapped out by live.js
    return target || defaultField();
  }

  function accepts(field, kind) {
    var wanted = field.getAttribute("data-board-target");
    return wanted === "any" || wanted === kind;
  }

  function fieldFor(kind) {
    var field = current();
    if (field && accepts(field, kind)) { return field; }
    return document.getElementById("move-text");
  }

  function words(field) {
    return field.value.split(/\s+/).filter(function (w) { return w.length > 0; });
  }

  function bare(word) { return word.replace(/,$/, "").toUpperCase(); }

  function nextField(field) {
    var all = Array.prototype.slice.call(field.form.querySelectorAll("[data-board-target]"));
    return all[all.indexOf(field) + 1] || null;
  }

  function toggle(field, name) {
    var list = words(field);
    var at = list.map(bare).indexOf(name.toUpperCase());
    if (field.hasAttribute("data-board-single")) {
      field.value = at >= 0 ? "" : name;
      var next = at < 0 && nextField(field);
      if (next) { next.focus(); }
    } else if (at >= 0) {
      list.splice(at, 1);
      field.value = list.join(" ");
    } else {
      field.value = list.concat([name]).join(" ");
    }
    field.dispatchEvent(new Event("input", { bubbles: true }));
  }

  function markSelected() {
    var svg = board();
    if (!svg) { return; }
    var chosen = {};
    document.querySelectorAll("[data-board-target]").forEach(function (field) {
      words(field).forEach(function (w) { chosen[bare(w)] = true; });
    });
    svg.querySelectorAll("[data-cell], [data-wall]").forEach(function (el) {
      var name = el.getAttribute("data-cell") || el.getAttribute("data-wall");
      el.classList.toggle("selected", chosen[name.toUpperCase()] === true);
    });
  }

  // The targets legal for the field's kind are marked "legal", no others; the text
  // fallback ("any") shows every target the engine lists.
  function markLegal(field) {
    var svg = board();
    if (!svg || !field) { return; }
    var kind = field.getAttribute("data-board-kind") || field.getAttribute("data-board-target");
    svg.setAttribute("data-kind", kind);
    svg.querySelectorAll("[data-cell], [data-wall]").forEach(function (el) {
      var kinds = (el.getAttribute("data-legal") || "").split(" ").filter(Boolean);
      el.classList.toggle("legal", kinds.length > 0 && (kind === "any" || kinds.indexOf(kind) >= 0));
    });
  }

  function setMode() {
    var svg = board();
    if (!svg) { return; }
    var field = current();
    svg.setAttribute("data-mode", field ? field.getAttribute("data-board-target") : "any");
    markLegal(field);
  }

  document.addEventListener("focusin", function (event) {
    var el = event.target;
    if (el.hasAttribute && el.hasAttribute("data-board-target")) {
      target = el;
      setMode();
    }
  });
  document.addEventListener("input", markSelected);
  document.addEventListener("click", function (event) {
    var svg = board();
    var el = svg && event.target.closest ? event.target.closest("[data-cell], [data-wall]") : null;
    if (!el || !svg.contains(el)) { return; }
    var kind = el.hasAttribute("data-cell") ? "cell" : "wall";
    var field = fieldFor(kind);
    if (!field) { return; }
    toggle(field, el.getAttribute(kind === "cell" ? "data-cell" : "data-wall"));
  });

  function init() {
    target = null;  // a fresh page (or a fresh container): its default field again
    setMode();
    markSelected();
  }

  window.lowenherzBoard = { init: init };
  init();
}());
