"""Games as the site stores them: settings, seats, pending secret submissions,
the append-only record the engine replays, per-phase snapshots and the log.

No rule lives here: the engine says what is legal and what happens
(`games.services` is the only caller of `engine.game.submit`).
"""

from __future__ import annotations

import secrets
import uuid
import zoneinfo
from collections.abc import Collection
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Max, OuterRef, Q, QuerySet, Subquery
from django.db.models.expressions import RawSQL
from django.db.models.functions import Upper
from django.utils import timezone
from django.utils.translation import gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from engine.ai import PLAYERS
from engine.game import GameState
from engine.position import COLOURS
from engine.serialize import state_from_json, state_to_json
from engine.setup import Settings

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser

_Row = TypeVar("_Row", bound=models.Model)

# A colour's name as a label ("Red") and inside a sentence ("as red"); German writes a
# player's colour with a capital in both (the rule book's "Rot und Lila").
COLOUR_LABELS = {
    "red": pgettext_lazy("colour", "Red"),
    "ochre": pgettext_lazy("colour", "Ochre"),
    "lilac": pgettext_lazy("colour", "Lilac"),
    "grey": pgettext_lazy("colour", "Grey"),
}
COLOUR_WORDS = {
    "red": pgettext_lazy("colour", "red"),
    "ochre": pgettext_lazy("colour", "ochre"),
    "lilac": pgettext_lazy("colour", "lilac"),
    "grey": pgettext_lazy("colour", "grey"),
}
assert set(COLOUR_LABELS) == set(COLOURS) == set(COLOUR_WORDS)
COLOUR_CHOICES = [(c, COLOUR_LABELS[c]) for c in COLOURS]

# How well a game's computers play (issue 26), chosen when the game is made: its label,
# and its word inside a computer's name ("Computer (red, hard)", `seat_name`).
COMPUTER_LEVEL_LABELS = {
    "easy": pgettext_lazy("computer level", "Easy"),
    "normal": pgettext_lazy("computer level", "Normal"),
    "hard": pgettext_lazy("computer level", "Hard"),
}
COMPUTER_LEVEL_WORDS = {
    "easy": pgettext_lazy("computer level", "easy"),
    "normal": pgettext_lazy("computer level", "normal"),
    "hard": pgettext_lazy("computer level", "hard"),
}
# The one place the site says which of the engine's players (engine.ai.PLAYERS) plays at
# each level; the engine says what that player does (docs/computer-players.md).
COMPUTER_KINDS = {"easy": "random", "normal": "greedy", "hard": "search"}
assert set(COMPUTER_KINDS) == set(COMPUTER_LEVEL_LABELS) == set(COMPUTER_LEVEL_WORDS)
assert set(COMPUTER_KINDS.values()) <= set(PLAYERS)


def colour_word(colour: str) -> str:
    """A colour as a sentence names it, in the active language ("red"; anything else as it
    is)."""
    word = COLOUR_WORDS.get(colour)
    return str(word) if word is not None else colour


def validate_time_zone(value: str) -> None:
    if value not in zoneinfo.available_timezones():
        raise ValidationError(f"{value!r} is not a time zone, e.g. Europe/Berlin")


class Profile(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile"
    )
    display_name = models.CharField(max_length=40)
    time_zone = models.CharField(max_length=64, default="UTC", validators=[validate_time_zone])
    # The language of every page and email the person reads (settings.LANGUAGES): first
    # the browser's, at signup; then theirs to choose (preferences, the switcher).
    language = models.CharField(
        max_length=8, choices=settings.LANGUAGES, default=settings.LANGUAGE_CODE
    )
    # An address the person asked to change to, and when: `User.email` stays the one
    # proven until the link emailed here is opened (games.views.accounts), so that every
    # email, the inbound sender check and invitations trust proven addresses only.
    pending_email = models.EmailField(blank=True)
    pending_email_at = models.DateTimeField(null=True, blank=True)
    # Whether others see the person's page (games.views.people): games, rating,
    # reliability. A private page shows others only the display name.
    public_page = models.BooleanField(default=True)

    # `display_name` has a trigram index for the archive's search by a part of a name
    # (profile_name_trigram, made by SQL in migration 0019).

    def __str__(self) -> str:
        return self.display_name


def language_of(user: AbstractBaseUser | AnonymousUser | None) -> str:
    """The language `user` reads the site and its emails in: their profile's, else the
    site's (a person without a profile, or nobody: an address only)."""
    profile = getattr(user, "profile", None) if user is not None else None
    return profile.language if profile is not None else settings.LANGUAGE_CODE


def new_invite_token() -> str:
    return secrets.token_urlsafe(16)


def new_feed_token() -> str:
    return secrets.token_urlsafe(32)


def new_thread_id() -> str:
    return uuid.uuid4().hex


