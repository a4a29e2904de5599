"""Signing up (confirmed by a link emailed to the address), editing one's profile, and
asking for a password reset under rate limits; logging in and out and the reset itself
are Django's own views (lowenherz_site/urls.py) with our templates."""

from __future__ import annotations

from urllib.parse import urlencode

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
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.encoding import force_bytes
from django.utils.http import (
    url_has_allowed_host_and_scheme,
    urlsafe_base64_decode,
    urlsafe_base64_encode,
)
from django.views.decorators.http import require_http_methods
from django_ratelimit.decorators import ratelimit

from games import signals
from games.forms import ProfileForm, SignupForm, is_username_taken
from games.limits import rate_of

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def safe_next(request: HttpRequest) -> str:
    """Where to go after signing up (e.g. back to an invite), if it is on this site."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                       require_https=request.is_secure()):
        return target
    return ""


# --- signing up ----------------------------------------------------------------------------


@ratelimit(group="lowenherz.signup", key="ip", rate=rate_of("signup"), method="POST",
           block=True)
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
                    sender=User, email=email, username=user.get_username(),
                    signup_url=_signup_url(safe_next(request)))
            else:
                signals.signup_started.send(sender=User, user=user,
                                            confirm_url=confirm_url(user, safe_next(request)))
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
    return settings.SITE_URL + reverse("signup") + (
        f"?{urlencode({'next': next_page})}" if next_page else "")


def _owner_of(email: str) -> User | None:
    """The account with this address. A signup never confirmed gives way: whoever opens
    the newest link owns the address, so nobody can hold another's address hostage."""
    User.objects.filter(email__iexact=email, is_active=False, last_login=None).delete()
    return User.objects.filter(email__iexact=email).first()


def confirm_url(user: User, next_page: str) -> str:
    path = reverse("signup_confirm", args=[urlsafe_base64_encode(force_bytes(user.pk)),
                                           default_token_generator.make_token(user)])
    return settings.SITE_URL + path + (f"?{urlencode({'next': next_page})}" if next_page else "")


@require_http_methods(["GET", "POST"])
def signup_confirm(request: HttpRequest, uidb64: str, token: str) -> HttpResponse:
    """GET asks to continue (mail scanners follow GETs); POST opens the account and signs
    in. The token changes with the first login, so the link works once."""
    user = _user_of(uidb64)
    if user is None or user.is_active or not default_token_generator.check_token(user, token):
        return render(request, "registration/signup_confirm.html", {"invalid": True},
                      status=410)
    if request.method != "POST":
        return render(request, "registration/signup_confirm.html",
                      {"username": user.get_username(), "next": safe_next(request)})
    user.is_active = True
    user.save(update_fields=["is_active"])
    login(request, user, backend=MODEL_BACKEND)
    messages.success(request, "Welcome! Create a game or join one.")
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
    old_email = user.email
    form = ProfileForm(request.POST if request.method == "POST" else None,
                       instance=user.profile)
    if form.is_valid():
        changed = form.email_changes()
        form.save()
        if changed:
            signals.email_changed.send(sender=User, user=user, old_email=old_email)
            messages.info(request, f"Your email is now {user.email}; {old_email} was told.")
        messages.success(request, "Your profile is saved.")
        # A redirect, so the next page is already shown in the new time zone.
        return redirect("profile")
    return render(request, "registration/profile.html", {"form": form})


# --- asking for a password reset -------------------------------------------------------------


def _reset_address(group: str, request: HttpRequest) -> str:
    return request.POST.get("email", "").strip().lower()


@method_decorator(ratelimit(group="lowenherz.password_reset.ip", key="ip",
                            rate=rate_of("password_reset"), method="POST", block=False),
                  name="dispatch")
@method_decorator(ratelimit(group="lowenherz.password_reset.email", key=_reset_address,
                            rate=rate_of("password_reset"), method="POST", block=False),
                  name="dispatch")
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
