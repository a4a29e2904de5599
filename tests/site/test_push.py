"""Web Push (issue 24): a browser's subscription is stored only if its endpoint is https
on the standard port to a public DNS name whose every address is public, and every push
connects only to such an address (the name is resolved again at the socket), follows no
redirect: the server can never be made to post into its own network. Pushes go where
the "waits for you" email goes (beside it, or instead of it), through the outbox,
signed with the site's VAPID key and encrypted for the browser (RFC 8291), saying no
more than the reader's own view.

No test resolves a name or connects outside this machine: names resolve through a
table here (`dns`), and a push that would reach a push service is answered by a stub
adapter (`push_service`); the refusals are shown against a real listener on loopback.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import threading
from collections.abc import Iterator
from datetime import timedelta

import http_ece
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.test import Client
from django.urls import reverse
from py_vapid import Vapid
from requests.adapters import BaseAdapter

from games import watching
from games.mail import compose, notify, outbox, push
from games.models import Notifications, OutgoingEmail, PushChoice, PushSubscription
from tests.site.test_emails import seat, sent_to

pytestmark = pytest.mark.django_db
Status = OutgoingEmail.Status
PUBLIC = "93.184.215.14"
DNS = {
    "push.example.org": [PUBLIC],
    "internal.example.org": ["10.0.0.5"],
    "metadata.example.org": ["169.254.169.254"],
    "loopback.example.org": ["127.0.0.1"],
    "loop6.example.org": ["::1"],
    "mapped.example.org": ["::ffff:127.0.0.1"],
    "shared.example.org": ["100.64.0.1"],
    "unique-local.example.org": ["fd00::1"],
    "mixed.example.org": [PUBLIC, "192.168.1.1"],
}


@pytest.fixture(autouse=True)
def push_on(settings) -> None:
    settings.VAPID_PRIVATE_KEY = settings.DEV_VAPID_PRIVATE_KEY
    settings.VAPID_SUBJECT = "mailto:operators@example.org"


@pytest.fixture(autouse=True)
def dns(monkeypatch) -> dict[str, list[str]]:
    """Names resolve through DNS above, and loopback names to loopback; nothing else."""
    table = dict(DNS)

    def resolve(host: str, port: int) -> list[str]:
        if host in ("localhost", "127.0.0.1"):
            return ["127.0.0.1"]
        if host not in table:
            raise socket.gaierror(f"{host} not found")
        return table[host]

    monkeypatch.setattr(push, "resolve", resolve)
    return table


@pytest.fixture
def browser_keys() -> dict[str, object]:
    """A browser's subscription keys (RFC 8291): its P-256 key pair and auth secret."""
    private = ec.generate_private_key(ec.SECP256R1())
    point = private.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    auth = os.urandom(16)
    return {
        "private": private,
        "auth_bytes": auth,
        "p256dh": b64(point),
        "auth": b64(auth),
    }


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def subscription(endpoint: str, keys: dict) -> dict:
    return {"endpoint": endpoint, "keys": {"p256dh": keys["p256dh"], "auth": keys["auth"]}}


# --- which endpoints are accepted -------------------------------------------------------------


@pytest.mark.parametrize(
    "endpoint, reason",
    [
        ("http://push.example.org/send/1", "must use https"),
        ("https://8.8.8.8/send/1", "not an IP address"),
        ("https://[2001:4860:4860::8888]/send/1", "not an IP address"),
        ("https://127.0.0.1/send/1", "not an IP address"),
        ("https://push.example.org:8443/send/1", "standard https port"),
        ("https://push.example.org:22/send/1", "standard https port"),
        ("https://user:secret@push.example.org/send/1", "user name or password"),
        ("https://localhost/send/1", "not a public host name"),
        ("https://2130706433/send/1", "not a public host name"),
        ("https://internal.example.org/send/1", "not on the public internet"),
        ("https://metadata.example.org/latest", "not on the public internet"),
        ("https://loopback.example.org/send/1", "not on the public internet"),
        ("https://loop6.example.org/send/1", "not on the public internet"),
        ("https://mapped.example.org/send/1", "not on the public internet"),
        ("https://shared.example.org/send/1", "not on the public internet"),
        ("https://unique-local.example.org/send/1", "not on the public internet"),
        ("https://mixed.example.org/send/1", "not on the public internet"),
        ("https://nowhere.example.org/send/1", "cannot be found"),
        ("https://push.example.org:99999/send/1", "not a web address"),
        ("", "needs its endpoint"),
        ("https://push.example.org/" + "x" * 1000, "needs its endpoint"),
    ],
)
def test_an_endpoint_the_site_may_not_post_to_is_refused_with_the_reason(endpoint, reason):
    with pytest.raises(push.EndpointRefused, match=reason):
        push.check_endpoint(endpoint)