def new_seed() -> int:
    return secrets.randbits(48)


def fresh_mark() -> int:
    """A new live mark (`Game.live_mark`, `Seat.live_mark`): random, never a count read and
    moved on, so that two writes can never leave the mark a page saw before both."""
    return secrets.randbits(62)


# A game's columns no page shows: a write of these alone leaves its live mark.
UNSEEN_GAME_COLUMNS = frozenset({"work_due_since", "events_stored", "records_stored"})


def marked(values: dict[str, Any]) -> dict[str, Any]:
    """The columns an UPDATE of a game's row writes: every write moves its live mark on,
    but one of columns no page shows (the events a count is kept of tell their own
    readers, games.signals). No columns: the mark alone."""
    if not values or not set(values) <= UNSEEN_GAME_COLUMNS:
        return {"live_mark": fresh_mark(), **values}
    return values


class GameQuerySet(models.QuerySet["Game"]):
    def update(self, **kwargs: Any) -> int:
        """Every write to a game's row moves its live mark on (`marked`)."""
        return super().update(**marked(kwargs))


FINISHED = Q(status="finished")  # the archive's indexes' condition (Game.Status.FINISHED)


class Game(models.Model):
    objects = GameQuerySet.as_manager()

    class Status(models.TextChoices):
        OPEN = "open", _("Waiting for players")
        RUNNING = "running", _("Running")
        FINISHED = "finished", _("Finished")
        CANCELLED = "cancelled", _("Cancelled")  # by its creator, before it started

    name = models.CharField(max_length=80)
    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="created_games"
    )
    player_count = models.PositiveSmallIntegerField()
    setup = models.CharField(
        max_length=10,
        default="variable",
        choices=[
            ("basic", pgettext_lazy("setup", "Basic")),
            ("variable", pgettext_lazy("setup", "Variable")),
        ],
    )
    decisions = models.CharField(
        max_length=10,
        default="sealed",
        choices=[
            ("sealed", pgettext_lazy("decisions", "Sealed")),
            ("open", pgettext_lazy("decisions", "Open")),
        ],
    )
    money = models.CharField(
        max_length=10,
        default="hidden",
        choices=[
            ("hidden", pgettext_lazy("money", "Hidden")),
            ("open", pgettext_lazy("money", "Open")),
        ],
    )
    deadline_hours = models.PositiveIntegerField(default=48)
    # RULES 9 by email: what an absence does, and when a computer stands in.
    on_absence = models.CharField(
        max_length=10,
        default="extend",
        choices=[
            ("extend", _("Extend deadlines")),
            ("pause", pgettext_lazy("on absence", "Pause")),
        ],
    )
    paused = models.BooleanField(default=False)
    # A pause the table voted for (games.votes) ends then (or with its phase); None while
    # paused for an absence, or not paused (games.deadlines).
    paused_until = models.DateTimeField(null=True, blank=True)
    max_missed_deadlines = models.PositiveSmallIntegerField(default=3)
    # The level of every computer of the game: its own seats and those it stands in for.
    # Games made before levels keep the random player they had ("easy", migration 0017).
    computer_level = models.CharField(
        max_length=10, default="normal", choices=list(COMPUTER_LEVEL_LABELS.items())
    )
    invite_only = models.BooleanField(default=False)
    # Brought in as a record file (games.records): finished, its players names, not
    # accounts; `creator` is who imported it.
    imported = models.BooleanField(default=False)
    invite_token = models.CharField(max_length=40, unique=True, default=new_invite_token)
    seed = models.BigIntegerField(default=new_seed)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    # The whole truth, as engine.serialize writes it: never rendered, only viewed.
    state = models.JSONField(null=True, blank=True)
    phase_number = models.PositiveIntegerField(default=0)
    phase_kind = models.CharField(max_length=20, blank=True)
    waiting = models.JSONField(default=list, blank=True)
    deadline = models.DateTimeField(null=True, blank=True)
    winners = models.JSONField(default=list, blank=True)
    turn = models.PositiveIntegerField(default=0)
    # What the queue must make happen, kept by the database (games.recovery): since when
    # a task is owed to this game (a resolve, a computer's move, the phase's emails), and
    # the last phase whose emails are queued. A lost task message is found again here.
    work_due_since = models.DateTimeField(null=True, blank=True)
    notified_phase = models.PositiveIntegerField(default=0)
    # How many record and event rows the game has (the index of the next of each), saved
    # with the rows they count (games.services._save): a resolution reads them with the
    # game's row instead of counting every row of the game again (issue 11).
    records_stored = models.PositiveIntegerField(default=0)
    events_stored = models.PositiveIntegerField(default=0)
    # The root every email of the game refers to (In-Reply-To, References): one thread in
    # the players' mail clients.
    mail_thread = models.CharField(max_length=40, default=new_thread_id)
    # A phase whose stored moves the engine fails to apply (games.services.note_broken):
    # the attempts that failed in a row (reset when a phase resolves), the last error, and
    # since when the game is paused for repair, after RESOLVE_MAX_ATTEMPTS of them; the
    # operators list and retry such games (manage.py repair_games).
    resolve_failures = models.PositiveSmallIntegerField(default=0)
    resolve_error = models.TextField(blank=True)
    needs_repair_since = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # What an open page of the game polls (games.views.live): a new random value with every
    # write that anyone reading the game may see (this row, its seats, submissions and
    # public events, games.signals); what one seat alone reads moves that seat's mark.
    live_mark = models.BigIntegerField(default=0, editable=False)

    class Meta:
        indexes = [
            models.Index(fields=["status", "-created_at"]),
            models.Index(
                fields=["deadline"], name="game_running_deadline", condition=Q(status="running")
            ),
            models.Index(
                fields=["work_due_since"],
                name="game_work_due",
                condition=Q(work_due_since__isnull=False),
            ),
            # The sweep's absences step (games.deadlines.settle_absences): the running
            # games paused for an absence, without reading the others.
            models.Index(
                fields=["id"], name="game_paused", condition=Q(status="running", paused=True)
            ),
            # manage.py repair_games: the games whose moves failed to apply, without
            # reading the others.
            models.Index(
                fields=["id"], name="game_resolve_failed", condition=Q(resolve_failures__gt=0)
            ),
            # The archive's search (games.views.archive_search), among finished games
            # only: by date (its range, newest or oldest first), by length (turns played,
            # its range, longest or shortest first), and by the game's kind (number of
            # players, setup, decisions: equal to what is asked) newest first.
            models.Index(
                fields=["finished_at", "id"], name="game_finished_date", condition=FINISHED
            ),
            models.Index(fields=["turn", "id"], name="game_finished_length", condition=FINISHED),
            models.Index(
                fields=["player_count", "setup", "decisions", "finished_at", "id"],
                name="game_finished_kind",
                condition=FINISHED,
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        """A save moves the live mark on (see `GameQuerySet.update`)."""
        fields = kwargs.get("update_fields")
        if fields is None or not set(fields) <= UNSEEN_GAME_COLUMNS:
            self.live_mark = fresh_mark()
            if fields is not None:
                kwargs["update_fields"] = {*fields, "live_mark"}
        super().save(*args, **kwargs)

    def settings_for(self, colours: tuple[str, ...]) -> Settings:
        return Settings(
            players=colours,
            setup=self.setup,
            decisions=self.decisions,
            money=self.money,
            seed=self.seed,
        )

    @cached_property
    def engine_state(self) -> GameState:
        assert self.state is not None, "the game has not started"
        return state_from_json(self.state)

    def set_state(self, state: GameState) -> None:
        """Store a new engine state, and the columns the lists and the sweeper query."""
        self.state = state_to_json(state)
        self.__dict__["engine_state"] = state  # the cached_property, now this state
        self.phase_kind, self.waiting, self.turn = state.phase.kind, state.waiting, state.turn

    @property
    def paused_by_vote(self) -> bool:
        """Paused because the table voted for it (games.votes), not for an absence."""
        return self.paused and self.paused_until is not None

    @property
    def needs_repair(self) -> bool:
        """Paused for repair: its stored moves failed to apply too often (nothing is
        resolved or played until an operator retries it)."""
        return self.needs_repair_since is not None

    @property
    def is_finished(self) -> bool:
        return self.status == self.Status.FINISHED

    def free_colours(self) -> list[str]:
        """The colours no seat has taken yet, in the engine's order."""
        taken = {s.colour for s in self.seats.all()}
        return [c for c in COLOURS if c not in taken]

    def still_waiting(self, submitted: Collection[str]) -> list[str]:
        """The colours the phase still waits for, given the colours with a submission
        stored for it: awaited (`waiting`) and not submitted, while the game runs. From
        the game's row alone, never its state: a sealed choice the engine holds has
        already taken its player out of `waiting` (engine.game). The game page, the
        lobby's rows and the emails all ask this."""
        if self.status != self.Status.RUNNING:
            return []
        return [c for c in self.waiting or [] if c not in submitted]

    def seat_for(self, user: AbstractBaseUser | AnonymousUser | None) -> Seat | None:
        """The seat `user` holds in this game (None: no seat, or not signed in; a
        computer's seat has no user). From the prefetched seats, if they were."""
        if user is None or not user.is_authenticated:
            return None
        return next((s for s in self.seats.all() if s.user_id == user.pk), None)


# Who plays a seat, as SQL: each Q says the same as the Seat property of its name, for
# filters (`game.seats.filter(PERSON)`, `seats.exclude(IN_PERSON)`); tests/site/
# test_seats.py holds them to agreeing.
# A computer's seat has no user; conceding sets `standin` too (games.services.concede).
PERSON = Q(user__isnull=False, is_computer=False)
IN_PERSON = PERSON & Q(standin=False)
COMPUTER_PLAYS = Q(is_computer=True) | Q(standin=True)


# What a seat's update may change that its own reader alone sees: their mark moves, not
# the game's (muting a player, pausing the game's emails).
OWN_SEAT_COLUMNS = frozenset({"muted_colours", "mail_muted", "live_mark"})


class SeatQuerySet(models.QuerySet["Seat"]):
    def update(self, **kwargs: Any) -> int:
        """An update of seats moves the live mark of their games on (what a page of the
        game shows of its seats: names, stand-ins, absences), or only their own if it
        changes what only their reader sees (`OWN_SEAT_COLUMNS`)."""
        if set(kwargs) <= OWN_SEAT_COLUMNS:
            kwargs.setdefault("live_mark", fresh_mark())
            return super().update(**kwargs)
        games = list(self.values_list("game_id", flat=True).distinct())
        updated = super().update(**kwargs)
        Game.objects.filter(pk__in=games).update()
        return updated

    def update_before_game_write(self, **kwargs: Any) -> int:
        """An update of the seats of one game whose row the caller holds locked and
        writes next in the same transaction, moving its live mark on there
        (games.deadlines: a deadline's one write of the game): no read of the games, no
        write of their marks here."""
        return super().update(**kwargs)


class Seat(models.Model):
    objects = SeatQuerySet.as_manager()

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="seats")
    colour = models.CharField(max_length=10, choices=COLOUR_CHOICES)
    position = models.PositiveSmallIntegerField()  # seat order = play order
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="seats",
    )
    is_computer = models.BooleanField(default=False)
    # An imported game's player (games.records): a name from the record, no account.
    imported_name = models.CharField(max_length=40, blank=True)
    missed_deadlines = models.PositiveSmallIntegerField(default=0)  # in a row
    standin = models.BooleanField(default=False)  # a computer plays until the person returns
    conceded = models.BooleanField(default=False)  # given up: a computer plays to the end
    # The person muted this game's emails: only the game-over email comes (games.mail.notify).
    mail_muted = models.BooleanField(default=False)
    # The colours whose messages this seat's person does not want to read (games.chat).
    muted_colours = models.JSONField(default=list, blank=True)
    joined_at = models.DateTimeField(auto_now_add=True)
    # Moved on by what this seat's reader alone sees (games.signals; `Game.live_mark`).
    live_mark = models.BigIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["game", "colour"], name="one_seat_per_colour"),
            models.UniqueConstraint(fields=["game", "position"], name="one_seat_per_place"),
            models.UniqueConstraint(
                fields=["game", "user"], name="one_seat_per_user", condition=Q(user__isnull=False)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.colour} in {self.game_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """A save moves the game's live mark on, or the seat's own (`SeatQuerySet.update`)."""
        fields = kwargs.get("update_fields")
        if fields is not None and set(fields) <= OWN_SEAT_COLUMNS:
            self.live_mark = fresh_mark()
            kwargs["update_fields"] = {*fields, "live_mark"}
            super().save(*args, **kwargs)
            return
        super().save(*args, **kwargs)
        Game.objects.filter(pk=self.game_id).update()

    @property
    def is_person(self) -> bool:
        """A person holds the seat: not a computer's, and its person has not left the
        site. Still true while a computer stands in for them or after they conceded:
        they are told the game by email and read its table talk (`PERSON`)."""
        return self.user_id is not None and not self.is_computer

    @property
    def plays_in_person(self) -> bool:
        """Its person makes the seat's moves themselves now: no computer stands in for
        them (after missed deadlines, games.deadlines) and they have not conceded. Only
        such a seat is asked for moves, reminded, counted missing or paused for
        (`IN_PERSON`)."""
        return self.is_person and not self.standin

    @property
    def computer_plays(self) -> bool:
        """A computer makes the seat's moves: a computer's seat, or a person's it stands
        in for or that was conceded (`COMPUTER_PLAYS`). A seat whose person left the site
        is neither this nor `plays_in_person`."""
        return self.is_computer or self.standin

    @property
    def display_name(self) -> str:
        if self.imported_name:
            return self.imported_name
        user = self.user
        profile = getattr(user, "profile", None) if user is not None else None
        return seat_name(
            self.colour,
            computer=self.is_computer,
            username=user.get_username() if user is not None else None,
            profile_name=profile.display_name if profile is not None else None,
            level=self.game.computer_level if self.is_computer else "",
        )


def seat_name(
    colour: str,
    *,
    computer: bool,
    username: str | None,
    profile_name: str | None,
    level: str,
) -> str:
    """A seat's name, as every page, list and email words it (`Seat.display_name`); from
    plain columns too, for a list that reads rows, not models (games.views.lobby).
    `username` None: the seat's person has left the site; `profile_name` None: they
    have no profile. `level`: its game's `computer_level` (a computer's name says it)."""
    word = COLOUR_WORDS.get(colour, colour)
    if computer:
        return gettext("Computer (%(colour)s, %(level)s)") % {
            "colour": word,
            "level": COMPUTER_LEVEL_WORDS.get(level, level),
        }
    if username is None:
        return gettext("(left the game, %(colour)s)") % {"colour": word}
    return profile_name if profile_name is not None else username


class PendingSubmission(models.Model):
    """A player's submission for the current phase, secret until the phase resolves."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="pending")
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="pending")
    phase_number = models.PositiveIntegerField()
    move = models.JSONField()
    text = models.CharField(max_length=500)
    submitted_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["seat", "phase_number"], name="one_pending_per_phase"),
        ]


class RecordEntry(models.Model):
    """One accepted submission: the append-only record the engine replays."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="record")
    index = models.PositiveIntegerField()
    colour = models.CharField(max_length=10)
    move = models.JSONField()
    text = models.CharField(max_length=500)
    phase_number = models.PositiveIntegerField()
    accepted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["index"]
        constraints = [
            models.UniqueConstraint(fields=["game", "index"], name="record_index_unique"),
        ]


class Snapshot(models.Model):
    """The state after a phase resolved, for the archive and fast pages."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="snapshots")
    phase_number = models.PositiveIntegerField()
    turn = models.PositiveIntegerField()
    phase_kind = models.CharField(max_length=20)
    state = models.JSONField()
    power = models.JSONField(default=dict)  # {colour: power}, for the chart without states
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["phase_number"]
        constraints = [
            models.UniqueConstraint(fields=["game", "phase_number"], name="snapshot_unique"),
        ]


def readable_marks(colour: str | None) -> list[str]:
    """The one rule for who reads which event (games.show.presenter applies it): the
    `to_colour` marks a colour reads: events for everyone (""), and those for the
    colour's eyes alone; a spectator (None) only the former. (A finished game's archive
    reads all: `everything`.)"""
    return ["", colour] if colour else [""]


class GameRowsQuerySet(models.QuerySet[_Row]):
    """Rows of a game's log or table talk."""

    def newest_in(self, game: OuterRef, field: str = "pk") -> Subquery:
        """The largest `field` of these rows in `game` (an `OuterRef` to a game's id), as
        an expression for a query over games; NULL if there is none. The version of an
        open page (games.views.live, the lobby) reads it of the rows its reader may read,
        filtered by the one rule (`visible_to`), never a copy of it."""
        rows = self.filter(game=game).order_by().values("game_id")
        return Subquery(rows.annotate(newest=Max(field)).values("newest"))


