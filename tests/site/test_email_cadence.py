"""Email cadence (issue 10): at most one email to a person per phase change that needs
them, with what happened since their last email folded in.

The measure: whole games of three people and a computer, alice and bob moving by email
(real replies through `manage.py receive_email`), charlie on the web (`services.submit`,
what the game page's form calls), every email through a real SMTP server (aiosmtpd).
The worker's part is done in-process and in order, as in test_email_game. For each
person: the emails they received (the final game-over email aside) per phase that
awaited them. Two paces: "fast", each move within the windows of coalescing, and
"slow", each move after EMAIL_COALESCE_SECONDS (all that is then due is sent first).

The games are played with table talk (issue 10): alice and bob write `say …` and
`to <colour>: …` lines in some of their replies, beside a move or in a reply of messages
alone, and charlie posts on the game page (`games.chat.post`). Every message must reach,
through the SMTP server, exactly the people who may read it (the sender's own copy
included), once each; never a third player; and the archive shows only those to everyone.
At the slow pace an hour passes after each message written without a move, so that the
owed messages go in an email of their own (or ride in the held results sent with them).

Then the parts: coalescing, a confirmation riding along or going alone when due, the
sweep sending what is due, threading headers, the order of a person's emails, muting.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from email.message import EmailMessage

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from engine.ai import RandomPlayer
from engine.moves import EndAlliance
from engine.notation import format_move, parse_move
from games import chat, deadlines, services, tasks, votes, watching
from games.mail import compose, notify, outbox
from games.models import (
    Event,
    Game,
    Message,
    Notifications,
    OutgoingEmail,
    PendingSubmission,
    Reminder,
    Seat,
)
from games.show.presenter import present
from tests.site.test_email_game import receive_in_process, recipient, reply, text_of
from tests.site.test_emails import decide_all, fresh, seat, sent_to
from tests.site.test_outbox import SMTPServer

pytestmark = pytest.mark.django_db
Status = OutgoingEmail.Status

TARGET = 1.1  # emails per phase that awaited the person
HOURS = timedelta(hours=2)  # bob's absence
KIND_HEADER = getattr(compose, "KIND_HEADER", "X-Lowenherz-Kind")  # so it runs on older code
MAX_STEPS = 2000
# Table talk in the whole games: at one step in TALK_EVERY, the next of TALK in turn:
# (who, how, to whom: a colour, or "" for everyone). "beside": in the reply that carries
# the person's next move; "alone": a reply with messages only, to their latest email;
# "web": on the game page.
TALK_EVERY = 7
TALK = (
    ("red", "beside", ""),
    ("lilac", "web", ""),
    ("ochre", "alone", "red"),
    ("red", "alone", ""),
    ("ochre", "beside", "lilac"),
    ("lilac", "web", "ochre"),
    ("red", "beside", "ochre"),
    ("ochre", "alone", ""),
    ("ochre", "beside", ""),
    ("lilac", "web", "red"),
    ("red", "alone", "lilac"),
    ("red", "beside", ""),
)
BY_EMAIL = ("red", "ochre")  # alice and bob; charlie (lilac) plays on the web
# Deadline notices in the whole games (issue 24): alice, the creator, extends the deadline
# at one step in EXTEND_EVERY; bob is away for the steps in AWAY (the sweep's absences
# step runs at each: every phase that waits for him while he is away is extended).
EXTEND_EVERY = 11
AWAY = range(40, 60)
# charlie has the game page open and visible for WATCH steps, then not for as many, in
# turn (issue 24: who watches is told by the page, not by email).
WATCH = 10


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def smtp(settings):
    """A real SMTP server on loopback, which every email goes through."""
    server = SMTPServer()
    server.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 5
    yield server
    server.stop()


@pytest.fixture
def no_broker(monkeypatch) -> None:
    """Tasks reach no broker: the test does the worker's part itself, in order."""
    for task in (tasks.send_email, tasks.resolve_phase, tasks.notify_phase, tasks.play_computer):
        monkeypatch.setattr(task, "apply_async", lambda *args, **kwargs: None)


def deliver(smtp) -> list[EmailMessage]:
    """The worker's part: send every queued email, oldest first; the new messages."""
    before = len(smtp.messages)
    for pk in (
        OutgoingEmail.objects.filter(status=Status.QUEUED)
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)
    ):
        sent = outbox.send(pk)  # or dropped: a call to vote already decided (outbox.MOOT_VOTE)
        moot = OutgoingEmail.objects.filter(pk=pk, last_error=outbox.MOOT_VOTE).exists()
        assert sent or moot, f"email {pk} was not sent"
    assert not OutgoingEmail.objects.filter(
        status__in=[Status.QUEUED, Status.RETRYING, Status.FAILED, Status.SENDING]
    ).exists()
    return smtp.messages[before:]


def flush(now) -> None:
    """The sweep's part for held emails (none before issue 10)."""
    flush_due = getattr(notify, "flush_due", None)
    if flush_due is not None:
        flush_due(now)


