"""Property tests over every form of the site (issue 9): any dict of strings (huge, control
characters, NUL, dates at the calendar's edges) makes `is_valid()` answer, never raise,
with errors that are strings; what a form accepts can be saved (no NUL reaches
PostgreSQL); and random POSTs to the views give no 500 and change nothing when refused.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.forms import CreateGameForm, JoinForm, ProfileForm, SignupForm
from games.mail.forms import InviteByEmailForm, NotificationsForm
from games.models import Game, Notifications, PendingSubmission, Profile
from games.play_forms import FORMS, EndAllianceForm, MoveTextForm
from games.show.presenter import present
from games.views.deadlines import ProposeForm, VoteForm

PROPERTY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

TRICKY = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "a\x00b",
        "\r\n",
        "\u202e",
        "0001-01-01",
        "0001-01-01T00:00",
        "9999-12-31",
        "9999-12-31T23:59",
        "10000-01-01",
        "-1",
        "0",
        "99999999999999999999",
        "1e309",
        "NaN",
        "red",
        "decide 1, 3",
        "pass",
        "<script>",
        "a@b.c",
        "x" * 100_000,
    ]
)
TEXT = st.one_of(
    TRICKY,
    st.text(max_size=300),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x1F), max_size=20),
)
FIELDS = [
    "name",
    "player_count",
    "setup",
    "decisions",
    "money",
    "deadline_hours",
    "on_absence",
    "max_missed_deadlines",
    "invite_only",
    "colour",
    "computer_colours",
    "username",
    "email",
    "password1",
    "password2",
    "display_name",
    "time_zone",
    "mode",
    "reminder_hours",
    "away_from",
    "away_until",
    "addresses",
    "hours",
    "kind",
    "amount",
    "vote",
    "form",
    "move",
    "cards",
    "card",
    "ducats",
    "treasure",
    "walls",
    "steps",
    "cell",
    "cells",
    "pile",
    "own",
    "other",
    "offer",
]
DATA = st.dictionaries(st.sampled_from(FIELDS), TEXT, max_size=12)


def answers(form: Any) -> None:
    """`is_valid()` answers; every error is a string."""
    form.is_valid()
    for errors in form.errors.values():
        assert all(isinstance(message, str) for message in errors)


def no_nul(form: Any) -> None:
    """What a valid form hands on holds no NUL, which PostgreSQL refuses to store."""
    if form.is_valid():
        assert "\x00" not in repr(form.cleaned_data)


@PROPERTY
@given(data=DATA)
def test_the_lobby_and_account_forms_answer_anything(game, alice, data):
    for form in (
        CreateGameForm(data),
        JoinForm(game, data),
        SignupForm(data),
        ProfileForm(data, instance=Profile.objects.get(user=alice)),
        InviteByEmailForm(data),
        ProposeForm(data),
        VoteForm(data),
    ):
        answers(form)
        no_nul(form)


@PROPERTY
@given(data=DATA)
def test_the_notifications_form_answers_anything(alice, data):
    notifications, _ = Notifications.objects.get_or_create(user=alice)
    form = NotificationsForm(data, instance=notifications)
    answers(form)
    no_nul(form)
    if form.is_valid():
        form.save()  # what it accepts, PostgreSQL and the sweeper take


@PROPERTY
@given(data=DATA)
def test_the_play_forms_answer_anything(game, alice, data):
    v = present(game, game.seats.get(user=alice)).view
    assert v is not None
    for form_class in [*FORMS.values(), MoveTextForm, EndAllianceForm]:
        form = form_class(data, view=v, action="")
        answers(form)
        if form.is_valid() and not isinstance(form, MoveTextForm):  # text: parsed apart
            form.submission()


# --- through the views ---------------------------------------------------------------------


def snapshot(user: User) -> tuple[Any, ...]:
    return (
        Game.objects.count(),
        PendingSubmission.objects.count(),
        list(
            Notifications.objects.filter(user=user).values_list(
                "mode", "reminder_hours", "away_from", "away_until"
            )
        ),
        list(Profile.objects.filter(user=user).values_list("display_name", "time_zone")),
        list(User.objects.filter(pk=user.pk).values_list("email", "password")),
    )


FORM_PAGES = ["create_game", "email_preferences", "profile"]


@PROPERTY
@given(data=DATA)
@pytest.mark.parametrize("name", FORM_PAGES)
def test_random_posts_to_a_form_page_are_no_500_and_a_refusal_changes_nothing(alice, name, data):
    Notifications.objects.get_or_create(user=alice)  # the page makes it on first sight
    client = Client()
    client.force_login(alice)
    before = snapshot(alice)
    response = client.post(reverse(name), data)
    assert response.status_code < 500
    if response.status_code == 200:  # the form again, with its errors
        assert snapshot(alice) == before


@PROPERTY
@given(data=DATA)
@pytest.mark.parametrize("name", ["submit", "propose", "vote", "join_game"])
def test_random_posts_to_the_game_views_are_no_500(game, alice, name, data):
    client = Client()
    client.force_login(alice)
    response = client.post(reverse(name, args=[game.pk]), data)
    assert response.status_code < 500
