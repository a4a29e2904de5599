/* The preferences page's "This browser" section (templates/mail/preferences.html): turns
   Web Push on or off in this browser. On: the service worker (/sw.js) is registered, the
   browser's push service gives a subscription for the site's VAPID key (data-push-key),
   and the site stores it (data-subscribe-url; it accepts only an https endpoint on a
   public host). Off: the subscription is dropped here and at the site. The words come
   from the section's data-word-* attributes, in the reader's language. No inline
   script (the site's CSP). */
(function () {
  "use strict";
  var box = document.getElementById("push-device");
  if (!box) { return; }
  var status = document.getElementById("push-status");
  var on = document.getElementById("push-on");
  var off = document.getElementById("push-off");
  var form = document.getElementById("preferences-form");
  var csrf = form ? form.querySelector("[name=csrfmiddlewaretoken]") : null;
  box.hidden = false;

  function say(name, text) { status.textContent = text || box.getAttribute("data-word-" + name); }

  function show(subscribed) {
    on.hidden = subscribed;
    off.hidden = !subscribed;
    say(subscribed ? "on" : "off");
  }

  if (!("serviceWorker" in navigator) || !("PushManager" in window) ||
      !("Notification" in window)) {
    say("unsupported");
    return;
  }

  // The key as the push service takes it: bytes, from base64url.
  function keyBytes(text) {
    var padded = (text + "===".slice((text.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    var raw = window.atob(padded);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) { bytes[i] = raw.charCodeAt(i); }
    return bytes;
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin", redirect: "error",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf ? csrf.value : "" },
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().then(function (answer) {
        if (!response.ok) { throw new Error(answer.error || ""); }
        return answer;
      });
    });
  }

  var worker = navigator.serviceWorker.register(box.getAttribute("data-worker-url"), { scope: "/" });

  function current() {
    return worker.then(function (registration) { return registration.pushManager.getSubscription(); });
  }

  function turnOn() {
    on.disabled = true;
    Notification.requestPermission().then(function (permission) {
      if (permission !== "granted") { throw new Error("denied"); }
      return worker;
    }).then(function (registration) {
      return registration.pushManager.subscribe({
        userVisibleOnly: true, applicationServerKey: keyBytes(box.getAttribute("data-push-key"))
      });
    }).then(function (subscription) {
      return post(box.getAttribute("data-subscribe-url"), subscription.toJSON()).catch(function (error) {
        subscription.unsubscribe();  // the site refused it: keep nothing half on
        throw error;
      });
    }).then(function () { show(true); })
      .catch(function (error) {
        if (error && error.message === "denied") { say("denied"); }
        else { say("failed", error && error.message); }
      })
      .then(function () { on.disabled = false; });
  }

  function turnOff() {
    off.disabled = true;
    current().then(function (subscription) {
      if (!subscription) { return null; }
      var endpoint = subscription.endpoint;
      return subscription.unsubscribe().then(function () {
        return post(box.getAttribute("data-unsubscribe-url"), { endpoint: endpoint });
      });
    }).then(function () { show(false); })
      .catch(function () { say("failed"); })
      .then(function () { off.disabled = false; });
  }

  on.addEventListener("click", turnOn);
  off.addEventListener("click", turnOff);
  current().then(function (subscription) { show(!!subscription); })
    .catch(function () { say("unsupported"); });
}());