def test_an_https_endpoint_on_a_public_host_is_accepted():
    for endpoint in ("https://push.example.org/send/1", "https://push.example.org:443/wpush/v2/a"):
        assert push.check_endpoint(endpoint) == endpoint


def as_user(user, enforce_csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=enforce_csrf)
    client.force_login(user)
    return client


def post_json(client: Client, name: str, body: object):
    return client.post(reverse(name), json.dumps(body), content_type="application/json")


def test_the_page_s_subscription_is_stored_only_if_its_endpoint_will_do(alice, browser_keys):
    client = as_user(alice)
    refused = post_json(
        client, "push_subscribe", subscription("https://internal.example.org/x", browser_keys)
    )
    assert refused.status_code == 400
    assert "not on the public internet" in refused.json()["error"]
    bad_keys = {"endpoint": "https://push.example.org/x", "keys": {"p256dh": "x", "auth": "y"}}
    assert post_json(client, "push_subscribe", bad_keys).status_code == 400
    assert post_json(client, "push_subscribe", "not a subscription").status_code == 400
    assert not PushSubscription.objects.exists()
    good = subscription("https://push.example.org/x", browser_keys)
    assert post_json(client, "push_subscribe", good).json() == {"ok": True}
    assert post_json(client, "push_subscribe", good).status_code == 200  # again: one row
    (stored,) = PushSubscription.objects.all()
    assert stored.user == alice and stored.p256dh == browser_keys["p256dh"]
    off = post_json(client, "push_unsubscribe", {"endpoint": "https://push.example.org/x"})
    assert off.json()["forgotten"] == 1 and not PushSubscription.objects.exists()


def test_subscribing_needs_a_signed_in_person_and_the_csrf_token(alice, browser_keys):
    good = subscription("https://push.example.org/x", browser_keys)
    anonymous = Client().post(
        reverse("push_subscribe"), json.dumps(good), content_type="application/json"
    )
    assert anonymous.status_code == 302
    assert post_json(as_user(alice, enforce_csrf=True), "push_subscribe", good).status_code == 403
    assert not PushSubscription.objects.exists()


# --- a push never reaches this machine's network ----------------------------------------------