class EventQuerySet(GameRowsQuerySet["Event"]):
    def visible_to(self, colour: str | None, *, everything: bool = False) -> EventQuerySet:
        """The events `colour` reads (`readable_marks`); `everything`: all of them."""
        if everything:
            return self
        return self.filter(to_colour__in=readable_marks(colour))


class Event(models.Model):
    """The game log; `to_colour` marks an event for one player's eyes only."""

    objects = EventQuerySet.as_manager()

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="events")
    index = models.PositiveIntegerField()
    phase_number = models.PositiveIntegerField()
    turn = models.PositiveIntegerField()
    kind = models.CharField(max_length=30)
    data = models.JSONField()
    to_colour = models.CharField(max_length=10, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["index"]
        constraints = [
            models.UniqueConstraint(fields=["game", "index"], name="event_index_unique"),
        ]


MESSAGE_CHARS = 1000  # one message; a longer one is refused with a sentence saying so


class MessageQuerySet(GameRowsQuerySet["Message"]):
    def visible_to(self, seat: Seat | None, *, archive: bool = False) -> MessageQuerySet:
        """The one rule for who reads which message (games.chat applies it): a seat reads
        the messages to everyone, those to it and its own, but not those of the colours
        it muted; a finished game's archive shows the messages to everyone only, to
        anyone; a spectator of a game still going reads none (table talk is the
        players')."""
        if archive:
            return self.filter(to_seat__isnull=True)
        if seat is None:
            return self.none()
        mine = Q(to_seat__isnull=True) | Q(to_seat=seat) | Q(sender=seat)
        muted = (
            [c for c in seat.muted_colours if isinstance(c, str)]
            if isinstance(seat.muted_colours, list)
            else []
        )
        return self.filter(mine).exclude(Q(sender__colour__in=muted) & ~Q(sender=seat))


class Message(models.Model):
    """A word between players (issue 10): to everyone at the table (`to_seat` None) or to
    one player. Written on the game page or by an emailed reply (`say`, `to ochre:`)."""

    objects = MessageQuerySet.as_manager()

    class Via(models.TextChoices):
        WEB = "web", _("the game page")
        EMAIL = "email", pgettext_lazy("sent by", "email")

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="messages")
    sender = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="sent_messages")
    to_seat = models.ForeignKey(
        Seat, null=True, blank=True, on_delete=models.CASCADE, related_name="received_messages"
    )
    text = models.TextField(max_length=MESSAGE_CHARS)
    phase_number = models.PositiveIntegerField()
    turn = models.PositiveIntegerField()
    via = models.CharField(max_length=5, choices=Via.choices, default=Via.WEB)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]
        indexes = [models.Index(fields=["game", "id"], name="message_game")]

    def __str__(self) -> str:
        return f"message {self.pk} in {self.game_id}"