def is_game_over(message: EmailMessage) -> bool:
    return "FINAL SCORES" in text_of(message)


def latest_ask(messages: list[EmailMessage], to: str, game: Game) -> EmailMessage:
    """The newest email to `to` of the game's current phase that takes a reply."""
    phase = f"{game.pk}/{game.phase_number}"
    asks = [
        m
        for m in messages
        if recipient(m) == to and m["Reply-To"] and str(m[compose.PHASE_HEADER]) == phase
    ]
    assert asks, f"{to} is awaited in phase {phase} but has no email to reply to"
    return asks[-1]


def brain_move(brain: RandomPlayer, game: Game, colour: str) -> str:
    for _ in range(20):
        move = brain.choose(game.engine_state, colour)
        if not isinstance(move, EndAlliance):
            return format_move(move)
    pytest.fail("the brain only wants to end an alliance")


@dataclass(frozen=True)
class Spoken:
    """A message the test wrote to the table: by whom (a colour), to whom ("" everyone),
    how ("beside" a move by email, "alone" in a reply, "web"), and its text."""

    sender: str
    to: str
    way: str
    text: str

    @property
    def mark(self) -> str:
        """What only this message's text holds ("talk-07 "), to find it in any body."""
        return self.text.split(" ", 1)[0] + " "


def talk_text(number: int, sender: str, to: str) -> str:
    """A message's text: one line, or (every third) two."""
    text = f"talk-{number:02d} from {sender} to {to or 'everyone'}: shall we share the hills"
    return text + f"\nand talk-{number:02d} goes on: the river is mine" if number % 3 == 0 else text


def talk_lines(spoken: Spoken) -> list[str]:
    """The reply lines that write the message: `say …` or `to <colour>: …`, then the
    message's further lines (a blank line or a move ends it)."""
    first, *more = spoken.text.split("\n")
    return [f"to {spoken.to}: {first}" if spoken.to else f"say {first}", *more]


@dataclass
class Cadence:
    """Per person: the phases that awaited them, the emails they received (the final
    game-over email aside), those that were a move's confirmation alone, their moves
    sent by email, the emails of messages alone. And the table talk: what was said, every
    email received, the game, the hours of quiet (slow pace: a message without a move)."""

    awaited: Counter[str] = field(default_factory=Counter)
    received: Counter[str] = field(default_factory=Counter)
    everything: Counter[str] = field(default_factory=Counter)
    lone_notices: Counter[str] = field(default_factory=Counter)
    extensions: int = 0
    watched_steps: int = 0
    lone_confirmations: Counter[str] = field(default_factory=Counter)
    moves_by_email: Counter[str] = field(default_factory=Counter)
    lone_messages: Counter[str] = field(default_factory=Counter)
    spoken: list[Spoken] = field(default_factory=list)
    mail: list[EmailMessage] = field(default_factory=list)
    game: Game | None = None
    quiet_hours: int = 0

    def per_ask(self, who: str | None = None) -> float:
        people = [who] if who else list(self.awaited)
        return sum(self.received[p] for p in people) / sum(self.awaited[p] for p in people)

    def all_per_ask(self) -> float:
        """Every email received, the game-over ones and every notice included, per phase
        that awaited a person."""
        return sum(self.everything.values()) / sum(self.awaited.values())

    def report(self) -> str:
        return (
            ", ".join(
                f"{p.partition('@')[0]} {self.per_ask(p):.2f}"
                f" ({self.lone_confirmations[p]} confirmations alone of "
                f"{self.moves_by_email[p]} moves by email, "
                f"{self.lone_messages[p]} emails of messages alone, "
                f"{self.lone_notices[p]} extension emails alone)"
                for p in self.awaited
            )
            + f"; all {self.per_ask():.2f}"
            + f"; everything counted {self.all_per_ask():.2f}"
            + f"; {len(self.spoken)} messages, {self.quiet_hours} hours of quiet"
            + f", {self.extensions} extensions, {self.watched_steps} steps watched"
        )


