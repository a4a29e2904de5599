"""Signing up (confirmed by a link emailed to the address), editing one's profile (a new
email confirmed the same way), and asking for a password reset under rate limits; logging
in and out and the reset itself are Django's own views (lowenherz_site/urls.py) with our
templates."""

from __future__ import annotations

from datetime import timedelta

from axes.helpers import get_client_ip_address
from axes.utils import reset as axes_reset
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordResetForm, SetPasswordForm
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.core import signing
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.utils.encoding import force_bytes
from django.utils.http import (
    url_has_allowed_host_and_scheme,
    urlsafe_base64_decode,
    urlsafe_base64_encode,
)
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views import i18n
from django.views.decorators.http import require_http_methods, require_POST
from django_ratelimit.decorators import ratelimit

from games import signals
from games.forms import ProfileForm, SignupForm, is_username_taken
from games.limits import per_period, rate_of, spend
from games.links import absolute_url
from games.models import Profile
from games.views.feeds import feed_of

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def safe_next(request: HttpRequest) -> str:
    """Where to go after signing up (e.g. back to an invite), if it is on this site."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return ""


# --- signing up ----------------------------------------------------------------------------


@ratelimit(group="lowenherz.signup", key="ip", rate=rate_of("signup"), method="POST", block=True)
def signup(request: HttpRequest) -> HttpResponse:
    """Every accepted form ends on the same "check your email" page, so that the page
    never tells whether an address or a username has an account: a new account waits for
    its emailed link; an address with an account gets an email saying so; an address
    that asked for a taken username is told so, and to choose another. Nothing is made
    then. Learning whether a name exists costs a signup (its rate limit) and a mailbox."""
    form = SignupForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        email = form.cleaned_data["email"]
        user = form.save(commit=False)  # hashed on every way: each takes as long
        with transaction.atomic():
            owner = _owner_of(email)
            if owner is not None:
                signals.signup_with_taken_email.send(sender=User, user=owner)
            elif not _saved(form, user):
                signals.signup_with_taken_name.send(
                    sender=User,
                    email=email,
                    username=user.get_username(),
                    signup_url=_signup_url(safe_next(request)),
                )
            else:
                signals.signup_started.send(
                    sender=User, user=user, confirm_url=confirm_url(user, safe_next(request))
                )
        return render(request, "registration/signup_sent.html", {"email": email})
    return render(request, "registration/signup.html", {"form": form, "next": safe_next(request)})


def _saved(form: SignupForm, user: User) -> bool:
    """Save the new account, unless its username is taken (in any case: "Alice" is
    "alice"), also by a signup that saved it a moment ago (the unique constraint)."""
    if is_username_taken(user.get_username()):
        return False
    try:
        with transaction.atomic():
            form.save_new(user)
    except IntegrityError:
        return False
    return True


def _signup_url(next_page: str) -> str:
    return absolute_url("signup", query={"next": next_page} if next_page else None)


def _owner_of(email: str) -> User | None:
    """The account with this address. A signup never confirmed gives way: whoever opens
    the newest link owns the address, so nobody can hold another's address hostage."""
    User.objects.filter(email__iexact=email, is_active=False, last_login=None).delete()
    return User.objects.filter(email__iexact=email).first()


def confirm_url(user: User, next_page: str) -> str:
    path = reverse(
        "signup_confirm",
        args=[
            urlsafe_base64_encode(force_bytes(user.pk)),
            default_token_generator.make_token(user),
        ],
    )
    return absolute_url(path, query={"next": next_page} if next_page else None)


@require_http_methods(["GET", "POST"])
def signup_confirm(request: HttpRequest, uidb64: str, token: str) -> HttpResponse:
    """GET asks to continue (mail scanners follow GETs); POST opens the account and signs
    in. The token changes with the first login, so the link works once."""
    user = _user_of(uidb64)
    if user is None or user.is_active or not default_token_generator.check_token(user, token):
        return render(request, "registration/signup_confirm.html", {"invalid": True}, status=410)
    if request.method != "POST":
        return render(
            request,
            "registration/signup_confirm.html",
            {"username": user.get_username(), "next": safe_next(request)},
        )
    user.is_active = True
    user.save(update_fields=["is_active"])
    login(request, user, backend=MODEL_BACKEND)
    messages.success(request, gettext("Welcome! Create a game or join one."))
    return redirect(safe_next(request) or "lobby")


