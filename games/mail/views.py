"""The pages behind the links in emails: magic links that sign a player in on their
game, one-click unsubscribe, email preferences (and the browsers that get push
notifications), and inviting people by email."""

from __future__ import annotations

import functools
import json
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from games.limits import per_period, spend
from games.mail import compose, notify, outbox, push, tokens
from games.mail.forms import InviteByEmailForm, NotificationsForm
from games.middleware import scope_of, scope_session
from games.models import (
    EmailPreference,
    Game,
    MagicLink,
    Notifications,
    OutgoingEmail,
    PushSubscription,
)
from games.show.words import sentence
from games.visibility import visible_game

LINK_PROBLEMS = {
    "tampered": _(
        "This link is not valid: it may have been cut short or changed on its way from the email."
    ),
    "used": _("This link has been used already: a link from an email signs you in once."),
    "expired": _("This link has expired: a link from an email works for a few days only."),
    "stale": _(
        "This link was for an earlier phase of the game, and the game has moved on "
        "since: there may be something new to do."
    ),
    "inactive": _("This account is disabled."),
}
INVITATIONS_PER_GAME = 50  # enough to fill any game; more is spam
MAGIC_SESSION_HOURS = 6  # a magic link's session: long enough to think over one move


# --- magic links ------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def magic_link(request: HttpRequest, signed: str) -> HttpResponse:
    """GET asks to continue and uses nothing (mail scanners and previews follow GETs);
    POST signs the player in for this game and phase only (games.middleware), once."""
    nonce = tokens.magic_nonce(signed)
    link = (
        MagicLink.objects.select_related("game", "user").filter(nonce=nonce).first()
        if nonce
        else None
    )
    if link is None and nonce and tokens.is_past_expiry(signed):
        return _link_problem(request, "expired", None, status=410)  # its row is tidied away
    if link is None:
        return _link_problem(request, "tampered", None, status=400)
    if _signed_in_fully_as(request, link.user_id):
        return redirect("game", link.game_id)  # the account's own session: nothing to add
    problem = link_problem(link)
    if problem is None and request.method == "POST" and not _use(link):
        problem = "used"
    if problem:
        return _link_problem(request, problem, link, status=410)
    if request.method != "POST":
        return render(request, "mail/magic_link.html", {"link": link, "signed": signed})
    login(request, link.user, backend="django.contrib.auth.backends.ModelBackend")
    until = min(link.expires_at, timezone.now() + timedelta(hours=MAGIC_SESSION_HOURS))
    scope_session(request.session, link.game_id, link.phase_number, until)
    return redirect("game", link.game_id)


def _signed_in_fully_as(request: HttpRequest, user_id: int) -> bool:
    return (
        request.user.is_authenticated and request.user.pk == user_id and scope_of(request) is None
    )


def link_problem(link: MagicLink) -> str | None:
    if link.used_at is not None:
        return "used"
    if link.expires_at <= timezone.now():
        return "expired"
    if link.game.status != Game.Status.RUNNING or link.game.phase_number != link.phase_number:
        return "stale"
    if not link.user.is_active:
        return "inactive"
    return None


def _use(link: MagicLink) -> bool:
    # One conditional UPDATE: of two clicks at once, only one signs in.
    return MagicLink.objects.filter(pk=link.pk, used_at=None).update(used_at=timezone.now()) == 1


def _link_problem(
    request: HttpRequest, problem: str, link: MagicLink | None, status: int
) -> HttpResponse:
    game_url = reverse("game", args=[link.game_id]) if link else ""
    signed_in = (
        link is not None and request.user.is_authenticated and request.user.pk == link.user_id
    )
    login_url = reverse("login") + (f"?{urlencode({'next': game_url})}" if game_url else "")
    return render(
        request,
        "mail/link_problem.html",
        {
            "problem": problem,
            "message": LINK_PROBLEMS[problem],
            "game_url": game_url,
            "game": link.game if link else None,
            "signed_in": signed_in,
            "login_url": login_url,
        },
        status=status,
    )