def play_whole_game(
    alice, bob, charlie, smtp, pace: str, seed: int, talk: bool = True, notices: bool = True
) -> Cadence:
    game = services.create_game(
        alice,
        name="Cadence",
        player_count=4,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=["grey"],
    )
    Game.objects.filter(pk=game.pk).update(seed=seed)
    services.join_game(game.pk, bob, "ochre")
    services.join_game(game.pk, charlie, "lilac")
    game = fresh(game)
    seats = {s.colour: s for s in game.seats.select_related("user__profile")}
    by_email = set(BY_EMAIL)
    brains = {c: RandomPlayer(f"cadence/{seed}/{c}") for c in seats}
    notify.phase_changed(game.pk, game.phase_number)
    mail = deliver(smtp)
    cadence = Cadence(game=game)
    awaited = cadence.awaited
    seen: set[int] = set()
    beside: dict[str, list[Spoken]] = {c: [] for c in BY_EMAIL}  # for the next move

    def say(step: int) -> bool:
        """The step's talk, if any; whether it was a message without a move."""
        if not talk or step % TALK_EVERY != TALK_EVERY // 2:
            return False
        number = step // TALK_EVERY + 1
        sender, way, to = TALK[(number - 1) % len(TALK)]
        spoken = Spoken(sender, to, way, talk_text(number, sender, to))
        if way == "beside":
            beside[sender].append(spoken)
            return False
        user = seats[sender].user
        if way == "web":
            chat.post(game.pk, user.pk, spoken.text, to)
        else:  # a reply to their latest email (any will do for talk), messages only
            latest = [m for m in mail if recipient(m) == user.email and m["Reply-To"]][-1]
            said = receive_in_process(
                reply(latest, user.email, user.profile.display_name, talk_lines(spoken))
            )
            assert said.startswith("receive_email: accepted: Sent: your message"), said
        cadence.spoken.append(spoken)
        return True

    def watches(step: int) -> bool:
        """Whether charlie has the game page open and visible at this step (its poll
        says so: games.watching); else he looked last an hour ago."""
        if not notices or (step // WATCH) % 2:
            watching.saw(game.pk, charlie.pk, now=timezone.now() - timedelta(hours=1))
            return False
        watching.saw(game.pk, charlie.pk)
        return True

    def deadline_notices(step: int) -> None:
        """The table extends the deadline now and then (alice proposes, charlie's yes on
        the page passes it, as the limits of a game allow: games.votes); bob is away for a
        while."""
        if not notices:
            return
        if step % EXTEND_EVERY == EXTEND_EVERY - 1:
            try:
                votes.propose(game.pk, alice, "extend", 1 + step % 24)
                votes.cast(game.pk, charlie, True)
            except services.GameError:
                pass  # the table's limits, or a pause: no more extensions for now
        if step == AWAY.start:
            Notifications.objects.update_or_create(
                user=bob,
                defaults={"away_from": timezone.now(), "away_until": timezone.now() + HOURS},
            )
        if step == AWAY.stop:
            Notifications.objects.filter(user=bob).update(away_until=None, away_from=None)
        deadlines.settle_absences(timezone.now())  # the sweep's step

    for step in range(MAX_STEPS):
        game = fresh(game)
        if game.is_finished:
            break
        if game.phase_number not in seen:  # each phase once: who it awaits
            seen.add(game.phase_number)
            awaited.update(seats[c].user.email for c in game.waiting if seats[c].user)
        watched = watches(step)
        cadence.watched_steps += watched
        deadline_notices(step)
        quiet = say(step)
        done = set(
            PendingSubmission.objects.filter(game=game, phase_number=game.phase_number).values_list(
                "seat__colour", flat=True
            )
        )
        colour = next(c for c in game.waiting if c not in done)
        seat_ = seats[colour]
        if seat_.is_computer:
            assert services.play_computer(game.pk, game.phase_number, seat_.pk)
        elif colour in by_email:
            user = seat_.user
            lines = [brain_move(brains[colour], game, colour)]
            talking, beside[colour] = beside[colour], []
            for spoken in talking:  # before the move, or after it (and a blank line)
                lines = (
                    [*talk_lines(spoken), *lines]
                    if len(cadence.spoken) % 2
                    else [*lines, *talk_lines(spoken), ""]
                )
            ask = latest_ask(mail, user.email, game)
            said = receive_in_process(reply(ask, user.email, user.profile.display_name, lines))
            assert said.startswith("receive_email: accepted"), said
            cadence.spoken.extend(talking)
            cadence.moves_by_email[user.email] += 1
        else:
            services.submit(game.pk, seat_.pk, parse_move(brain_move(brains[colour], game, colour)))
        if services.resolve(game.pk, game.phase_number):  # the worker, within seconds
            notify.phase_changed(game.pk, fresh(game).phase_number)
            if watched:  # his page's next poll shows him the new phase
                watching.saw(game.pk, charlie.pk)
        mail += deliver(smtp)
        if pace == "slow":  # the next move comes after the confirmation's window; after
            # a message without a move, an hour later (the owed messages go)
            window = getattr(settings, "EMAIL_COALESCE_SECONDS", 120)  # none before issue 10
            if quiet:
                window = settings.EMAIL_MESSAGES_HOLD_SECONDS
                cadence.quiet_hours += 1
            flush(timezone.now() + timedelta(seconds=window + 1))
            mail += deliver(smtp)
    else:
        pytest.fail(f"no end after {MAX_STEPS} steps")
    people = [s.user.email for s in seats.values() if s.user]
    over = Counter(recipient(m) for m in mail if is_game_over(m))
    assert all(over[p] == 1 for p in people), over
    cadence.received.update(recipient(m) for m in mail if not is_game_over(m))
    cadence.everything.update(recipient(m) for m in mail)
    cadence.lone_notices.update(
        recipient(m) for m in mail if str(m[KIND_HEADER] or "") == "deadline_extended"
    )
    cadence.extensions = Event.objects.filter(game=game, kind="deadline_extended").count()
    cadence.lone_confirmations.update(
        recipient(m) for m in mail if str(m[KIND_HEADER] or "") == "move_accepted"
    )
    cadence.lone_messages.update(
        recipient(m) for m in mail if str(m[KIND_HEADER] or "") == "messages"
    )
    assert all(awaited[p] for p in people)
    cadence.mail = mail
    assert not OutgoingEmail.objects.filter(status=Status.COALESCING).exists(), (
        "something owed was never told"
    )
    return cadence


@pytest.mark.parametrize("pace", ["fast", "slow"])
def test_a_person_gets_at_most_about_one_email_per_phase_that_awaits_them(
    alice, bob, charlie, smtp, no_broker, pace
):
    cadence = play_whole_game(alice, bob, charlie, smtp, pace, seed=7)
    print(
        f"\nemails per phase that awaited the person ({pace}, with table talk, extensions, "
        f"an absence and a watcher): {cadence.report()}"
    )
    assert cadence.extensions > 3 and cadence.watched_steps > 0, cadence.report()
    if pace == "fast":  # every email counted, the final scores and the notices too
        assert cadence.all_per_ask() <= TARGET, cadence.report()
    for person in cadence.awaited:
        if pace == "fast":  # everything rides in the next ask, the messages too
            assert cadence.per_ask(person) <= TARGET, cadence.report()
        else:  # a move by email not followed by an ask within the window is confirmed:
            # alone, or in the results it waited for; messages owed an hour, alone or in
            # the results owed. The rest: one per ask.
            assert (
                cadence.received[person]
                <= TARGET * cadence.awaited[person]
                + cadence.moves_by_email[person]
                + cadence.quiet_hours
            ), cadence.report()
    assert_the_talk_told(cadence, pace)


# --- the table talk of the whole games ------------------------------------------------------------


HEADING = re.compile(r"(?P<heading>\S.*) \(turn \d+\):")


def told(message: EmailMessage) -> list[tuple[str, str]]:
    """The messages an email tells in its MESSAGES part: (heading, text)."""
    lines = text_of(message).splitlines()
    start = next(
        (i for i, line in enumerate(lines) if line == "MESSAGES" or line.startswith("MESSAGES (")),
        None,
    )
    if start is None:
        return []
    found: list[tuple[str, str]] = []
    at = start + 1
    while at < len(lines) and (heading := HEADING.fullmatch(lines[at])):
        at += 1
        text = []
        while at < len(lines) and lines[at].startswith("  "):
            text.append(lines[at][2:])
            at += 1
        found.append((heading["heading"], "\n".join(text)))
    return found


def html_of(message: EmailMessage) -> str:
    return message.get_body(("html",)).get_content()


def expected_heading(spoken: Spoken, reader: str, names: dict[str, str]) -> str:
    """chat.heading, as the reader of the colour `reader` must see it."""
    sender = "You" if reader == spoken.sender else f"{names[spoken.sender]} ({spoken.sender})"
    if not spoken.to:
        return f"{sender} to everyone"
    return (
        f"{sender} to you only"
        if reader == spoken.to
        else f"{sender} to {names[spoken.to]} ({spoken.to}) only"
    )


def assert_the_talk_told(cadence: Cadence, pace: str) -> None:
    game = cadence.game
    assert game is not None
    seats = {
        s.colour: s
        for s in Seat.objects.filter(
            game=game, user__isnull=False, is_computer=False
        ).select_related("user__profile")
    }
    names = {c: s.display_name for c, s in seats.items()}
    spoken = cadence.spoken
    # The game talked every way: by each person, beside moves, alone, on the web, to
    # everyone and to one.
    assert {s.sender for s in spoken} == set(seats), spoken
    assert {s.way for s in spoken} == {"beside", "alone", "web"}, spoken
    assert {bool(s.to) for s in spoken} == {True, False}, spoken
    assert len({s.mark for s in spoken}) == len(spoken)
    assert Message.objects.filter(game=game).count() == len(spoken)
    bodies = {
        c: [m for m in cadence.mail if recipient(m) == s.user.email] for c, s in seats.items()
    }
    told_to = {c: [t for m in mail for t in told(m)] for c, mail in bodies.items()}
    for s in spoken:
        readers = {s.sender, s.to} if s.to else set(seats)
        for colour, mail in bodies.items():
            headings = [heading for heading, text in told_to[colour] if text == s.text]
            if colour in readers:  # told once, as the reader's own heading says it
                assert headings == [expected_heading(s, colour, names)], (colour, s)
                # the HTML part tells what the text part tells (the sender's echo too)
                assert sum(text_of(m).count(s.mark) for m in mail) == sum(
                    html_of(m).count(s.mark) for m in mail
                ), (colour, s)
            else:  # not a word of it, anywhere in their emails
                assert headings == [], (colour, s)
                assert not [
                    m
                    for m in mail
                    if s.mark in text_of(m) or s.mark in html_of(m) or s.mark in str(m["Subject"])
                ], (colour, s)
    # Nothing but these messages in the MESSAGES parts (no message told twice over).
    assert all(text in {s.text for s in spoken} for t in told_to.values() for _, text in t)
    if pace == "slow":  # an hour after a message: some go in an email of their own
        assert sum(cadence.lone_messages.values()) > 0, cadence.report()
        alone = {
            text
            for m in cadence.mail
            if str(m[KIND_HEADER] or "") == "messages"
            for _, text in told(m)
        }
        print(
            f"{len(alone)} of {len(spoken)} messages told in an email of messages alone "
            f"to someone; the rest rode in other emails"
        )
    # The archive: the messages to everyone, none of the private ones.
    page = Client().get(reverse("archive_game", args=[game.pk]))
    assert page.status_code == 200
    content = page.content.decode()
    for s in spoken:
        assert (s.mark in content) == (not s.to), s


# --- coalescing ---------------------------------------------------------------------------------


def computer_game(alice, bob) -> Game:
    """alice (red) and bob (ochre) with a computer (lilac)."""
    game = services.create_game(
        alice,
        name="Test game",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=["lilac"],
    )
    services.join_game(game.pk, bob, "ochre")
    return fresh(game)


def advance(game: Game, until) -> Game:
    """Play (computers and people alike, the first awaited seat first), telling every
    phase, until `until(game)`."""
    for _ in range(500):
        game = fresh(game)
        if until(game) or game.is_finished:
            return game
        done = set(
            PendingSubmission.objects.filter(game=game, phase_number=game.phase_number).values_list(
                "seat__colour", flat=True
            )
        )
        colour = next(c for c in game.waiting if c not in done)
        s = game.seats.get(colour=colour)
        move = RandomPlayer(f"advance/{game.phase_number}/{colour}")
        for _ in range(20):
            chosen = move.choose(game.engine_state, colour)
            if not isinstance(chosen, EndAlliance):
                break
        services.submit(game.pk, s.pk, chosen)
        if services.resolve(game.pk, game.phase_number):
            notify.phase_changed(game.pk, fresh(game).phase_number)
    pytest.fail("the game did not get there")


def test_results_that_ask_nothing_wait_for_the_next_ask_and_ride_in_it(alice, bob):
    game = computer_game(alice, bob)
    notify.phase_changed(game.pk, game.phase_number)
    # Until a phase awaits alice without bob: bob's results of it are held, not sent.
    game = advance(
        game, lambda g: g.phase_number > 2 and "red" in g.waiting and "ochre" not in g.waiting
    )
    held = [e for e in sent_to(bob, "results") if e.status == Status.COALESCING]
    assert held, "no results held for bob"
    assert not OutgoingEmail.objects.filter(user=bob, kind="results", status=Status.QUEUED).exists()
    game = advance(game, lambda g: "ochre" in g.waiting)
    ask = sent_to(bob, "your_turn")[-1]
    assert ask.phase_number == game.phase_number
    assert "WHAT HAPPENED SINCE OUR LAST EMAIL" in ask.text
    assert all(fresh_email(e).status == Status.FOLDED for e in held)
    assert f"told in email {ask.pk}" in fresh_email(held[0]).last_error
    # One ask per phase that awaits bob, and no other email to him.
    assert {e.kind for e in sent_to(bob) if e.status != Status.FOLDED} <= {"your_turn", "results"}
    assert not [e for e in sent_to(bob) if e.status == Status.QUEUED and e.kind == "results"]


def fresh_email(email: OutgoingEmail) -> OutgoingEmail:
    return OutgoingEmail.objects.get(pk=email.pk)


def test_held_results_go_alone_once_due_in_one_email_and_once(alice, bob):
    game = computer_game(alice, bob)
    notify.phase_changed(game.pk, game.phase_number)
    game = advance(
        game,
        lambda g: len([e for e in sent_to(bob, "results") if e.status == Status.COALESCING]) >= 2,
    )
    held = [e for e in sent_to(bob, "results") if e.status == Status.COALESCING]
    assert notify.flush_due(timezone.now()) == 0  # not due yet
    later = timezone.now() + timedelta(seconds=settings.EMAIL_RESULTS_HOLD_SECONDS + 1)
    assert notify.flush_due(later) >= 1
    assert notify.flush_due(later) == 0  # idempotent: told already
    (alone,) = [e for e in sent_to(bob, "results") if e.status == Status.QUEUED]
    assert alone.phase_number is None and "What happened" in compose.summary_line(alone.summary)
    assert all(fresh_email(e).status == Status.FOLDED for e in held)
    # what the held rows were about is in it: the news of every held phase
    shown = present(fresh(game), seat(game, bob))
    for e in held:
        for line in compose.news(shown.events(phase_number=e.phase_number)):
            assert line in alone.text


def test_the_sweep_sends_what_is_due_even_if_no_task_is_left(alice, bob, monkeypatch):
    game = computer_game(alice, bob)
    s = seat(game, alice)
    compose.move_reply(s, True, ["decide 3"], "Accepted: decide 3.", coalesce=True)
    (held,) = sent_to(alice, "move_accepted")
    assert held.status == Status.COALESCING
    monkeypatch.setattr(tasks.send_email, "apply_async", lambda *a, **k: None)
    tasks.sweep_once(timezone.now())
    assert fresh_email(held).status == Status.COALESCING  # within its window
    tasks.sweep_once(timezone.now() + timedelta(seconds=settings.EMAIL_COALESCE_SECONDS + 1))
    assert fresh_email(held).status == Status.QUEUED  # the answer alone, as it was written


def test_a_held_confirmation_queues_the_task_that_sends_it_when_due(
    game, alice, monkeypatch, settings, django_capture_on_commit_callbacks
):
    queued: list[tuple] = []
    monkeypatch.setattr(
        tasks.flush_held, "apply_async", lambda args, **options: queued.append((args, options))
    )
    monkeypatch.setattr(tasks.send_email, "apply_async", lambda *args, **options: None)
    # A window the broker may hold a task for (issue 21: the longer ones are the sweep's).
    window = settings.EMAIL_COALESCE_SECONDS = int(tasks.longest_countdown()) - 1
    with django_capture_on_commit_callbacks(execute=True):
        compose.move_reply(seat(game, alice), True, ["decide 3"], "Accepted: decide 3.")
    ((args, options),) = queued
    assert args == (alice.pk, game.pk) and window < options["countdown"] <= window + 1
    assert not tasks.flush_held(alice.pk, game.pk)  # early (a clock apart): nothing yet
    settings.EMAIL_COALESCE_SECONDS = 0
    with django_capture_on_commit_callbacks(execute=True):
        compose.move_reply(seat(game, alice), True, ["decide 2"], "Accepted: decide 2.")
    assert tasks.flush_held(alice.pk, game.pk)
    assert not tasks.flush_held(alice.pk, game.pk)  # a redelivered task: nothing
    # the latest answer goes; the earlier one, replaced, is told in it
    assert [e.status for e in sent_to(alice)] == [Status.FOLDED, Status.QUEUED]
    queued.clear()
    with django_capture_on_commit_callbacks(execute=True):  # results held for hours: the
        compose.results(
            game,
            seat(game, alice),
            game.phase_number,  # sweep sends them
            hold_until=timezone.now() + timedelta(hours=6),
        )
    assert queued == []


# --- no task waits in the broker longer than its visibility timeout (issue 21) ------------


def short_timeout(settings) -> None:
    """A deployment with a short visibility timeout (30 s tasks: Redis redelivers after
    60 s), and confirmations held longer than that (120 s, the default)."""
    settings.TASK_TIME_LIMIT_SECONDS = 30
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 60}
    settings.EMAIL_COALESCE_SECONDS = 120


