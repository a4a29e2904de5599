"""Push notifications turned on and off in a browser (Chromium): the preferences page's
"This browser" section (games/static/games/push.js) registers the service worker
(/sw.js), asks the browser for a subscription and hands it to the site, which keeps it
only if its endpoint will do; at 360 px its buttons are a thumb's size.

Headless Chromium has no push service to reach here (the machine has no network), so
the browser's pushManager is a stand-in that hands out a subscription of its own; the
site resolves that endpoint's name through a table (test_push's `dns`).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from games.models import PushSubscription
from tests.site.test_browser_phone import log_in
from tests.site.test_push import dns, push_on  # noqa: F401  (fixtures)

# pushManager's stand-in: a subscription to an endpoint on a public name (or, with
# window.pushEndpoint set, another), with keys of the right sizes.
STAND_IN = """
(() => {
  let current = null;
  const key = "B" + "A".repeat(86);  // 65 bytes in base64url
  function made() {
    return {
      endpoint: window.pushEndpoint || "https://push.example.org/browser-1",
      toJSON() { return {endpoint: this.endpoint, keys: {p256dh: key, auth: "A".repeat(22)}}; },
      unsubscribe() { current = null; return Promise.resolve(true); },
    };
  }
  PushManager.prototype.subscribe = function () {
    current = made();
    return Promise.resolve(current);
  };
  PushManager.prototype.getSubscription = function () { return Promise.resolve(current); };
})();
"""


@pytest.fixture
def preferences(new_page, live_server, alice):
    def open_page(width: int = 1200):
        page = new_page(viewport={"width": width, "height": 800})
        page.context.grant_permissions(["notifications"], origin=live_server.url)
        page.add_init_script(STAND_IN)
        log_in(page, "alice")
        page.goto("/accounts/notifications/")
        return page

    return open_page


def test_push_is_turned_on_and_off_in_this_browser(preferences, alice):
    page = preferences()
    status = page.locator("#push-status")
    expect(status).to_have_text("Push notifications are off in this browser.")
    page.click("#push-on")
    expect(status).to_have_text("Push notifications are on in this browser.")
    (stored,) = PushSubscription.objects.all()
    assert stored.user == alice and stored.endpoint == "https://push.example.org/browser-1"
    scope = page.evaluate("navigator.serviceWorker.getRegistration().then(r => r && r.scope)")
    assert scope.endswith("/")  # the site's root: /sw.js
    page.click("#push-off")
    expect(status).to_have_text("Push notifications are off in this browser.")
    assert not PushSubscription.objects.exists()


def test_an_endpoint_the_site_refuses_is_said_and_not_kept(preferences):
    page = preferences()
    page.evaluate("window.pushEndpoint = 'https://internal.example.org/browser-1'")
    page.click("#push-on")
    expect(page.locator("#push-status")).to_contain_text("not on the public internet")
    expect(page.locator("#push-on")).to_be_visible()
    assert not PushSubscription.objects.exists()


def test_the_buttons_are_a_thumb_s_size_on_a_phone(preferences):
    page = preferences(width=360)
    button = page.locator("#push-on")
    expect(button).to_be_visible()
    box = button.bounding_box()
    assert box is not None and box["width"] >= 44 and box["height"] >= 44