# --- live marks of what a seat alone reads (`Game.live_mark`, games.signals) -----------------


def events_told(game_id: int, event_ids: list[int]) -> None:
    """New events, after they were stored: their readers' pages are told."""
    events = Event.objects.filter(pk__in=event_ids)
    if events.visible_to(None).exists():
        Game.objects.filter(pk=game_id).update()
        return
    seats = Seat.objects.filter(game_id=game_id).only("pk", "colour")
    readers = [s.pk for s in seats if events.visible_to(s.colour).exists()]
    Seat.objects.filter(pk__in=readers).update(live_mark=fresh_mark())


def message_told_to_readers(message: Message) -> None:
    """Table talk moves the marks of the seats that read it, by the one rule
    (`Message.objects.visible_to`: not a player who muted its sender); a spectator of a
    running game reads none of it."""
    seats = Seat.objects.filter(game_id=message.game_id).only("pk", "colour", "muted_colours")
    rows = Message.objects.filter(pk=message.pk)
    readers = [s.pk for s in seats if rows.visible_to(s).exists()]
    Seat.objects.filter(pk__in=readers).update(live_mark=fresh_mark())


# --- play by email (issue: notifications, reminders, deadlines, replies) ------------------


class EmailPreference(models.TextChoices):
    EVERY = "every", _("Every email")
    DIGEST = "digest", _("A daily digest of results (asks for moves always come at once)")
    OFF = "off", _("No email (unsubscribed)")


