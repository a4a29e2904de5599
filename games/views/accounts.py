"""Signing up and editing one's profile; logging in and out and resetting a password
are Django's own views (lowenherz_site/urls.py) with our templates."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from games.forms import ProfileForm, SignupForm


def safe_next(request: HttpRequest) -> str:
    """Where to go after signing up (e.g. back to an invite), if it is on this site."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                       require_https=request.is_secure()):
        return target
    return ""


def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        login(request, form.save())
        messages.success(request, "Welcome! Create a game or join one.")
        return redirect(safe_next(request) or "lobby")
    return render(request, "registration/signup.html", {"form": form, "next": safe_next(request)})


@login_required
def profile(request: HttpRequest) -> HttpResponse:
    assert request.user.is_authenticated  # login_required
    form = ProfileForm(request.POST if request.method == "POST" else None,
                       instance=request.user.profile)
    if form.is_valid():
        form.save()
        messages.success(request, "Your profile is saved.")
        # A redirect, so the next page is already shown in the new time zone.
        return redirect("profile")
    return render(request, "registration/profile.html", {"form": form})
