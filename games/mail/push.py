"""Web Push (RFC 8030, 8291, 8292): push notifications to the browsers a person turned
them on in, signed with the site's VAPID key, by pywebpush. The outbox sends a "push"
row through `deliver`, as it sends an email over SMTP (retries, back-off, never twice).

A subscription's endpoint is a URL the browser's push service gave, posted to the site
by a page: the site will POST to it. So that nobody can make the site post into its own
network, an endpoint is accepted only over https, on the standard port, to a host
named by a public DNS name (no IP literal, no user or password) whose every address is
a public one (`check_endpoint`). Names can change what they resolve to, so every
connection a push makes is checked again at the socket (`GuardedConnection`): the name
is resolved there, and the connection goes to a checked public address or nowhere; a
redirect is never followed, and no proxy of the environment is used.

The payload says what the reader's own "waits for you" says in one line (the game's
name, the phase, the turn) and where the game is: no secret of any view.
"""

from __future__ import annotations

import base64
import binascii
import functools
import ipaddress
import json
import logging
import re
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings
from django.contrib.auth.models import User
from django.utils.translation import gettext as _
from py_vapid import Vapid
from pywebpush import WebPushException, webpush
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPSConnection
from urllib3.connectionpool import HTTPSConnectionPool
from urllib3.util import connection as urllib3_connection

from games.models import OutgoingEmail, PushChoice, PushSubscription

log = logging.getLogger(__name__)

MAX_ENDPOINT = 1000  # PushSubscription.endpoint's length
MAX_SUBSCRIPTIONS = 10  # browsers per person; a new one beyond replaces the oldest
PUSH_TTL = 24 * 3600  # seconds a push service keeps a push for a browser that is away
HOST_NAME = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


class EndpointRefused(ValueError):
    """A subscription's endpoint the site will not post to; the message says why, in
    words for the person whose browser sent it."""


# --- the site's key ------------------------------------------------------------------------


def enabled() -> bool:
    """Whether the site offers push notifications (a VAPID key is set)."""
    return bool(settings.VAPID_PRIVATE_KEY)


@functools.cache
def _vapid(private_key: str) -> Vapid:
    return Vapid.from_string(private_key)


def public_key() -> str:
    """The site's VAPID public key, as a browser's pushManager.subscribe takes it (the
    uncompressed point in base64url); "" when push is off."""
    if not enabled():
        return ""
    point = _vapid(settings.VAPID_PRIVATE_KEY).public_key.public_bytes(
        encoding=Encoding.X962, format=PublicFormat.UncompressedPoint
    )
    return base64.urlsafe_b64encode(point).rstrip(b"=").decode()


# --- which endpoints the site posts to -----------------------------------------------------


def is_public(address: str) -> bool:
    """Whether an IP address is on the public internet: not private, loopback,
    link-local, multicast, reserved, unspecified or shared (nor one of those inside an
    IPv6 form)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if inner is not None and not is_public(str(inner)):
            return False
    return ip.is_global and not ip.is_multicast


def resolve(host: str, port: int) -> list[str]:
    """Every address the name resolves to (tests replace this: no test resolves a name
    outside this machine)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def public_addresses(host: str, port: int) -> list[str]:
    """The host's addresses, if every one is public; EndpointRefused otherwise (a name
    with one private address among public ones is refused whole: the site cannot choose
    which one a resolver hands out next)."""
    try:
        addresses = resolve(host, port)
    except (OSError, UnicodeError):
        raise EndpointRefused(_("The push service's host cannot be found.")) from None
    if not addresses or not all(is_public(a) for a in addresses):
        raise EndpointRefused(
            _("The push service's host is not on the public internet: the site posts only there.")
        )
    return addresses


def check_endpoint(url: str) -> str:
    """The endpoint, if the site may post to it: https, port 443, a public DNS name whose
    addresses are all public; EndpointRefused (with the reason in words) otherwise."""
    if not isinstance(url, str) or not url or len(url) > MAX_ENDPOINT:
        raise EndpointRefused(_("A push subscription needs its endpoint, a web address."))
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise EndpointRefused(_("The push endpoint is not a web address.")) from None
    if parts.scheme != "https":
        raise EndpointRefused(_("A push endpoint must use https."))
    if parts.username is not None or parts.password is not None:
        raise EndpointRefused(_("A push endpoint may not carry a user name or password."))
    if port not in (None, 443):
        raise EndpointRefused(_("A push endpoint must use the standard https port."))
    host = (parts.hostname or "").rstrip(".")
    if _is_ip_literal(host):
        raise EndpointRefused(_("A push endpoint must name its host, not an IP address."))
    if not HOST_NAME.match(host):
        raise EndpointRefused(_("The push endpoint's host is not a public host name."))
    public_addresses(host, 443)
    return url


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _key_bytes(value: object, length: int) -> bool:
    """Whether `value` is base64url of `length` bytes (a browser's key or secret)."""
    if not isinstance(value, str) or len(value) > 200:
        return False
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        return False
    return len(raw) == length


