"""Forms of play by email: a person's email preferences and absence, and invitations
sent to email addresses."""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.core.validators import validate_email
from django.utils import timezone

from games.models import EmailPreference, Notifications

MAX_REMINDER_HOURS = 720  # the longest phase deadline (services.MAX_DEADLINE_HOURS)
MAX_REMINDERS = 5
MAX_ADDRESSES = 10
DATETIME_FORMAT = "%Y-%m-%dT%H:%M"  # what <input type="datetime-local"> sends


def datetime_input() -> forms.DateTimeInput:
    return forms.DateTimeInput(attrs={"type": "datetime-local"}, format=DATETIME_FORMAT)


def parse_hours(text: str) -> list[int]:
    """'24, 2' is [24, 2]: hours before a deadline, largest first, each once."""
    words = [w for w in re.split(r"[\s,;]+", text) if w]
    if not all(w.isascii() and w.isdigit() for w in words):
        raise forms.ValidationError("Write whole numbers of hours, separated by commas, "
                                    "like 24, 2.")
    hours = sorted({int(w) for w in words}, reverse=True)
    if any(not 1 <= h <= MAX_REMINDER_HOURS for h in hours):
        raise forms.ValidationError(f"A reminder comes 1 to {MAX_REMINDER_HOURS} hours "
                                    "before a deadline.")
    if len(hours) > MAX_REMINDERS:
        raise forms.ValidationError(f"At most {MAX_REMINDERS} reminders per deadline.")
    return hours


class NotificationsForm(forms.ModelForm):
    mode = forms.ChoiceField(
        label="Email", choices=EmailPreference.choices, widget=forms.RadioSelect)
    reminder_hours = forms.CharField(
        label="Reminders (hours before a deadline)", required=False,
        help_text="Like 24, 2. Empty: 24 and 2 hours before. Only when your move is missing.")
    away_from = forms.DateTimeField(
        label="Away from", required=False, widget=datetime_input(),
        input_formats=[DATETIME_FORMAT, "%Y-%m-%d %H:%M", "%Y-%m-%d"],
        help_text="In your time zone. Empty: from now.")
    away_until = forms.DateTimeField(
        label="Away until", required=False, widget=datetime_input(),
        input_formats=[DATETIME_FORMAT, "%Y-%m-%d %H:%M", "%Y-%m-%d"],
        help_text="Your games pause or extend their deadlines while you are away, "
                  "as each game's settings say.")

    class Meta:
        model = Notifications
        fields = ["mode", "reminder_hours", "away_from", "away_until"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        hours = self.instance.reminder_hours or []
        self.initial["reminder_hours"] = ", ".join(map(str, hours))

    def clean_reminder_hours(self) -> list[int]:
        return parse_hours(self.cleaned_data.get("reminder_hours") or "")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # `ModelForm.clean` returns `cleaned_data`
        start, end = data.get("away_from"), data.get("away_until")
        if start and not end:
            self.add_error("away_until", "Say until when you are away.")
        elif end and end <= (start or timezone.now()):
            self.add_error("away_until", "The end of an absence comes after its start, "
                                         "and is not in the past.")
        elif end and not start:
            data["away_from"] = timezone.now()  # "until Friday" means from now on
        return data


class InviteByEmailForm(forms.Form):
    addresses = forms.CharField(
        label="Email addresses", widget=forms.Textarea(attrs={"rows": 3}),
        help_text=f"Up to {MAX_ADDRESSES}, separated by commas or new lines.")

    def clean_addresses(self) -> list[str]:
        words = [w for w in re.split(r"[\s,;]+", self.cleaned_data["addresses"]) if w]
        if not words:
            raise forms.ValidationError("Write at least one email address.")
        if len(words) > MAX_ADDRESSES:
            raise forms.ValidationError(f"At most {MAX_ADDRESSES} addresses at a time.")
        for word in words:
            try:
                validate_email(word)
            except forms.ValidationError:
                raise forms.ValidationError(f"{word} is not an email address.") from None
        unique: dict[str, str] = {}
        for word in words:
            unique.setdefault(word.lower(), word)
        return list(unique.values())