def _user_of(uidb64: str) -> User | None:
    try:
        pk = int(urlsafe_base64_decode(uidb64).decode())
    except (ValueError, UnicodeDecodeError):
        return None
    return User.objects.filter(pk=pk).first()


# --- the profile ---------------------------------------------------------------------------


@login_required
def profile(request: HttpRequest) -> HttpResponse:
    assert request.user.is_authenticated  # login_required
    user = request.user
    form = ProfileForm(request.POST if request.method == "POST" else None, instance=user.profile)
    if form.is_valid():
        new_email = form.cleaned_data["email"] if form.email_changes() else ""
        if new_email and not spend("email_change", f"user:{user.pk}"):
            form.add_error("email", over_the_email_changes())
            return render(request, "registration/profile.html", _profile_context(form))
        form.save()
        if new_email:
            ask_email_change(user, new_email)
            messages.info(
                request,
                gettext(
                    "A link is on its way to %(new)s: your email changes once you open it, "
                    "signed in as now. Until then it stays %(old)s, which was told."
                )
                % {"new": new_email, "old": user.email},
            )
        messages.success(request, gettext("Your profile is saved."))
        # A redirect, so the next page is already shown in the new time zone.
        return redirect("profile")
    return render(request, "registration/profile.html", _profile_context(form))


def _profile_context(form: ProfileForm) -> dict[str, object]:
    profile = form.instance
    asked = profile.pending_email_at
    waiting = (
        bool(profile.pending_email)
        and asked is not None
        and asked > timezone.now() - timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT)
    )
    return {
        "form": form,
        "pending_email": profile.pending_email if waiting else "",
        "calendar_url": absolute_url("calendar", feed_of(profile.user).token),
    }


def over_the_email_changes() -> str:
    return gettext(
        "You have asked to change your email as often as one may (%(limit)s); "
        "nothing was changed or sent. Try again later."
    ) % {"limit": per_period("email_change")}


# --- changing the email: it takes effect once proven from the new address -------------------
#
# `User.email` is always an address its owner proved: a signup's by the link that opens the
# account, a new one by the link mailed to it, opened while signed in to the account (not
# the link alone: an address mistyped into someone else's mailbox must not take the
# account, and with it every password reset). Emails, the inbound sender check and the
# invitations to invite-only games (games.views.lobby) trust it for that.

EMAIL_CHANGE_SALT = "lowenherz.email-change"
EMAIL_LINK_PROBLEMS = {
    "invalid": _(
        "This link is not valid, or it was used or replaced already: the email "
        "changes with the newest link asked for, once."
    ),
    "expired": _("This link has expired: ask for the change again on your profile."),
    "other_account": _(
        "This link is for another account: log out, and log in as the "
        "account that asked for the change."
    ),
    "taken": _("Another account has this email address now; your email was not changed."),
}


def ask_email_change(user: User, new_email: str) -> None:
    """Keep the new address waiting and mail it its link; tell the old one. An address
    another account has gets no link, only word that nothing changed: the page looks the
    same, so that it does not tell which addresses have accounts."""
    Profile.objects.filter(user=user).update(
        pending_email=new_email, pending_email_at=timezone.now()
    )
    holder = _holder_of(new_email, other_than=user)
    signals.email_change_asked.send(
        sender=User,
        user=user,
        new_email=new_email,
        confirm_url=_email_change_url(user, new_email),
        holder=holder,
    )


def _holder_of(email: str, other_than: User) -> User | None:
    """The other account with this address; a signup never confirmed holds none."""
    return (
        User.objects.filter(email__iexact=email)
        .exclude(pk=other_than.pk)
        .exclude(is_active=False, last_login=None)
        .first()
    )


def _email_change_url(user: User, new_email: str) -> str:
    # The old address is in it, so that the link dies with the change it makes.
    signed = signing.dumps(
        {"u": user.pk, "from": user.email.lower(), "to": new_email},
        salt=EMAIL_CHANGE_SALT,
        compress=True,
    )
    return absolute_url("email_confirm", signed)