class MessageEmails(models.TextChoices):
    NEXT = "next", _("In my next email of the game (or on their own after an hour)")
    EACH = "each", _("Each message at once, in an email of its own")
    OFF = "off", _("Not by email: I read them on the game page")


class PushChoice(models.TextChoices):
    """What a person's "waits for you" does besides (or instead of) its email: a Web Push
    notification to each browser they turned it on in (PushSubscription)."""

    OFF = "off", _("No push notifications")
    ALSO = "also", _("A push notification as well as the email")
    INSTEAD = "instead", _("A push notification instead of the email")


class Notifications(models.Model):
    """A person's email preferences and absences (one row per user)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    mode = models.CharField(
        max_length=10, choices=EmailPreference.choices, default=EmailPreference.EVERY
    )
    reminder_hours = models.JSONField(default=list)  # hours before a deadline; [] = default
    away_from = models.DateTimeField(null=True, blank=True)
    away_until = models.DateTimeField(null=True, blank=True)
    messages = models.CharField(
        max_length=5, choices=MessageEmails.choices, default=MessageEmails.NEXT
    )
    push = models.CharField(max_length=8, choices=PushChoice.choices, default=PushChoice.OFF)

    class Meta:
        indexes = [
            # The sweep's absences step: the people with an absence booked (then their
            # seats, by user), not every person's preferences.
            models.Index(
                fields=["away_until"],
                name="notifications_away",
                condition=Q(away_until__isnull=False),
            ),
        ]


class PushSubscription(models.Model):
    """A browser a person turned push notifications on in: the Web Push subscription its
    push service gave (the endpoint, checked to be https on a public host before it is
    stored: games.mail.push.check_endpoint, and again before every push), and its keys."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_subscriptions"
    )
    endpoint = models.URLField(max_length=1000, unique=True)
    p256dh = models.CharField(max_length=200)  # the browser's public key (base64url)
    auth = models.CharField(max_length=100)  # its authentication secret (base64url)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"push subscription {self.pk} of user {self.user_id}"


