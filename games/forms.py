"""The site's forms: accounts, the profile, creating and joining games.

Forms check what a person typed and say clearly what is wrong; whether a game may
be created or joined is decided again by `games.services` under the game's lock.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from crispy_forms.bootstrap import InlineCheckboxes, InlineRadios
from crispy_forms.helper import FormHelper
from crispy_forms.layout import Layout
from django import forms
from django.conf import settings
from django.contrib.auth.forms import BaseUserCreationForm
from django.contrib.auth.models import User
from django.db import models
from django.utils import translation
from django.utils.functional import lazy
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from games.models import (
    COLOUR_CHOICES,
    COLOUR_LABELS,
    MESSAGE_CHARS,
    Game,
    Profile,
    Seat,
    colour_word,
)
from games.services import MAX_MISSED_DEADLINES
from games.show.rules_text import Citation, cite
from games.show.words import clean_text

MAX_DEADLINE_HOURS = 720  # 30 days: longer and a game is as good as abandoned

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


def _interpolate(message: StrOrPromise, values: dict[str, Any]) -> str:
    return str(message) % values


# A message with values known when the module loads (a limit), translated when shown:
# `interpolated(_("At most %(n)s."), {"n": 5})`.
interpolated = lazy(_interpolate, str)


def _help_with_rules(text: StrOrPromise, cites: tuple[Citation, ...]) -> SafeString:
    links = format_html_join(" ", "{}", ((citation.link(),) for citation in cites))
    return format_html("{} {}", text, links)


_lazy_help_with_rules = lazy(_help_with_rules, str)


def help_with_rules(text: StrOrPromise, *sections: str) -> StrOrPromise:
    """A field's help and links to the sections of the rules it explains, worded in the
    reader's language when drawn (the sections are checked now: `Citation`)."""
    return _lazy_help_with_rules(text, cite(*sections))


@cache
def time_zone_choices() -> list[tuple[str, str]]:
    return [(zone, zone) for zone in sorted(zoneinfo.available_timezones())]


def time_zone_field() -> forms.ChoiceField:
    return forms.ChoiceField(
        choices=time_zone_choices,
        initial="UTC",
        label=_("Time zone"),
        help_text=_("Every deadline is shown in this time zone."),
        error_messages={
            "invalid_choice": _(
                "%(value)s is not a time zone; choose one from the list, e.g. Europe/Berlin."
            )
        },
    )


def language_field() -> forms.ChoiceField:
    """The language of the person's pages and emails; a new person's first guess is the
    one their browser asks for (the page's own, `translation.get_language`)."""
    return forms.ChoiceField(
        choices=settings.LANGUAGES,
        initial=translation.get_language,
        required=False,  # a form sent without it keeps the language as it is
        label=_("Language"),
        help_text=_("Every page and every email of the site is written in this language."),
    )


def game_choices(field_name: str) -> Sequence[tuple[Any, Any]]:
    """The choices of one of `Game`'s fields (every field asked for has them)."""
    field = Game._meta.get_field(field_name)
    assert isinstance(field, models.Field) and field.choices is not None, field_name
    return field.choices


COLOUR_ERRORS = {
    "invalid_choice": _("%(value)s is not a colour; choose red, ochre, lilac or grey.")
}


def fields_only(*layout: Any) -> FormHelper:
    """A crispy helper for the fields alone: the template writes the form tag and its
    button, with the ids browser tests use. (A helper's form id would also be put on
    every radio group by crispy-bootstrap5, making ids repeat.)"""
    form_helper = FormHelper()
    form_helper.form_tag = False
    form_helper.disable_csrf = True  # the template's form tag carries the token
    form_helper.layout = Layout(*layout)
    return form_helper


def cleaned_name(form: forms.BaseForm, field: str) -> str:
    """A name others see in pages and email subjects: one plain line (games.show.words)."""
    name = clean_text(form.cleaned_data[field])
    if not name:
        raise forms.ValidationError(gettext("Write a name with letters or digits."))
    return name


def is_username_taken(username: str) -> bool:
    return User.objects.filter(username__iexact=username).exists()


