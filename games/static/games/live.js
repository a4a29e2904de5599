/* Keeps an open page up to date without a reload. Every few seconds (data-live-seconds
   on <body>), and at once when the tab is shown again, it asks the site for a version of
   what the page shows: the container's data-live-url (games.views.live), else the
   body's, which answers the navigation's "your move" count alone. The answer is tiny,
   and a 304 when nothing changed. When the version changes, the page fetches itself
   again and swaps its container ([data-live-root]) for the fresh one: rendered by the
   same view and templates as a first load, so it shows nothing a reload would not.

   A form being filled in is never replaced under the person: only the parts that hold
   no input ([data-live-part]) are swapped, and if the phase moved on a notice says so,
   with a button to reload. No framework, no inline script or style (the site's CSP).

   Each poll of a visible page says so (visible=1): the site records that its reader is
   watching (games.watching) and holds back the "waits for you" email for a while.

   The notice's words come from <body> in the reader's language (templates/base.html:
   data-live-reload, data-live-moved with its "{sentence}", data-live-changed). */
(function () {
  "use strict";
  var body = document.body;

  // A word of the page's language, from <body>; the English one if the page has none.
  function word(name, english) { return body.getAttribute(name) || english; }

  // The table talk lists the newest message last: show the end of it.
  function scrollChat() {
    document.querySelectorAll(".chat-list").forEach(function (list) {
      list.scrollTop = list.scrollHeight;
    });
  }
  scrollChat();

  var seconds = parseInt(body.getAttribute("data-live-seconds") || "", 10);
  var root = document.querySelector("[data-live-root]");
  var url = root ? root.getAttribute("data-live-url") : body.getAttribute("data-live-url");
  if (!seconds || !url) { return; }

  var etag = null;    // the last answer's, sent back: a 304 if nothing changed since
  // The version of what the page shows: the one it was drawn from, so that a change made
  // between the drawing and the first answer is fetched, not taken as already shown.
  var known = root ? root.getAttribute("data-live-version") : null;
  var dirty = false;  // something was typed, ticked or clicked into a form of the container
  var busy = false;   // a poll (and the fetch it may lead to) is under way
  var stopped = false;

  function inRoot(el) { return !!(root && el && root.contains(el)); }

  function isField(el) {
    return !!(el && el.form && /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName) &&
              !/^(hidden|submit|button|reset)$/.test(el.type) && !el.readOnly &&
              !el.closest("[data-live-draft]"));
  }

  // A form marked data-live-draft (the table talk) belongs to no phase: it does not hold
  // the page still, and what is written in it survives a swap, focus and cursor too.
  function saveDrafts() {
    var saved = [];
    root.querySelectorAll("[data-live-draft] [id]").forEach(function (el) {
      if (/^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName) && el.type !== "hidden") {
        saved.push({ id: el.id, value: el.value, focused: el === document.activeElement,
                     start: el.selectionStart, end: el.selectionEnd });
      }
    });
    return saved;
  }

  function restoreDrafts(saved) {
    saved.forEach(function (draft) {
      var el = document.getElementById(draft.id);
      if (!el || !inRoot(el)) { return; }
      el.value = draft.value;
      if (draft.focused) {
        el.focus();
        if (typeof draft.start === "number" && el.setSelectionRange) {
          el.setSelectionRange(draft.start, draft.end);
        }
      }
    });
  }

  // Typed into, ticked, or a board click filled it (board.js sends "input"), or the
  // cursor is in a field: the person is at work on a form.
  function markDirty(event) { if (inRoot(event.target) && isField(event.target)) { dirty = true; } }
  document.addEventListener("input", markDirty);
  document.addEventListener("change", markDirty);

  function typing() {
    var el = document.activeElement;
    return dirty || (inRoot(el) && isField(el));
  }

  function showCount(n) {
    var item = document.getElementById("nav-your-move");
    var count = document.getElementById("your-move-count");
    if (!item || !count || typeof n !== "number") { return; }
    count.textContent = String(n);
    item.hidden = n === 0;
  }

  function copyState(from) {
    ["data-live-phase", "data-live-status"].forEach(function (name) {
      if (from.hasAttribute(name)) { root.setAttribute(name, from.getAttribute(name)); }
    });
  }

  // board.js wires the board and the forms it fills when it runs: run it again for the
  // new ones (a script element added with a src runs; 'self' allows it).
  function rerunScripts() {
    document.querySelectorAll("script[data-live-rerun]").forEach(function (old) {
      var script = document.createElement("script");
      script.src = old.src;
      script.setAttribute("data-live-rerun", "");
      old.parentNode.replaceChild(script, old);
    });
  }

  // A message the fetched page carried (Django shows each once) is shown here, not lost.
  function carryMessages(fresh) {
    fresh.querySelectorAll("main > [role=alert]").forEach(function (alert) {
      root.parentNode.insertBefore(document.importNode(alert, true), root);
    });
  }

  function swapAll(next) {
    var drafts = saveDrafts();
    root.innerHTML = next.innerHTML;
    restoreDrafts(drafts);
    copyState(next);
    dirty = false;
    rerunScripts();
  }

  function notice(next) {
    var said = next.querySelector("#phase-text") || next.querySelector("#game-status");
    var box = document.getElementById("live-notice");
    if (!box) {
      box = document.createElement("div");
      box.id = "live-notice";
      box.className = "alert alert-warning d-flex flex-wrap align-items-center gap-2 py-2";
      box.setAttribute("role", "status");
      var text = document.createElement("span");
      text.id = "live-notice-text";
      var button = document.createElement("button");
      button.type = "button";
      button.id = "live-reload";
      button.className = "btn btn-sm btn-warning";
      button.textContent = word("data-live-reload", "Reload");
      button.addEventListener("click", function () { window.location.reload(); });
      box.appendChild(text);
      box.appendChild(button);
      var play = document.getElementById("play");
      var before = play && inRoot(play) ? play : root.firstChild;
      before.parentNode.insertBefore(box, before);
    }
    var sentence = said ? said.textContent.trim().replace(/\.$/, "")
                        : word("data-live-changed", "something changed");
    box.querySelector("#live-notice-text").textContent =
      word("data-live-moved", "The game has moved on: {sentence}; reload to see it.")
        .replace("{sentence}", function () { return sentence; });
  }

  // The person is filling in a form: swap what holds no input, keep the forms (and the
  // board they are tied to), and say so if the phase they were made for is gone.
  function swapParts(next) {
    root.querySelectorAll("[data-live-part]").forEach(function (part) {
      var twin = part.id ? next.querySelector("#" + CSS.escape(part.id)) : null;
      if (twin) { part.innerHTML = twin.innerHTML; }
    });
    var phase = next.getAttribute("data-live-phase"), status = next.getAttribute("data-live-status");
    if (phase !== root.getAttribute("data-live-phase") ||
        status !== root.getAttribute("data-live-status")) {
      notice(next);
    }
  }

  function refresh(version) {
    var options = { credentials: "same-origin", cache: "no-store", redirect: "error",
                    headers: { "Accept": "text/html" } };
    return fetch(window.location.pathname + window.location.search, options)
      .then(function (response) {
        if (!response.ok) { throw new Error("the page answered " + response.status); }
        return response.text();
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        var next = fresh.querySelector("[data-live-root]");
        if (!next || next.id !== root.id) { return; }
        carryMessages(fresh);
        if (typing()) { swapParts(next); } else { swapAll(next); }
        scrollChat();
        known = next.getAttribute("data-live-version") || version;
      });
  }

  function seen(answer) {
    showCount(answer.your_move);
    var version = answer.game ? answer.game.version : answer.lobby;
    if (!root || typeof version !== "string" || version === known) { return null; }
    return refresh(version);
  }

  function poll() {
    if (busy || stopped || document.hidden) { return; }
    busy = true;
    var headers = { "Accept": "application/json" };
    if (etag) { headers["If-None-Match"] = etag; }
    // A visible page says so: the site then tells its reader of a phase that needs them
    // here, and emails them only if they stop looking (games.watching).
    var visible = document.visibilityState === "visible";
    var asked = visible ? url + (url.indexOf("?") < 0 ? "?" : "&") + "visible=1" : url;
    fetch(asked, { headers: headers, credentials: "same-origin", cache: "no-store",
                 redirect: "error" })
      .then(function (response) {
        if (response.status === 404 || response.status === 403) { stopped = true; }
        if (!response.ok) { return null; }  // a 304 too: nothing changed
        var tag = response.headers.get("ETag");
        return response.json().then(function (answer) { return { answer: answer, tag: tag }; });
      })
      .then(function (got) {
        if (!got) { return null; }
        // The ETag is kept once the page shows this answer: a failed fetch is retried.
        return Promise.resolve(seen(got.answer)).then(function () { etag = got.tag; });
      })
      .catch(function () { /* offline or signed out: try again next time */ })
      .then(function () { busy = false; });
  }

  window.setInterval(poll, Math.max(1, seconds) * 1000);
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) { poll(); }
  });
  window.addEventListener("pageshow", function (event) { if (event.persisted) { poll(); } });
  poll();
}());