def fits(countdown: float) -> bool:
    """A countdown's task, taken by a worker at once and acknowledged after its longest
    run, is acknowledged within the visibility timeout."""
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get(
        "visibility_timeout", tasks.REDIS_VISIBILITY_TIMEOUT
    )
    return countdown + settings.TASK_TIME_LIMIT_SECONDS < visibility


@pytest.mark.parametrize("deployment", ["as set", "short timeout"])
def test_no_held_email_waits_in_the_broker_past_its_visibility_timeout(
    deployment, monkeypatch, settings
):
    if deployment == "short timeout":
        short_timeout(settings)
    countdowns: list[float] = []
    monkeypatch.setattr(
        tasks.flush_held, "apply_async", lambda args, countdown, **_: countdowns.append(countdown)
    )
    waits = [0, 1, 5, 19, 20, 21, 29, 30, 59, 60, 119, 120, 600, 3600, 6 * 3600]
    for seconds in waits:
        outbox.email_held.send(sender=OutgoingEmail, user_id=1, game_id=1, seconds=seconds)
    assert countdowns and all(fits(countdown) for countdown in countdowns), countdowns
    assert len(countdowns) < len(waits)  # the others: the sweep's


@pytest.mark.parametrize("deployment", ["as set", "short timeout"])
def test_no_retry_waits_in_the_broker_past_its_visibility_timeout(deployment, settings):
    if deployment == "short timeout":
        short_timeout(settings)
    assert fits(tasks.survives()["retry_backoff_max"])
    if deployment == "as set":  # the tasks' own, made from the settings at import
        for task in (
            tasks.resolve_phase,
            tasks.notify_phase,
            tasks.send_email,
            tasks.flush_held,
            tasks.sweep,
        ):
            assert task.retry_backoff_max == tasks.survives()["retry_backoff_max"]


