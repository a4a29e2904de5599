/* Clicks on the interactive board fill the move fields: a cell (data-cell) or an
   edge (data-wall) is added to the field last focused, or to the text fallback
   (#move-text); a second click takes it out again. No framework, no build step. */
(function () {
  "use strict";
  var board = document.getElementById("board");
  if (!board) { return; }
  var target = document.querySelector("[data-board-default]");

  function accepts(field, kind) {
    var wanted = field.getAttribute("data-board-target");
    return wanted === "any" || wanted === kind;
  }

  function fieldFor(kind) {
    if (target && accepts(target, kind)) { return target; }
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
    var chosen = {};
    document.querySelectorAll("[data-board-target]").forEach(function (field) {
      words(field).forEach(function (w) { chosen[bare(w)] = true; });
    });
    board.querySelectorAll("[data-cell], [data-wall]").forEach(function (el) {
      var name = el.getAttribute("data-cell") || el.getAttribute("data-wall");
      el.classList.toggle("selected", chosen[name.toUpperCase()] === true);
    });
  }

  function setMode() {
    board.setAttribute("data-mode", target ? target.getAttribute("data-board-target") : "any");
  }

  document.addEventListener("focusin", function (event) {
    if (event.target.hasAttribute && event.target.hasAttribute("data-board-target")) {
      target = event.target;
      setMode();
    }
  });
  document.addEventListener("input", markSelected);

  board.addEventListener("click", function (event) {
    var el = event.target.closest("[data-cell], [data-wall]");
    if (!el) { return; }
    var kind = el.hasAttribute("data-cell") ? "cell" : "wall";
    var field = fieldFor(kind);
    if (!field) { return; }
    toggle(field, el.getAttribute(kind === "cell" ? "data-cell" : "data-wall"));
  });

  setMode();
  markSelected();
}());