def _asked_change(signed: str, user: User) -> tuple[str, str]:
    """(the new address, "") if the link makes a change this account waits for, else
    ("", the problem)."""
    try:
        asked = signing.loads(
            signed, salt=EMAIL_CHANGE_SALT, max_age=settings.PASSWORD_RESET_TIMEOUT
        )
    except signing.SignatureExpired:
        return "", "expired"
    except signing.BadSignature:
        return "", "invalid"
    if asked.get("u") != user.pk:
        return "", "other_account"
    pending = Profile.objects.filter(user=user).values_list("pending_email", flat=True)
    new_email = str(asked.get("to", ""))
    if (
        asked.get("from") != user.email.lower()
        or not new_email
        or new_email.lower() != (pending.first() or "").lower()
    ):
        return "", "invalid"
    return new_email, ""


@login_required
@require_http_methods(["GET", "POST"])
def email_confirm(request: HttpRequest, signed: str) -> HttpResponse:
    """GET asks (mail scanners follow GETs); POST makes the change, once."""
    assert request.user.is_authenticated  # login_required
    with transaction.atomic():
        user = User.objects.select_for_update().get(pk=request.user.pk)  # one click wins
        new_email, problem = _asked_change(signed, user)
        if not problem and request.method == "POST":
            problem = _change_email(user, new_email)
    if problem:
        return render(
            request,
            "registration/email_confirm.html",
            {"problem": EMAIL_LINK_PROBLEMS[problem]},
            status=410,
        )
    if request.method != "POST":
        return render(request, "registration/email_confirm.html", {"new_email": new_email})
    messages.success(request, gettext("Your email is now %(email)s.") % {"email": new_email})
    return redirect("profile")


def _change_email(user: User, new_email: str) -> str:
    """Make the change (the caller holds the user's row); "" or the problem."""
    Profile.objects.filter(user=user).update(pending_email="", pending_email_at=None)
    owner = _owner_of(new_email)  # a signup never confirmed gives way: this proved the address
    if owner is not None and owner.pk != user.pk:
        return "taken"
    old_email = user.email
    user.email = new_email
    user.save(update_fields=["email"])
    signals.email_changed.send(sender=User, user=user, old_email=old_email)
    return ""


# --- asking for a password reset -------------------------------------------------------------


def _reset_address(group: str, request: HttpRequest) -> str:
    return request.POST.get("email", "").strip().lower()


@method_decorator(
    ratelimit(
        group="lowenherz.password_reset.ip",
        key="ip",
        rate=rate_of("password_reset"),
        method="POST",
        block=False,
    ),
    name="dispatch",
)
@method_decorator(
    ratelimit(
        group="lowenherz.password_reset.email",
        key=_reset_address,
        rate=rate_of("password_reset"),
        method="POST",
        block=False,
    ),
    name="dispatch",
)
class PasswordResetView(auth_views.PasswordResetView):
    """Django's, with limits per address and per email address. Over one, the page is
    the same "done" page as ever (it must not tell), and no email goes out."""

    def form_valid(self, form: PasswordResetForm) -> HttpResponse:
        if getattr(self.request, "limited", False):
            return HttpResponseRedirect(self.get_success_url())
        return super().form_valid(form)


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """Django's; a new password set from the emailed link also lifts the login lockout of
    the account at this address: whoever reads the account's mail is its owner, even
    behind an address strangers share and locked (settings: AXES_LOCKOUT_PARAMETERS)."""

    def form_valid(self, form: SetPasswordForm) -> HttpResponse:
        response = super().form_valid(form)
        axes_reset(ip=get_client_ip_address(self.request), username=form.user.get_username())
        return response


# --- the language ----------------------------------------------------------------------------


@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    """The switcher on every page: Django's `set_language` (the cookie a visitor's pages
    follow, and back to `next`), and for a signed-in person their preference too, which
    their pages on every device and their emails follow. A language the site does not
    speak changes nothing."""
    response = i18n.set_language(request)
    language = request.POST.get("language", "")
    if request.user.is_authenticated and language in dict(settings.LANGUAGES):
        Profile.objects.filter(user=request.user).update(language=language)
    return response