def test_a_countdown_past_the_visibility_timeout_is_refused_and_logged(monkeypatch, caplog):
    sent: list[tuple] = []
    monkeypatch.setattr(tasks.flush_held, "apply_async", lambda *a, **k: sent.append(a))
    tasks.queue(tasks.flush_held, 1, 1, countdown=tasks.longest_countdown() + 1)
    assert sent == []
    assert "outlasts the broker's visibility timeout" in caplog.text


def test_a_confirmation_held_past_a_short_visibility_timeout_is_sent_by_the_sweep(
    game, alice, monkeypatch, settings, django_capture_on_commit_callbacks
):
    short_timeout(settings)
    held: list[tuple] = []
    monkeypatch.setattr(tasks.flush_held, "apply_async", lambda *a, **k: held.append(a))
    monkeypatch.setattr(tasks.send_email, "apply_async", lambda *a, **k: None)
    with django_capture_on_commit_callbacks(execute=True):
        compose.move_reply(seat(game, alice), True, ["decide 3"], "Accepted: decide 3.")
    (email,) = sent_to(alice, "move_accepted")
    assert held == [] and email.status == Status.COALESCING  # no task waits 121 s in Redis
    tasks.sweep_once(timezone.now() + timedelta(seconds=settings.EMAIL_COALESCE_SECONDS + 1))
    assert fresh_email(email).status == Status.QUEUED


