/* The site's service worker, served at /sw.js (games.mail.views.service_worker): shows
   the site's Web Push notifications (games.mail.push: a JSON payload of a title, a line,
   the game's page and a tag) and opens the page on a click, in a tab of the site if one
   is open. It caches nothing: the site works as it does without it. */
"use strict";

self.addEventListener("push", function (event) {
  var data = {};
  try { data = event.data ? event.data.json() : {}; } catch (error) { data = {}; }
  var title = typeof data.title === "string" ? data.title : "Löwenherz";
  event.waitUntil(self.registration.showNotification(title, {
    body: typeof data.body === "string" ? data.body : "",
    tag: typeof data.tag === "string" ? data.tag : undefined,
    data: { url: typeof data.url === "string" && data.url.charAt(0) === "/" ? data.url : "/" }
  }));
});

self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  var url = new URL(event.notification.data.url, self.location.origin).href;
  event.waitUntil(self.clients.matchAll({ type: "window", includeUncontrolled: true })
    .then(function (windows) {
      for (var i = 0; i < windows.length; i++) {
        if (windows[i].url === url && "focus" in windows[i]) { return windows[i].focus(); }
      }
      return self.clients.openWindow(url);
    }));
});