def subscribe(user: User, data: object) -> PushSubscription:
    """Store a browser's subscription (PushSubscription.toJSON() of the page), checked:
    EndpointRefused, saying why, and nothing stored, if any part will not do."""
    given: dict[str, Any] = data if isinstance(data, dict) else {}
    endpoint = check_endpoint(str(given.get("endpoint") or ""))
    found = given.get("keys")
    keys: dict[str, Any] = found if isinstance(found, dict) else {}
    p256dh, auth = keys.get("p256dh"), keys.get("auth")
    if not (isinstance(p256dh, str) and _key_bytes(p256dh, 65)) or not (
        isinstance(auth, str) and _key_bytes(auth, 16)
    ):
        raise EndpointRefused(_("The browser's push subscription has no valid keys."))
    subscription, _created = PushSubscription.objects.update_or_create(
        endpoint=endpoint, defaults={"user": user, "p256dh": p256dh, "auth": auth}
    )
    mine = PushSubscription.objects.filter(user=user).order_by("-created_at", "-pk")
    PushSubscription.objects.filter(
        pk__in=list(mine.values_list("pk", flat=True)[MAX_SUBSCRIPTIONS:])
    ).delete()
    return subscription


def unsubscribe(user: User, endpoint: object) -> int:
    """Forget one browser's subscription of the person; how many were forgotten."""
    if not isinstance(endpoint, str):
        return 0
    return PushSubscription.objects.filter(user=user, endpoint=endpoint).delete()[0]


def choice_of(user: User | None) -> str:
    """What the person chose (PushChoice), OFF when the site offers no push."""
    if user is None or not enabled():
        return PushChoice.OFF
    notifications = getattr(user, "notifications", None)
    return notifications.push if notifications else PushChoice.OFF


def wanted(user: User | None) -> str:
    """OFF, ALSO or INSTEAD: what a "waits for you" to the person does by push (OFF
    while they have no browser subscribed)."""
    choice = choice_of(user)
    if choice == PushChoice.OFF or user is None:
        return PushChoice.OFF
    return choice if PushSubscription.objects.filter(user=user).exists() else PushChoice.OFF


# --- sending -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Payload:
    """What a push shows: a title, a line, the page it opens, and a tag (a newer push of
    the same game replaces an older one on the screen)."""

    title: str
    body: str
    url: str
    tag: str

    def as_text(self) -> str:
        return json.dumps(self.__dict__, ensure_ascii=False)


class PushUnreachable(OSError):
    """No push service could be reached this time: the outbox retries with back-off."""


def deliver(email: OutgoingEmail) -> str:
    """Send a "push" row of the outbox to every browser its person subscribed; what
    happened, in a line for the row. Subscriptions the push service forgot, or whose
    host is no longer public, are deleted. PushUnreachable if every one failed for now."""
    subscriptions = list(PushSubscription.objects.filter(user=email.user_id))
    sent, later = 0, 0
    for subscription in subscriptions:
        outcome = _push(subscription, email.text)
        sent += outcome == "sent"
        later += outcome == "later"
    if later and not sent:
        raise PushUnreachable(f"no push service answered ({later} subscriptions)")
    return f"pushed to {sent} of {len(subscriptions)} subscriptions"


def _push(subscription: PushSubscription, data: str) -> str:
    """One push: "sent", "gone" (the subscription is deleted) or "later"."""
    info = {
        "endpoint": subscription.endpoint,
        "keys": {"p256dh": subscription.p256dh, "auth": subscription.auth},
    }
    try:
        webpush(
            info,
            data=data,
            vapid_private_key=_vapid(settings.VAPID_PRIVATE_KEY),
            vapid_claims={"sub": settings.VAPID_SUBJECT},
            ttl=PUSH_TTL,
            timeout=settings.PUSH_TIMEOUT_SECONDS,
            requests_session=guarded_session(),
        )
    except EndpointRefused as refused:  # at the socket: the host's name now points inside
        log.warning("push subscription %s refused: %s", subscription.pk, refused)
        subscription.delete()
        return "gone"
    except WebPushException as exc:
        if _is_lasting(exc.status_code):
            log.info("push subscription %s dropped: %s", subscription.pk, exc.status_code)
            subscription.delete()
            return "gone"
        log.warning("push subscription %s: %s", subscription.pk, exc.status_code)
        return "later"
    except requests.RequestException as exc:
        log.warning("push subscription %s unreachable: %s", subscription.pk, exc)
        return "later"
    return "sent"


def _is_lasting(status: int | None) -> bool:
    """A push service's refusal that another try would get again: the subscription is
    gone (404, 410) or will not do (a redirect, a bad request, a key it does not know);
    not "too many requests" (429) nor its own trouble (5xx)."""
    return status is not None and status < 500 and status != 429


# --- the connection: only to a checked public address --------------------------------------


class GuardedConnection(HTTPSConnection):
    """An https connection that resolves its host itself and connects only to a public
    address of it (`public_addresses`): EndpointRefused before a byte is sent to any
    other. TLS still checks the certificate against the host's name."""

    def _new_conn(self) -> socket.socket:
        addresses = public_addresses(self.host, self.port)
        last: OSError | None = None
        for address in addresses:
            try:
                return urllib3_connection.create_connection(
                    (address, self.port),
                    self.timeout,
                    source_address=self.source_address,
                    socket_options=self.socket_options,
                )
            except OSError as exc:
                last = exc
        raise last or OSError(f"no address of {self.host} answered")


class GuardedPool(HTTPSConnectionPool):
    ConnectionCls = GuardedConnection


class GuardedAdapter(HTTPAdapter):
    """requests' adapter whose https connections are `GuardedConnection`s."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"https": GuardedPool}


class GuardedSession(requests.Session):
    """A session that posts over https only, through `GuardedAdapter`, follows no
    redirect and ignores the environment's proxies."""

    def __init__(self) -> None:
        super().__init__()
        self.trust_env = False
        self.adapters.clear()
        self.mount("https://", GuardedAdapter())

    def request(self, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs["allow_redirects"] = False
        return super().request(*args, **kwargs)


def guarded_session() -> requests.Session:
    return GuardedSession()