def test_the_confirmation_of_a_move_by_email_rides_in_the_next_email(game, alice, bob, charlie):
    s = seat(game, alice)
    compose.move_reply(s, True, ["decide 3"], "Accepted: decide 3.", coalesce=True)
    (held,) = sent_to(alice, "move_accepted")
    game = decide_all(game)
    notify.phase_changed(game.pk, game.phase_number)
    line = "Your move by email was accepted: decide 3."
    if "red" in game.waiting:  # the ask carries it
        ask = sent_to(alice, "your_turn")[-1]
        assert ask.phase_number == game.phase_number and ask.status == Status.QUEUED
        assert line in ask.text and line in ask.html
    else:  # the held results carry it, sent when the confirmation may not wait longer
        assert (
            notify.flush_due(
                timezone.now() + timedelta(seconds=settings.EMAIL_COALESCE_SECONDS + 1)
            )
            == 1
        )
        (news,) = [e for e in sent_to(alice, "results") if e.status == Status.QUEUED]
        assert line in news.text and "The decisions are revealed" in news.text
    assert fresh_email(held).status == Status.FOLDED
    assert [e.kind for e in sent_to(alice) if e.status == Status.QUEUED] in (
        [],
        ["your_turn"],
        ["results"],
    )


def test_a_refused_move_is_answered_at_once(game, alice):
    compose.move_reply(seat(game, alice), False, ["decide 9"], "There is no card 9.")
    assert [e.status for e in sent_to(alice)] == [Status.QUEUED]