@pytest.fixture
def listener() -> Iterator[dict]:
    """A TCP listener on loopback that counts the connections it is offered."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    seen = {"port": server.getsockname()[1], "connections": 0}
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            seen["connections"] += 1
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield seen
    stop.set()
    thread.join(timeout=5)
    server.close()


def push_row(user, text: str = '{"title": "t", "body": "b", "url": "/", "tag": "t"}'):
    row = outbox.queue("push", f"push:{user.pk}", "t", text, "", user=user)
    assert row is not None
    return row


@pytest.mark.parametrize("host", ["loopback.example.org", "127.0.0.1", "localhost"])
def test_a_stored_endpoint_whose_host_now_points_inside_is_never_connected(
    alice, browser_keys, listener, host
):
    """A subscription checked when it was stored, whose name resolves to this machine
    now (or one stored by other means): the push connects nowhere, and the subscription
    is dropped."""
    endpoint = f"https://{host}:{listener['port']}/push/1"
    PushSubscription.objects.create(
        user=alice, endpoint=endpoint, p256dh=browser_keys["p256dh"], auth=browser_keys["auth"]
    )
    assert push.deliver(push_row(alice)) == "pushed to 0 of 1 subscriptions"
    assert listener["connections"] == 0
    assert not PushSubscription.objects.exists()


# --- what is sent, and how --------------------------------------------------------------------


class PushService(BaseAdapter):
    """A push service, answering each request with the next status; what it was sent."""

    def __init__(self, statuses: list[int]) -> None:
        super().__init__()
        self.statuses = statuses
        self.requests: list[requests.PreparedRequest] = []

    def send(self, request, **kwargs) -> requests.Response:
        self.requests.append(request)
        response = requests.Response()
        response.status_code = self.statuses.pop(0) if self.statuses else 201
        response.headers["Location"] = "https://elsewhere.example.org/"
        response.request, response._content = request, b""
        return response

    def close(self) -> None:
        pass


@pytest.fixture
def push_service(monkeypatch) -> PushService:
    service = PushService([])
    real = push.guarded_session

    def session() -> requests.Session:
        guarded = real()
        guarded.mount("https://", service)  # in the place of the guarded adapter
        return guarded

    monkeypatch.setattr(push, "guarded_session", session)
    return service


def subscribed(user, keys, choice: str = PushChoice.ALSO) -> PushSubscription:
    Notifications.objects.update_or_create(user=user, defaults={"push": choice})
    return push.subscribe(user, subscription(f"https://push.example.org/{user.pk}", keys))


def test_a_push_is_signed_encrypted_for_the_browser_and_says_no_more_than_the_view(
    game, alice, browser_keys, push_service
):
    subscribed(alice, browser_keys)
    notify.phase_changed(game.pk, game.phase_number)
    (row,) = sent_to(alice, "push")
    assert outbox.send(row.pk)
    assert OutgoingEmail.objects.get(pk=row.pk).status == Status.SENT
    (request,) = push_service.requests
    assert request.url == f"https://push.example.org/{alice.pk}"
    assert request.headers["Content-Encoding"] == "aes128gcm"
    authorization = request.headers["Authorization"]
    assert f"k={push.public_key()}" in authorization and Vapid.verify(authorization)
    plain = http_ece.decrypt(
        request.body,
        private_key=browser_keys["private"],
        auth_secret=browser_keys["auth_bytes"],
        version="aes128gcm",
    )
    payload = json.loads(plain)
    assert set(payload) == {"title", "body", "url", "tag"}
    assert payload["title"] == "Löwenherz: Test game"
    assert payload["body"].startswith("The game waits for your move:")
    assert payload["url"] == f"/games/{game.pk}/"
    # nothing of anyone's hand: the view's words only
    assert "ducat" not in plain.decode().lower()


def test_pushes_go_beside_the_email_or_instead_as_each_chose(
    game, alice, bob, charlie, browser_keys
):
    subscribed(alice, browser_keys, PushChoice.ALSO)
    subscribed(bob, browser_keys, PushChoice.INSTEAD)
    Notifications.objects.update_or_create(user=charlie, defaults={"push": PushChoice.INSTEAD})
    notify.phase_changed(game.pk, game.phase_number)
    kinds = {p.username: sorted(e.kind for e in sent_to(p)) for p in (alice, bob, charlie)}
    assert kinds == {
        "alice": ["push", "your_turn"],
        "bob": ["push"],  # instead of the email
        "charlie": ["your_turn"],  # no browser subscribed: the email, whatever he chose
    }


def test_a_watcher_gets_neither_push_nor_email_until_the_held_ask_goes(game, alice, browser_keys):
    subscribed(alice, browser_keys)
    watching.saw(game.pk, alice.pk)
    notify.phase_changed(game.pk, game.phase_number)
    assert [e.kind for e in sent_to(alice)] == ["your_turn_owed"]
    notify.flush_due(OutgoingEmail.objects.get(user=alice).next_attempt_at + timedelta(1))
    assert sorted(e.kind for e in sent_to(alice) if e.status == Status.QUEUED) == [
        "push",
        "your_turn",
    ]


def test_a_reminder_is_pushed_too(game, alice, browser_keys):
    subscribed(alice, browser_keys, PushChoice.INSTEAD)
    compose.reminder(game, seat(game, alice))
    (row,) = sent_to(alice)
    assert row.kind == "push" and "still missing" in json.loads(row.text)["body"]


def test_a_forgotten_subscription_is_dropped_and_a_busy_service_tried_again(
    alice, browser_keys, push_service
):
    subscribed(alice, browser_keys)
    push_service.statuses = [503]
    row = push_row(alice)
    assert not outbox.send(row.pk)
    assert OutgoingEmail.objects.get(pk=row.pk).status == Status.RETRYING
    push_service.statuses = [410]
    OutgoingEmail.objects.filter(pk=row.pk).update(next_attempt_at=None)
    assert outbox.send(row.pk)
    assert not PushSubscription.objects.exists()
    assert OutgoingEmail.objects.get(pk=row.pk).last_error == "pushed to 0 of 1 subscriptions"


def test_a_redirect_is_not_followed(alice, browser_keys, push_service):
    subscribed(alice, browser_keys)
    push_service.statuses = [307]
    assert push.deliver(push_row(alice)) == "pushed to 0 of 1 subscriptions"
    assert len(push_service.requests) == 1  # not to elsewhere.example.org


# --- the pages --------------------------------------------------------------------------------


def test_the_service_worker_is_served_from_the_site_s_root():
    answer = Client().get("/sw.js")
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/javascript")
    assert b"showNotification" in answer.content and b"notificationclick" in answer.content


def test_the_preferences_offer_push_only_when_the_site_has_a_key(alice, settings):
    client = as_user(alice)
    page = client.get(reverse("email_preferences")).content.decode()
    assert 'id="push-device"' in page and push.public_key() in page
    assert 'name="push"' in page
    settings.VAPID_PRIVATE_KEY = ""
    page = client.get(reverse("email_preferences")).content.decode()
    assert 'id="push-device"' not in page and 'name="push"' not in page


def test_the_push_choice_is_saved(alice):
    client = as_user(alice)
    answer = client.post(reverse("email_preferences"), {"mode": "every", "push": "instead"})
    assert answer.status_code == 302
    assert Notifications.objects.get(user=alice).push == PushChoice.INSTEAD