class CalendarFeed(models.Model):
    """A person's deadlines as an iCalendar feed (games.views.feeds): the secret in its
    address, theirs to renew, which makes the old address a 404 (a calendar someone was
    given stops reading their games)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="calendar_feed"
    )
    token = models.CharField(max_length=64, unique=True, default=new_feed_token)
    created_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"calendar feed of user {self.user_id}"

    def renew(self) -> None:
        self.token = new_feed_token()
        self.save(update_fields=["token", "created_at"])


def away_q(now: datetime, via: str = "") -> Q:
    """Who is away at `now`, as a filter of Notifications (`via`: the path to them from
    another table, "user__notifications__" from a seat): `away_until` ahead, and
    `away_from` unset or past. The one rule; `is_away` says the same of a loaded row."""
    return Q(**{f"{via}away_until__gt": now}) & (
        Q(**{f"{via}away_from__isnull": True}) | Q(**{f"{via}away_from__lte": now})
    )


def is_away(user: AbstractBaseUser | None, now: datetime) -> bool:
    """`away_q` on a loaded person (their `notifications` loaded with them, or read)."""
    n = getattr(user, "notifications", None)
    return n is not None and away_between(n.away_from, n.away_until, now)


def away_between(away_from: datetime | None, away_until: datetime | None, now: datetime) -> bool:
    """`away_q` on the two columns, read as plain values (a list of rows)."""
    return away_until is not None and now < away_until and (away_from is None or away_from <= now)


PHASE_EMAILS = ("results", "your_turn", "game_over")  # once per person and phase


class OutgoingEmail(models.Model):
    """The outbox: an email is a row first, sent by a task; nothing is lost or sent twice."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        HELD = "held", "Held for the digest"
        SENDING = "sending", "Sending"
        SENT = "sent", "Sent"
        RETRYING = "retrying", "Retrying"
        FAILED = "failed", "Failed"
        DIGESTED = "digested", "Sent in a digest"
        # Owed news that waits to ride in the person's next email of the game, or to be
        # sent on its own once due (next_attempt_at): games.mail.notify.flush_due.
        COALESCING = "coalescing", "Waiting to ride in the next email"
        FOLDED = "folded", "Told in a later email"

    kind = models.CharField(max_length=30)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="emails",
    )
    game = models.ForeignKey(
        Game, null=True, blank=True, on_delete=models.SET_NULL, related_name="emails"
    )
    to = models.EmailField()
    subject = models.CharField(max_length=300)
    text = models.TextField()
    html = models.TextField(blank=True)
    headers = models.JSONField(default=dict, blank=True)
    # The phase an email of a game's phase is about (results, "waits for you", the end):
    # with kind, person and game, unique, so no phase's email is ever queued twice.
    phase_number = models.PositiveIntegerField(null=True, blank=True)
    reply_to = models.CharField(max_length=300, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    # What the email says in one line, for the email it rides in (a COALESCING one) and
    # the digest: a code and its values, {"code": ..., "values": {...}}, worded when read
    # (games.mail.compose.summary_line); {} for none. A string: a line stored before.
    summary = models.JSONField(default=dict, blank=True)
    # The newest message (Message.pk) this email tells the person: the next email of the
    # game tells those after it (games.chat.unread_by_email).
    messages_upto = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                name="email_due",
                condition=Q(status__in=["queued", "retrying"]),
            ),
            models.Index(
                fields=["next_attempt_at"], name="email_sending", condition=Q(status="sending")
            ),
            models.Index(
                fields=["next_attempt_at"],
                name="email_coalescing",
                condition=Q(status="coalescing"),
            ),
            # games.visibility: who was invited to an invite-only game by email, asked on
            # every list of games (archive, a person's page) by the viewer's address, any
            # case; without it each of those pages read every email ever queued.
            models.Index(
                Upper("to"), "game", name="email_invitation_to", condition=Q(kind="invitation")
            ),
            # games.housekeeping: the bodies still kept of emails whose body is not read
            # again (sent, digested, folded).
            models.Index(
                fields=["created_at"],
                name="email_body_kept",
                condition=Q(status__in=["sent", "digested", "folded"]) & ~Q(text=""),
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "user", "game", "phase_number"],
                name="one_email_per_phase",
                condition=Q(kind__in=PHASE_EMAILS),
            ),
        ]