# --- unsubscribing ----------------------------------------------------------------------------


@csrf_exempt  # RFC 8058: mail providers POST "List-Unsubscribe=One-Click" without a token
@require_http_methods(["GET", "HEAD", "POST"])
def unsubscribe(request: HttpRequest, signed: str) -> HttpResponse:
    """GET asks to confirm (link checkers and previews follow GETs); POST unsubscribes."""
    user_id = outbox.unsubscribe_user_id(signed)
    user = User.objects.filter(pk=user_id).first() if user_id is not None else None
    if user is None:
        return render(request, "mail/unsubscribe.html", {"invalid": True}, status=400)
    if request.method == "POST":
        Notifications.objects.update_or_create(user=user, defaults={"mode": EmailPreference.OFF})
        return render(request, "mail/unsubscribe.html", {"done": True})
    # No address on the page: whoever holds a forwarded email learns nothing from it.
    return render(request, "mail/unsubscribe.html", {"signed": signed})


# --- preferences ------------------------------------------------------------------------------


@login_required
def preferences(request: HttpRequest) -> HttpResponse:
    assert request.user.is_authenticated  # login_required
    notifications, _ = Notifications.objects.get_or_create(user=request.user)
    form = NotificationsForm(
        request.POST if request.method == "POST" else None, instance=notifications
    )
    if form.is_valid():
        form.save()
        messages.success(request, gettext("Your email preferences are saved."))
        return redirect("email_preferences")
    context = {
        "form": form,
        "push_key": push.public_key(),
        "push_devices": PushSubscription.objects.filter(user=request.user).count(),
    }
    return render(request, "mail/preferences.html", context)


# --- push notifications (games.mail.push) ---------------------------------------------------

PUSH_BODY_LIMIT = 4096  # a subscription is a few hundred bytes


@login_required
@require_POST
def push_subscribe(request: HttpRequest) -> HttpResponse:
    """A browser's push subscription (its PushSubscription.toJSON(), posted by
    games/static/games/push.js), stored if its endpoint is one the site may post to;
    a 400 whose "error" says why otherwise, and nothing stored."""
    assert request.user.is_authenticated  # login_required
    try:
        push.subscribe(request.user, _json_body(request))
    except push.EndpointRefused as refused:
        return JsonResponse({"error": str(refused)}, status=400)
    return JsonResponse({"ok": True})


@login_required
@require_POST
def push_unsubscribe(request: HttpRequest) -> HttpResponse:
    """Forget this browser's subscription ({"endpoint": ...})."""
    assert request.user.is_authenticated  # login_required
    body = _json_body(request)
    endpoint = body.get("endpoint") if isinstance(body, dict) else None
    forgotten = push.unsubscribe(request.user, endpoint)
    return JsonResponse({"ok": True, "forgotten": forgotten})


def _json_body(request: HttpRequest) -> object:
    """The request's JSON, or None if it is too long or not JSON."""
    if len(request.body) > PUSH_BODY_LIMIT:
        return None
    try:
        return json.loads(request.body)
    except ValueError:
        return None


@require_safe
def service_worker(request: HttpRequest) -> HttpResponse:
    """The service worker that shows a push (games/static/games/sw.js), served from the
    site's root: its scope is the whole site, so a push opens any game's page."""
    response = HttpResponse(_service_worker_text(), content_type="text/javascript")
    response["Cache-Control"] = "no-cache"  # a new version reaches the browsers at once
    return response


@functools.cache
def _service_worker_text() -> str:
    path = finders.find("games/sw.js")
    assert isinstance(path, str), "games/static/games/sw.js is missing"
    return Path(path).read_text(encoding="utf-8")


