"""Forms of play by email: a person's email preferences and absence, and invitations
sent to email addresses."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django import forms
from django.core.validators import validate_email
from django.utils import timezone
from django.utils.functional import lazy
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from games.deadlines import MAX_ABSENCE
from games.mail import push
from games.models import EmailPreference, MessageEmails, Notifications, PushChoice

MAX_REMINDER_HOURS = 720  # the longest phase deadline (services.MAX_DEADLINE_HOURS)
MAX_REMINDERS = 5
MAX_ADDRESSES = 10
DATETIME_FORMAT = "%Y-%m-%dT%H:%M"  # what <input type="datetime-local"> sends
# A start typed "now" reaches the server a little later: that much past is still now.
START_GRACE = timedelta(minutes=10)
MINUTE = timedelta(minutes=1)

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


def _interpolate(message: StrOrPromise, values: dict[str, Any]) -> str:
    return str(message) % values


# A help text with a limit in it, translated when shown.
interpolated = lazy(_interpolate, str)


def datetime_input() -> forms.DateTimeInput:
    return forms.DateTimeInput(attrs={"type": "datetime-local"}, format=DATETIME_FORMAT)


def parse_hours(text: str) -> list[int]:
    """'24, 2' is [24, 2]: hours before a deadline, largest first, each once."""
    words = [w for w in re.split(r"[\s,;]+", text) if w]
    if not all(w.isascii() and w.isdigit() for w in words):
        raise forms.ValidationError(
            gettext("Write whole numbers of hours, separated by commas, like 24, 2.")
        )
    hours = sorted({int(w) for w in words}, reverse=True)
    if any(not 1 <= h <= MAX_REMINDER_HOURS for h in hours):
        raise forms.ValidationError(
            gettext("A reminder comes 1 to %(hours)s hours before a deadline.")
            % {"hours": MAX_REMINDER_HOURS}
        )
    if len(hours) > MAX_REMINDERS:
        raise forms.ValidationError(
            ngettext(
                "At most %(count)s reminder per deadline.",
                "At most %(count)s reminders per deadline.",
                MAX_REMINDERS,
            )
            % {"count": MAX_REMINDERS}
        )
    return hours


class NotificationsForm(forms.ModelForm):
    mode = forms.ChoiceField(
        label=_("Email"), choices=EmailPreference.choices, widget=forms.RadioSelect
    )
    messages = forms.ChoiceField(
        label=_("Messages of the table"),
        choices=MessageEmails.choices,
        widget=forms.RadioSelect,
        required=False,
        help_text=_("What the other players write to you or to everyone at the table."),
    )
    reminder_hours = forms.CharField(
        label=_("Reminders (hours before a deadline)"),
        required=False,
        help_text=_("Like 24, 2. Empty: 24 and 2 hours before. Only when your move is missing."),
    )
    push = forms.ChoiceField(
        label=_("Push notifications"),
        choices=PushChoice.choices,
        widget=forms.RadioSelect,
        required=False,
        help_text=_(
            "When a game waits for your move, in each browser where you turned them on "
            "(below). Never while you have the game's page open: the page tells you."
        ),
    )
    away_from = forms.DateTimeField(
        label=_("Away from"),
        required=False,
        widget=datetime_input(),
        input_formats=[DATETIME_FORMAT, "%Y-%m-%d %H:%M", "%Y-%m-%d"],
        help_text=_("In your time zone. Empty: from now."),
    )
    away_until = forms.DateTimeField(
        label=_("Away until"),
        required=False,
        widget=datetime_input(),
        input_formats=[DATETIME_FORMAT, "%Y-%m-%d %H:%M", "%Y-%m-%d"],
        help_text=_(
            "Your games pause or extend their deadlines while you are away, "
            "as each game's settings say."
        ),
    )

    class Meta:
        model = Notifications
        fields = ["mode", "messages", "push", "reminder_hours", "away_from", "away_until"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not push.enabled():  # the site has no VAPID key: push is not offered
            del self.fields["push"]
        hours = self.instance.reminder_hours or []
        self.initial["reminder_hours"] = ", ".join(map(str, hours))
        self.stored_from = self.instance.away_from
        now = timezone.now()
        until = self.instance.away_until
        if until is None or until <= now:  # an absence that is over is not shown again
            self.initial["away_from"] = self.initial["away_until"] = None
        else:  # a value stored before the limits were checked is shown within them
            self.initial["away_from"] = _within(self.instance.away_from, now)
            self.initial["away_until"] = _within(until, now)

    def clean_messages(self) -> str:
        """Not sent (an older page): unchanged."""
        return self.cleaned_data.get("messages") or self.instance.messages

    def clean_push(self) -> str:
        """Not sent (an older page): unchanged."""
        return self.cleaned_data.get("push") or self.instance.push

    def clean_reminder_hours(self) -> list[int]:
        return parse_hours(self.cleaned_data.get("reminder_hours") or "")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # `ModelForm.clean` returns `cleaned_data`
        start, end = data.get("away_from"), data.get("away_until")
        now = timezone.now()
        if start and not self._start_allowed(start, now):
            self.add_error("away_from", gettext("An absence starts now or later, not in the past."))
        if start and not end:
            self.add_error("away_until", gettext("Say until when you are away."))
        elif end and end <= now:
            self.add_error("away_until", gettext("The end of an absence is in the future."))
        elif end and start and end <= start:
            self.add_error("away_until", gettext("The end of an absence comes after its start."))
        elif end and end > now + MAX_ABSENCE:
            # The sweeper counts deadlines from the return: a date centuries away is a
            # typing error, and a game waits a year at most.
            self.add_error(
                "away_until",
                gettext("An absence ends within %(days)s days from now.")
                % {"days": MAX_ABSENCE.days},
            )
        elif end and not start:
            data["away_from"] = now  # "until Friday" means from now on
        return data

    def _start_allowed(self, start: datetime, now: datetime) -> bool:
        """Now or later; or the start of the absence under way, sent back unchanged
        (the form shows it, to the minute) with a change of anything else."""
        kept = self.stored_from is not None and abs(start - self.stored_from) < MINUTE
        return start >= now - START_GRACE or kept


def _within(moment: datetime | None, now: datetime) -> datetime | None:
    """`moment` kept within a year of now (shown in any time zone without overflow)."""
    if moment is None:
        return None
    return min(max(moment, now - MAX_ABSENCE), now + MAX_ABSENCE)


class InviteByEmailForm(forms.Form):
    addresses = forms.CharField(
        label=_("Email addresses"),
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=interpolated(
            _("Up to %(count)s, separated by commas or new lines."), {"count": MAX_ADDRESSES}
        ),
    )

    def clean_addresses(self) -> list[str]:
        words = [w for w in re.split(r"[\s,;]+", self.cleaned_data["addresses"]) if w]
        if not words:
            raise forms.ValidationError(gettext("Write at least one email address."))
        if len(words) > MAX_ADDRESSES:
            raise forms.ValidationError(
                gettext("At most %(count)s addresses at a time.") % {"count": MAX_ADDRESSES}
            )
        for word in words:
            try:
                validate_email(word)
            except forms.ValidationError:
                raise forms.ValidationError(
                    gettext("%(address)s is not an email address.") % {"address": word}
                ) from None
        unique: dict[str, str] = {}
        for word in words:
            unique.setdefault(word.lower(), word)
        return list(unique.values())