def test_a_reminder_not_sent_yet_gives_way_to_the_next_ask_and_a_sent_ask_does_not(
    game, alice, bob, charlie
):
    """The ledger tells notify who has a stale ask (games.mail.notify._ledger): a
    reminder counts, an ask already sent does not."""
    notify.phase_changed(game.pk, game.phase_number)
    ask = sent_to(alice, "your_turn")[0]
    OutgoingEmail.objects.filter(pk=ask.pk).update(status=Status.SENT)
    compose.reminder(game, seat(game, alice))
    (reminder,) = sent_to(alice, "reminder")
    assert reminder.status == Status.QUEUED
    game = decide_all(game)
    Game.objects.filter(pk=game.pk).update(waiting=["red"])  # alice asked again
    notify.phase_changed(game.pk, game.phase_number)
    assert fresh_email(reminder).status == Status.FOLDED
    assert fresh_email(ask).status == Status.SENT
    assert sent_to(alice, "your_turn")[-1].status == Status.QUEUED


def test_an_ask_not_sent_yet_gives_way_to_the_next(game, alice, bob, charlie):
    notify.phase_changed(game.pk, game.phase_number)
    first = sent_to(alice, "your_turn")[0]
    game = decide_all(game)
    Game.objects.filter(pk=game.pk).update(waiting=["red"])  # alice asked again
    notify.phase_changed(game.pk, game.phase_number)
    assert fresh_email(first).status == Status.FOLDED
    newer = sent_to(alice, "your_turn")[-1]
    assert newer.status == Status.QUEUED
    # what the unsent ask would have told is in the newer one
    assert "The action card" in newer.text.partition("WHAT HAPPENED SINCE")[2]


# --- threading and order ------------------------------------------------------------------------