# --- invitations by email ---------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def invite_by_email(request: HttpRequest, game_id: int) -> HttpResponse:
    assert request.user.is_authenticated  # login_required
    game = visible_game(request, Game.objects.all(), pk=game_id)  # private: 404 to others
    if game.seat_for(request.user) is None:
        raise PermissionDenied(gettext("Only the players of a game invite others to it."))
    if game.status != Game.Status.OPEN:
        messages.error(request, gettext("This game has started; its seats are taken."))
        return redirect("game", game.pk)
    form = InviteByEmailForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        try:
            invited = invite(game, form.cleaned_data["addresses"], request.user)
        except ValueError as exc:
            form.add_error("addresses", sentence(exc))
        else:
            messages.success(
                request,
                gettext("Invitations are on their way to %(addresses)s.")
                % {"addresses": ", ".join(invited)}
                if invited
                else gettext("Everyone on the list was invited already."),
            )
            return redirect("invite", game.invite_token)
    return render(request, "mail/invite_by_email.html", {"form": form, "game": game})


def invite(game: Game, addresses: list[str], inviter: User) -> list[str]:
    """Queue an invitation to each address not invited to this game before, within the
    inviter's daily allowance over all games (settings.RATE_LIMITS["invitation"])."""
    earlier = OutgoingEmail.objects.filter(kind="invitation", game=game)
    known = {a.lower() for a in earlier.values_list("to", flat=True)}
    known |= {e.lower() for e in game.seats.values_list("user__email", flat=True) if e}
    new = [a for a in addresses if a.lower() not in known]
    if earlier.count() + len(new) > INVITATIONS_PER_GAME:
        raise ValueError(
            gettext("a game sends at most %(count)s invitations") % {"count": INVITATIONS_PER_GAME}
        )
    for done, address in enumerate(new):
        if not spend("invitation", f"user:{inviter.pk}"):
            raise ValueError(over_the_daily_invitations(new[:done], new[done:]))
        compose.invitation(game, address, inviter)
    return new


def over_the_daily_invitations(sent: list[str], unsent: list[str]) -> str:
    values = {
        "limit": per_period("invitation"),
        "unsent": ", ".join(unsent),
        "sent": ", ".join(sent),
    }
    if sent:
        return (
            gettext(
                "you have sent as many invitations as one person may (%(limit)s); "
                "not sent to %(unsent)s (sent to %(sent)s); try again later"
            )
            % values
        )
    return (
        gettext(
            "you have sent as many invitations as one person may (%(limit)s); "
            "not sent to %(unsent)s; try again later"
        )
        % values
    )


# --- muting one game --------------------------------------------------------------------------


@require_http_methods(["GET", "HEAD", "POST"])
def mute_game(request: HttpRequest, game_id: int) -> HttpResponse:
    """Mute (or unmute) one game's emails: from the game's page (signed in), or from the
    link in its emails (`?s=`, signed for one person and game). GET only asks (mail
    scanners follow links); POST does it.

    A link signed for this game was emailed to one of its players, and works without a
    session; anyone else sees the game only if they may (`visible_game`): a private
    game's page is 404 to others, as if it did not exist (ids are sequential)."""
    signed = request.POST.get("s") or request.GET.get("s") or ""
    user_id = outbox.mute_user_id(signed, game_id) if signed else None
    game = (
        get_object_or_404(Game, pk=game_id)
        if user_id is not None
        else visible_game(request, Game.objects.all(), pk=game_id)
    )
    if not signed and request.user.is_authenticated:
        user_id = request.user.pk
    elif not signed:
        game_url = reverse("game", args=[game.pk])
        return redirect(f"{reverse('login')}?{urlencode({'next': game_url})}")
    seat = game.seats.filter(user_id=user_id).first() if user_id is not None else None
    if seat is None:
        return render(request, "mail/mute.html", {"game": game, "invalid": True}, status=400)
    if request.method != "POST":
        return render(
            request, "mail/mute.html", {"game": game, "signed": signed, "muted": seat.mail_muted}
        )
    muted = request.POST.get("muted", "on") != "off"
    notify.set_muted(seat, muted)
    if signed:
        return render(request, "mail/mute.html", {"game": game, "done": True, "muted": muted})
    messages.success(
        request,
        gettext("This game's emails are muted: only its final scores will come.")
        if muted
        else gettext("This game's emails come again."),
    )
    return redirect("game", game.pk)