class SignupForm(BaseUserCreationForm):
    """Not `UserCreationForm`, which says "A user with that username already exists":
    login names are not shown to other players, and a page that tells which exist tells
    a guesser which accounts to try. The signup view checks the name and the email and
    answers the same page whatever it finds; only the email that follows differs."""

    email = forms.EmailField(
        label=_("Email"), help_text=_("For game news and for resetting your password.")
    )
    display_name = forms.CharField(
        label=_("Display name"), max_length=40, help_text=_("The name other players see.")
    )
    time_zone = time_zone_field()
    language = language_field()

    field_order = [
        "username",
        "email",
        "display_name",
        "time_zone",
        "language",
        "password1",
        "password2",
    ]

    class Meta(BaseUserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    # A taken email or username is no error here: the page would tell anyone which
    # exist. The signup view makes nothing and says so by email instead.

    def validate_unique(self) -> None:
        """The model's unique username is the signup view's to check (see the class)."""

    def clean_display_name(self) -> str:
        return cleaned_name(self, "display_name")

    def clean_language(self) -> str:
        """The language chosen, else the one the page was shown in."""
        return self.cleaned_data.get("language") or translation.get_language()

    def save(self, commit: bool = True) -> User:
        """The user, its password hashed, inactive until the link emailed to the address
        is opened; with `commit=False` not saved yet (`save_new`)."""
        user = super().save(commit=False)
        user.is_active = False
        if commit:
            self.save_new(user)
        return user

    def save_new(self, user: User) -> None:
        user.save()
        # The profile exists only once the user is saved (games.signals).
        profile = user.profile
        profile.display_name = self.cleaned_data["display_name"]
        profile.time_zone = self.cleaned_data["time_zone"]
        profile.language = self.cleaned_data["language"]
        profile.save(update_fields=["display_name", "time_zone", "language"])


class ProfileForm(forms.ModelForm):
    email = forms.EmailField(label=_("Email"))
    time_zone = time_zone_field()
    language = language_field()
    current_password = forms.CharField(
        label=_("Current password"),
        required=False,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
        help_text=_("Needed to change the email."),
    )

    field_order = [
        "display_name",
        "email",
        "time_zone",
        "language",
        "public_page",
        "current_password",
    ]

    class Meta:
        model = Profile
        fields = ["display_name", "time_zone", "language", "public_page"]
        labels = {"display_name": _("Display name"), "public_page": _("My page is public")}
        help_texts = {
            "public_page": _(
                "Others see your games, rating and reliability on your page. "
                "If not, they see only your display name."
            )
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["email"].initial = self.instance.user.email

    # A taken email is no error here: the page would tell which addresses have accounts.
    # The profile view asks the new address to confirm (games.views.accounts), and an
    # address with an account hears that nothing changed.

    def clean_display_name(self) -> str:
        return cleaned_name(self, "display_name")

    def clean_language(self) -> str:
        """The language chosen, else the person's as it was."""
        return self.cleaned_data.get("language") or self.instance.language

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # `ModelForm.clean` returns `cleaned_data`
        # Whoever holds a session (a borrowed computer) must not move the account, and with
        # it every password reset, to an address of their own (which also has to confirm).
        if self.email_changes() and not self.instance.user.check_password(
            data.get("current_password") or ""
        ):
            self.add_error(
                "current_password", gettext("Write your current password to change the email.")
            )
        return data

    def email_changes(self) -> bool:
        email = self.cleaned_data.get("email")
        return email is not None and email.lower() != self.instance.user.email.lower()

    def save(self, commit: bool = True) -> Profile:
        """The name, time zone and language; the email is the profile view's (a change
        waits for the link mailed to the new address)."""
        profile: Profile = super().save(commit=False)
        if commit:
            profile.save(update_fields=["display_name", "time_zone", "language"])
        return profile


class CreateGameForm(forms.Form):
    """The settings of a new game; `cleaned_data` is the keyword arguments of
    `services.create_game` after the creator."""

    name = forms.CharField(
        label=_("Name"),
        max_length=80,
        help_text=_("Shown in the lobby, on the game's page and in the subject of its emails."),
    )
    player_count = forms.TypedChoiceField(
        label=_("Players"),
        coerce=int,
        initial=3,
        choices=[(n, n) for n in (2, 3, 4)],
        error_messages={"invalid_choice": _("A game has 2, 3 or 4 players.")},
        help_text=help_with_rules(
            _(
                "With 2 or 3 players one colour is neutral: its castles and knights stand on "
                "the board as obstacles, and the start player chooses two decision cards "
                "each turn."
            ),
            "2",
            "3",
        ),
    )
    setup = forms.ChoiceField(
        label=_("Setup"),
        choices=game_choices("setup"),
        initial="variable",
        widget=forms.RadioSelect,
        help_text=help_with_rules(
            _(
                "Basic: the rule book's first game, on a fixed board where everyone starts "
                "with one region (3 or 4 players). Variable: the board's tiles are shuffled "
                "and turned, and the players place their castles and knights in turn before "
                "the first card (2 to 4 players)."
            ),
            "2.2",
            "2.3",
        ),
    )
    decisions = forms.ChoiceField(
        label=_("Decisions"),
        choices=game_choices("decisions"),
        initial="sealed",
        widget=forms.RadioSelect,
        help_text=help_with_rules(
            _(
                "Sealed: everyone chooses at once, in secret, and the choices are revealed "
                "together. Open: as at the table, the start player chooses first and then "
                "each player in seat order, seeing the choices made before; slower by email, "
                "as each waits for the one before."
            ),
            "3",
        ),
    )
    money = forms.ChoiceField(
        label=_("Money"),
        choices=game_choices("money"),
        initial="hidden",
        widget=forms.RadioSelect,
        help_text=help_with_rules(
            _(
                "Hidden: only you see your ducats, though every payment is in the game's "
                "log. Open: everyone sees everyone's ducats."
            ),
            "1",
        ),
    )
    deadline_hours = forms.IntegerField(
        label=_("Phase deadline (hours)"),
        min_value=1,
        max_value=MAX_DEADLINE_HOURS,
        initial=settings.GAME_DEFAULT_DEADLINE_HOURS,
        error_messages={
            "min_value": interpolated(
                _("A phase deadline is 1 to %(hours)s hours."), {"hours": MAX_DEADLINE_HOURS}
            ),
            "max_value": interpolated(
                _("A phase deadline is 1 to %(hours)s hours (30 days)."),
                {"hours": MAX_DEADLINE_HOURS},
            ),
        },
        help_text=help_with_rules(
            interpolated(
                _(
                    "How long each phase waits for the players' moves, 1 to %(hours)s hours. "
                    "Reminders go out before it passes; then a missing move gets its "
                    "default: a random decision card, breaking off, a bid of 0 or declining "
                    "the action."
                ),
                {"hours": MAX_DEADLINE_HOURS},
            ),
            "9",
        ),
    )
    # The game's absence policy (RULES 9 by email; games.deadlines does what it says).
    on_absence = forms.ChoiceField(
        label=_("When a player the game waits for is away"),
        choices=[
            ("extend", _("Extend the deadline past their return")),
            ("pause", _("Pause the game until they are back")),
        ],
        initial="extend",
        required=False,  # left out (a form from before the field): the initial choice
        widget=forms.RadioSelect,
        help_text=_(
            "A player says when they are away under Notifications. Extend: the deadline "
            "moves to a whole phase's time after they are back. Pause: the deadline stops, "
            "and runs on with the time it had left when they are back."
        ),
        error_messages={"invalid_choice": _("Choose extend or pause.")},
    )
    max_missed_deadlines = forms.IntegerField(
        label=_("A computer stands in after this many missed deadlines in a row"),
        min_value=0,
        max_value=MAX_MISSED_DEADLINES,
        initial=3,
        required=False,
        help_text=_(
            "At a missed deadline the rules' default move is made for the player; after "
            "this many in a row a computer plays their seat until they take it back. 0: "
            "never."
        ),
        error_messages={
            "min_value": interpolated(
                _("Choose 0 (never) to %(most)s."), {"most": MAX_MISSED_DEADLINES}
            ),
            "max_value": interpolated(
                _("Choose 0 (never) to %(most)s."), {"most": MAX_MISSED_DEADLINES}
            ),
            "invalid": _("Say how many, as a whole number."),
        },
    )
    invite_only = forms.BooleanField(
        required=False,
        label=_("Invite only"),
        help_text=_("Not listed in the lobby; players join with the link you share."),
    )
    colour = forms.ChoiceField(
        label=_("Your colour"),
        choices=COLOUR_CHOICES,
        initial="red",
        widget=forms.RadioSelect,
        error_messages=COLOUR_ERRORS,
        help_text=_(
            "Your castles, knights and decision cards. The colours only tell the players "
            "apart: none plays differently."
        ),
    )
    computer_colours = forms.MultipleChoiceField(
        label=_("Computer players"),
        required=False,
        choices=COLOUR_CHOICES,
        widget=forms.CheckboxSelectMultiple,
        error_messages=COLOUR_ERRORS,
        help_text=_(
            "Colours played by the computer; the other seats wait for people. A computer "
            "takes its seat at once and moves within seconds."
        ),
    )
    computer_level = forms.ChoiceField(
        label=_("Computer level"),
        choices=game_choices("computer_level"),
        initial="normal",
        required=False,  # left out (a form from before the field): the initial choice
        widget=forms.RadioSelect,
        help_text=_(
            "How every computer of the game plays: its own seats, and a seat it plays for "
            "a player who misses deadlines or concedes. Easy: random legal moves. Normal: "
            "the wall, knight or expansion that gains the most power at once. Hard: before "
            "each move it plays out many ways the game could go, from what its seat can "
            "see; it takes a moment longer to move."
        ),
        error_messages={
            "invalid_choice": _("%(value)s is not a level; choose easy, normal or hard.")
        },
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.helper = fields_only(
            "name",
            "player_count",
            InlineRadios("setup"),
            InlineRadios("decisions"),
            InlineRadios("money"),
            "deadline_hours",
            InlineRadios("on_absence"),
            "max_missed_deadlines",
            "invite_only",
            InlineRadios("colour"),
            InlineCheckboxes("computer_colours"),
            InlineRadios("computer_level"),
        )

    def clean_name(self) -> str:
        return cleaned_name(self, "name")

    def clean_on_absence(self) -> str:
        return self.cleaned_data.get("on_absence") or self.fields["on_absence"].initial

    def clean_computer_level(self) -> str:
        return self.cleaned_data.get("computer_level") or self.fields["computer_level"].initial

    def clean_max_missed_deadlines(self) -> int:
        value = self.cleaned_data.get("max_missed_deadlines")
        return self.fields["max_missed_deadlines"].initial if value is None else value

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # `Form.clean` returns `cleaned_data`
        count, computers = data.get("player_count"), data.get("computer_colours") or []
        if data.get("setup") == "basic" and count == 2:
            self.add_error(
                "setup",
                gettext("The basic setup is for 3 or 4 players; choose the variable setup for 2."),
            )
        if data.get("colour") in computers:
            self.add_error(
                "computer_colours",
                gettext("%(colour)s is your own colour; a computer cannot play it.")
                % {"colour": COLOUR_LABELS.get(data["colour"], data["colour"].title())},
            )
        if count is not None and len(computers) >= count:
            self.add_error(
                "computer_colours",
                ngettext(
                    "At most %(most)s of the %(count)s seats can be computers; one is yours.",
                    "At most %(most)s of the %(count)s seats can be computers; one is yours.",
                    count - 1,
                )
                % {"most": count - 1, "count": count},
            )
        return data


class JoinForm(forms.Form):
    colour = forms.ChoiceField(
        error_messages={
            "required": _("Choose a colour."),
            "invalid_choice": _("%(value)s is not free in this game; choose another colour."),
        },
        label=_("Colour"),
    )

    def __init__(self, game: Game, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        colour = self.fields["colour"]
        assert isinstance(colour, forms.ChoiceField)
        colour.choices = [(c, COLOUR_LABELS[c]) for c in game.free_colours()]


class MessageForm(forms.Form):
    """A message to the table (games.chat): to everyone, or to one other player."""

    to = forms.ChoiceField(label=_("To"), required=False)
    text = forms.CharField(
        label=_("Message"),
        max_length=MESSAGE_CHARS,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 2, "maxlength": MESSAGE_CHARS}),
        error_messages={
            "required": _("Write a message first."),
            "max_length": _(
                "A message holds at most %(limit_value)d characters (this one has %(show_value)d)."
            ),
        },
    )

    def __init__(self, seats: Sequence[Seat], me: Seat, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        to = self.fields["to"]
        assert isinstance(to, forms.ChoiceField)
        to.choices = [("", gettext("Everyone at the table"))] + [
            (
                s.colour,
                gettext("%(name)s (%(colour)s) only")
                % {"name": s.display_name, "colour": colour_word(s.colour)},
            )
            for s in seats
            if s.pk != me.pk and s.is_person
        ]
        to.error_messages["invalid_choice"] = gettext(
            "%(value)s is not a player you can write to; choose one from the list."
        )
        self.helper = fields_only("to", "text")