class MagicLink(models.Model):
    """A signed link in an email that opens a game's form already signed in; once."""

    nonce = models.CharField(max_length=40, unique=True, default=new_invite_token)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    game = models.ForeignKey(Game, on_delete=models.CASCADE)
    phase_number = models.PositiveIntegerField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["expires_at"], name="magic_link_expiry")]


class ReplyToken(models.Model):
    """The secret in a Reply-To address (play+TOKEN@...): one player, game and phase."""

    token = models.CharField(max_length=40, unique=True, default=new_invite_token)
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="reply_tokens")
    phase_number = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    used_at = models.DateTimeField(null=True, blank=True)


class Reminder(models.Model):
    """A reminder due before a deadline; re-armed (a new row) when the deadline moves."""

    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="reminders")
    phase_number = models.PositiveIntegerField()
    deadline = models.DateTimeField()
    hours_before = models.PositiveIntegerField()
    due_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["seat", "phase_number", "deadline", "hours_before"],
                name="one_reminder_per_deadline",
            ),
        ]
        indexes = [
            models.Index(fields=["due_at"], name="reminder_due", condition=Q(sent_at__isnull=True)),
        ]


# --- the table decides together (issue 24) -------------------------------------------------


class DeadlineVote(models.Model):
    """A proposal to the people seated to extend the current phase's deadline by `amount`
    hours, or to pause the phase for `amount` days, and what became of it (games.votes).
    One is open at a time per game; it closes when a majority of the people seated says
    yes (passed) or can no longer say so (rejected), or with its phase or its time
    (expired)."""

    class Kind(models.TextChoices):
        EXTEND = "extend", "Extend the deadline"
        PAUSE = "pause", "Pause the phase"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        PASSED = "passed", "Passed"
        REJECTED = "rejected", "Rejected"
        EXPIRED = "expired", "Expired"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="deadline_votes")
    phase_number = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    amount = models.PositiveIntegerField()  # hours (extend) or days (pause)
    proposer = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="proposals")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pk"]
        constraints = [
            # One open proposal per game: behind the check made under the game's row lock.
            models.UniqueConstraint(
                fields=["game"], name="one_open_vote_per_game", condition=Q(status="open")
            ),
        ]
        indexes = [
            # The sweep's step that closes the proposals past their time or phase.
            models.Index(fields=["expires_at"], name="vote_open", condition=Q(status="open")),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.amount} in {self.game_id}"