def test_a_games_emails_thread_under_one_subject_and_root(game, alice, bob, charlie, smtp):
    notify.phase_changed(game.pk, game.phase_number)
    compose.move_reply(seat(game, alice), False, ["decide 9"], "There is no card 9.")
    other = fresh(
        services.create_game(
            alice,
            name="Another",
            player_count=3,
            setup="basic",
            decisions="sealed",
            money="hidden",
            deadline_hours=48,
            invite_only=False,
            colour="red",
            computer_colours=["ochre", "lilac"],
        )
    )
    notify.phase_changed(other.pk, other.phase_number)
    messages = deliver(smtp)
    root = f"<game-{game.pk}-{fresh(game).mail_thread}@{settings.REPLY_DOMAIN}>"
    ours = [m for m in messages if str(m["Subject"]) == "Löwenherz: Test game"]
    assert len(ours) == 4  # three asks and the refusal
    ids = set()
    for message in ours:
        assert str(message["In-Reply-To"]) == root and str(message["References"]) == root
        ids.add(str(message["Message-ID"]))
    assert len(ids) == 4 and root not in ids
    theirs = [m for m in messages if str(m["Subject"]) == "Löwenherz: Another"]
    assert theirs and all(str(m["References"]) != root for m in theirs)


def test_a_persons_emails_leave_in_the_order_they_were_written(game, alice, monkeypatch):
    handed: list[int] = []
    monkeypatch.setattr(outbox, "_dispatch", handed.append)
    compose.your_turn(game, seat(game, alice))
    compose.move_reply(seat(game, alice), False, ["decide 9"], "There is no card 9.")
    first, second = sent_to(alice)
    assert not outbox.send(second.pk)  # waits behind the first
    assert fresh_email(second).status == Status.QUEUED
    handed.clear()
    assert outbox.send(first.pk)
    assert handed == [second.pk]  # the first's send hands the second on
    assert outbox.send(second.pk)


# --- muting one game -----------------------------------------------------------------------------


def test_a_muted_game_sends_nothing_but_its_end(alice, bob, charlie):
    game = computer_game(alice, bob)
    notify.set_muted(seat(game, bob), True)
    notify.phase_changed(game.pk, game.phase_number)
    game = advance(game, lambda g: g.is_finished)
    assert [e.kind for e in sent_to(bob)] == ["game_over"]
    assert sent_to(alice, "your_turn")


def test_the_muted_are_not_reminded(game, alice):
    notify.set_muted(seat(game, alice), True)
    notify.arm_reminders(timezone.now())
    assert Reminder.objects.exists()
    assert not Reminder.objects.filter(seat__user=alice).exists()


def test_muting_drops_the_results_owed(alice, bob):
    game = computer_game(alice, bob)
    notify.phase_changed(game.pk, game.phase_number)
    game = advance(
        game, lambda g: any(e.status == Status.COALESCING for e in sent_to(bob, "results"))
    )
    notify.set_muted(seat(game, bob), True)
    assert not [e for e in sent_to(bob) if e.status == Status.COALESCING]
    notify.flush_due(timezone.now() + timedelta(days=2))
    assert not [e for e in sent_to(bob, "results") if e.status == Status.QUEUED]


def test_the_link_in_an_email_mutes_its_game_after_a_click_to_confirm(game, alice):
    email = compose.your_turn(game, seat(game, alice))
    assert email is not None
    link = next(
        line.split(": ", 1)[1]
        for line in email.text.splitlines()
        if line.startswith("No more emails of this game but its end: ")
    )
    assert "Mute this game" in email.html
    path = link.removeprefix(settings.SITE_URL)
    client = Client()
    page = client.get(path)
    assert page.status_code == 200 and b"mute-confirm" in page.content
    assert not seat(game, alice).mail_muted  # a GET (a mail scanner) changes nothing
    signed = path.partition("?s=")[2]
    assert (
        client.post(reverse("mute_game", args=[game.pk]), {"s": signed, "muted": "on"}).status_code
        == 200
    )
    assert seat(game, alice).mail_muted
    # the link is for one person and game: not another game's, not tampered
    other = computer_game(alice, alice_friend())
    assert client.post(reverse("mute_game", args=[other.pk]), {"s": signed}).status_code == 400
    assert client.post(reverse("mute_game", args=[game.pk]), {"s": signed + "x"}).status_code == 400


def alice_friend():
    from tests.site.conftest import make_user

    return make_user("erin")


def test_the_game_page_mutes_and_unmutes_for_the_signed_in_player(game, alice, bob):
    client = Client()
    client.force_login(alice)
    page = client.get(reverse("game", args=[game.pk]))
    assert b'id="mute-button"' in page.content
    client.post(reverse("mute_game", args=[game.pk]), {"muted": "on"})
    assert seat(game, alice).mail_muted and not seat(game, bob).mail_muted
    assert b"Unmute this game" in client.get(reverse("game", args=[game.pk])).content
    client.post(reverse("mute_game", args=[game.pk]), {"muted": "off"})
    assert not seat(game, alice).mail_muted
    anonymous = Client().post(reverse("mute_game", args=[game.pk]), {"muted": "on"})
    assert anonymous.status_code == 302 and not seat(game, alice).mail_muted
