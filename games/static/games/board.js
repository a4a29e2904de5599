/* Clicks on the interactive board fill the move fields: a cell (data-cell) or an
   edge (data-wall) is added to the field last focused, or to the text fallback
   (#move-text); a second click takes it out again.

   Thumbs, keys and screen readers (issue 24): each cell is a button (games/show/
   board_svg.py names it "F7, forest, red knight"); one of them takes the Tab key and the
   arrow keys move on (a roving tabindex), Enter or Space chooses like a click. A cell
   chosen while a wall is wanted opens the sheet (#board-sheet, templates/games/
   _board_sheet.html) with a 44 px button for each of its sides, so no one needs to hit a
   thin edge: on a phone the edges take no taps at all (game.css).

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

  function sheet() { return document.getElementById("board-sheet"); }

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
      if (el.hasAttribute("data-cell")) { el.setAttribute("aria-pressed", String(chosen[name] === true)); }
    });
    var open = sheet();
    if (open && !open.hidden) {
      open.querySelectorAll("[data-choice]").forEach(function (button) {
        button.setAttribute("aria-pressed", String(chosen[button.getAttribute("data-choice")] === true));
      });
    }
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
      var legal = kinds.length > 0 && (kind === "any" || kinds.indexOf(kind) >= 0);
      el.classList.toggle("legal", legal);
      if (el.hasAttribute("data-cell")) {  // a screen reader adds "can be chosen now"
        if (legal) { el.setAttribute("aria-describedby", "board-legal"); } else { el.removeAttribute("aria-describedby"); }
      }
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
    if (!svg || !event.target.closest) { return; }
    var choice = event.target.closest("#board-sheet [data-choice]");
    if (choice) { choose(choice.getAttribute("data-kind"), choice.getAttribute("data-choice")); return; }
    if (event.target.closest("#board-sheet-close")) { closeSheet(true); return; }
    var el = event.target.closest("[data-cell], [data-wall]");
    if (!el || !svg.contains(el)) { return; }
    if (el.hasAttribute("data-wall")) { choose("wall", el.getAttribute("data-wall")); return; }
    activate(el);
  });

  function choose(kind, name) {
    var field = fieldFor(kind);
    if (field) { toggle(field, name); }
  }

  // --- a cell chosen: into the field, or its sheet when a wall is wanted -----------------

  function wantsWall() {
    var field = current();
    var mode = field ? field.getAttribute("data-board-target") : "any";
    if (mode === "wall") { return true; }
    // The text field takes anything: a cell's sheet when the phase asks for walls.
    return mode === "any" && board().querySelector("[data-wall][data-legal]") !== null;
  }

  function activate(cell) {
    rove(cell);
    if (wantsWall()) { openSheet(cell); return; }
    closeSheet(false);
    choose("cell", cell.getAttribute("data-cell"));
  }

  function cells() { return Array.prototype.slice.call(board().querySelectorAll("[data-cell]")); }

  function columns() { return parseInt(board().getAttribute("data-columns"), 10) || 1; }

  // The cell beside `cell` one step (dx, dy) away, or null at the rim.
  function neighbour(cell, dx, dy) {
    var all = cells(), at = all.indexOf(cell), width = columns();
    var x = at % width + dx, y = Math.floor(at / width) + dy;
    if (x < 0 || x >= width || y < 0) { return null; }
    return all[y * width + x] || null;
  }

  function edgeBetween(one, two) {
    var a = one.getAttribute("data-cell"), b = two.getAttribute("data-cell");
    var edge = board().querySelector('[data-wall="' + a + "/" + b + '"], [data-wall="' + b + "/" + a + '"]');
    return edge;
  }

  var SIDES = [["up", 0, -1], ["right", 1, 0], ["down", 0, 1], ["left", -1, 0]];

  function button(text, kind, name, legal) {
    var el = document.createElement("button");
    el.type = "button";
    el.className = "btn " + (legal ? "btn-primary" : "btn-outline-secondary");
    el.textContent = text;
    el.setAttribute("data-kind", kind);
    el.setAttribute("data-choice", name);
    return el;
  }

  function openSheet(cell) {
    var box = sheet();
    if (!box) { return; }
    var list = box.querySelector("#board-sheet-buttons");
    var name = cell.getAttribute("data-cell");
    list.textContent = "";
    if (current() === null || current().getAttribute("data-board-target") === "any") {
      var legal = cell.classList.contains("legal");
      list.appendChild(button(box.getAttribute("data-choose").replace("{cell}", name), "cell", name, legal));
    }
    SIDES.forEach(function (side) {
      var other = neighbour(cell, side[1], side[2]);
      var edge = other && edgeBetween(cell, other);
      if (!edge) { return; }
      var wall = edge.getAttribute("data-wall");
      var text = box.getAttribute("data-side-" + side[0]).replace("{edge}", wall);
      list.appendChild(button(text, "wall", wall, edge.classList.contains("legal")));
    });
    box.querySelector("#board-sheet-title").textContent = cell.getAttribute("aria-label");
    box.setAttribute("data-cell", name);
    box.hidden = false;
    markSelected();
    (list.querySelector(".btn-primary") || list.querySelector("button")).focus({ preventScroll: true });
    uncover(cell, box);
  }

  // The sheet sits at the foot of the screen: the chosen cell is scrolled above it.
  function uncover(cell, box) {
    var hidden = cell.getBoundingClientRect().bottom - box.getBoundingClientRect().top;
    if (hidden > 0) { window.scrollBy(0, hidden + 8); }
  }

  function closeSheet(refocus) {
    var box = sheet();
    if (!box || box.hidden) { return; }
    box.hidden = true;
    var cell = board() && board().querySelector('[data-cell="' + box.getAttribute("data-cell") + '"]');
    if (refocus && cell) { cell.focus(); }
  }

  // --- keys: a roving tabindex over the cells ------------------------------------------

  function rove(cell) {
    cells().forEach(function (el) { el.setAttribute("tabindex", el === cell ? "0" : "-1"); });
  }

  var MOVES = { ArrowUp: [0, -1], ArrowRight: [1, 0], ArrowDown: [0, 1], ArrowLeft: [-1, 0] };

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && sheet() && !sheet().hidden) { closeSheet(true); return; }
    var cell = event.target.closest ? event.target.closest("#board [data-cell]") : null;
    if (!cell) { return; }
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      activate(cell);
      return;
    }
    var step = MOVES[event.key];
    var next = step && neighbour(cell, step[0], step[1]);
    if (step) { event.preventDefault(); }
    if (next) {
      rove(next);
      next.focus();
    }
  });

  function init() {
    target = null;  // a fresh page (or a fresh container): its default field again
    setMode();
    markSelected();
  }

  window.lowenherzBoard = { init: init };
  init();
}());