class Ballot(models.Model):
    """One person's vote on a proposal; cast once, it stands."""

    vote = models.ForeignKey(DeadlineVote, on_delete=models.CASCADE, related_name="ballots")
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="ballots")
    yes = models.BooleanField()
    cast_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.UniqueConstraint(fields=["vote", "seat"], name="one_ballot_per_seat"),
        ]


# --- what a game's page reads with the game's row and its seats ----------------------------
# As SQL (RawSQL): the ORM's building of these expressions cost the page more CPU than the
# queries they save.

_GAMES, _SEATS = Game._meta.db_table, Seat._meta.db_table  # the queries' own tables
_OF_THIS_GAME = f"EXISTS (SELECT 1 FROM {{table}} x WHERE x.game_id = {_GAMES}.id)"
VOTES_HELD, TALK_HELD = "votes_held", "talk_held"


def page_flags() -> dict[str, RawSQL]:
    """Annotations for the game's row on its page (`views.play._load`): whether the game
    has any deadline vote or any table talk, so that a game with none asks no query for
    them (`votes.standing`, `chat.for_page` read them with `none_held`)."""
    return {
        VOTES_HELD: RawSQL(_OF_THIS_GAME.format(table=DeadlineVote._meta.db_table), ()),
        TALK_HELD: RawSQL(_OF_THIS_GAME.format(table=Message._meta.db_table), ()),
    }


def none_held(game: Game, flag: str) -> bool:
    """Whether the game's row was read with `flag` (`page_flags`), and it says none."""
    return vars(game).get(flag) is False


_STORED = f"""SELECT p.text FROM {PendingSubmission._meta.db_table} p
WHERE p.seat_id = {_SEATS}.id AND p.phase_number = %s"""


def with_pending(
    seats: QuerySet[Seat], phase_number: int, user: AbstractBaseUser | AnonymousUser
) -> QuerySet[Seat]:
    """Seats annotated as `services.with_submitted` (whether each has a move stored for
    `phase_number`) and with `own_pending`: the text of that move on `user`'s own seat,
    None on every other (another's move never leaves the database)."""
    user_id = user.pk if user.is_authenticated else None
    return seats.annotate(
        has_submitted=RawSQL(f"EXISTS ({_STORED})", (phase_number,)),
        own_pending=RawSQL(
            f"CASE WHEN {_SEATS}.user_id = %s THEN ({_STORED}) END",
            (user_id, phase_number),
        ),
    )


class Rating(models.Model):
    """A person's multiplayer rating now (games.ratings: openskill's Plackett-Luce):
    `mu` and `sigma` of their skill, `ordinal` the conservative figure the leaderboard
    orders by (mu - 3 sigma), and how many rated games made it."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rating"
    )
    mu = models.FloatField()
    sigma = models.FloatField()
    ordinal = models.FloatField()
    games = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [
            # The leaderboard: those with enough rated games, the best first.
            models.Index(fields=["-ordinal", "user"], name="rating_board"),
        ]


class RatingChange(models.Model):
    """What one rated game did to one person's rating: one row per (game, person), so
    a game is rated once however often its end is stored or a task runs again."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="rating_changes")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rating_changes"
    )
    place = models.PositiveSmallIntegerField()  # in the game's finish order, 1 is first
    mu = models.FloatField()  # after the game
    sigma = models.FloatField()
    ordinal = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["game", "user"], name="rated_once"),
        ]
        indexes = [models.Index(fields=["user", "id"], name="rating_history")]
