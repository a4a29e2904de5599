"""The table decides together (issue 24, item 4): a vote of the people seated to extend the
current phase's deadline or to pause the phase (games.votes), within the limits a club
would set; by the game page and by a reply (`vote yes`, in three languages).

alice (red) proposes, bob (ochre) and charlie (lilac) vote; three people seated make a
majority of two. Phases are resolved by hand and sweeps given their `now`, as in
test_deadlines; the races run on PostgreSQL with real threads.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from email.message import EmailMessage

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError
from django.urls import reverse
from django.utils import timezone

from engine import game as engine
from engine.notation import format_move
from games import services, votes
from games.mail import notify, outbox, replies
from games.mail.inbound import Verdict, handle_message
from games.mail.tokens import reply_address
from games.models import Ballot, DeadlineVote, Event, Game, OutgoingEmail, Profile, Reminder, Seat
from games.tasks import sweep_once as sweep
from tests.site.conftest import three_player_game
from tests.site.test_deadlines import (
    HOUR,
    MINUTE,
    at,
    at_once,
    away,
    decide,
    events,
    fresh,
    log_in,
    no_dispatch,  # noqa: F401  (a fixture)
    no_sweep_errors,  # noqa: F401  (a fixture, for every test here)
    reminded,  # noqa: F401  (a fixture, for every test here: no reminder is built)
    seat,
    slowly,
)

pytestmark = pytest.mark.django_db
Status = DeadlineVote.Status
DAY = timedelta(days=1)


@pytest.fixture(autouse=True)
def fast_passwords(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def kinds(game: Game) -> list[str]:
    """The game's site events of the votes, in order."""
    names = {"vote_proposed", "vote_cast", "vote_rejected", "vote_expired", "deadline_extended"}
    return [e.kind for e in Event.objects.filter(game=game, kind__in=names).order_by("index")]


def with_computers(alice: User, computers: list[str], people: dict[str, User]) -> Game:
    """alice red, the computers, and `people` (colour: person) joined."""
    game = services.create_game(
        alice,
        name="Table",
        player_count=1 + len(computers) + len(people),
        setup="variable",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=computers,
    )
    for colour, person in people.items():
        services.join_game(game.pk, person, colour)
    return fresh(game)


# --- a majority of the people seated ----------------------------------------------------------


def test_a_majority_of_the_people_seated_extends_the_deadline(game, alice, bob):
    deadline = game.deadline
    proposal = votes.propose(game.pk, alice, "extend", 24)
    assert proposal.status == Status.OPEN and fresh(game).deadline == deadline  # 1 of 2
    votes.cast(game.pk, bob, True)
    assert fresh(game).deadline == deadline + 24 * HOUR
    assert DeadlineVote.objects.get().status == Status.PASSED
    assert kinds(game) == ["vote_proposed", "vote_cast", "deadline_extended"]
    assert events(game, "deadline_extended")[0]["reason"] == "vote"


def test_a_proposal_is_rejected_once_no_majority_is_left(game, alice, bob, charlie):
    deadline = game.deadline
    votes.propose(game.pk, alice, "pause", 2)
    votes.cast(game.pk, bob, False)
    assert DeadlineVote.objects.get().status == Status.OPEN  # charlie's yes would pass it
    votes.cast(game.pk, charlie, False)
    assert DeadlineVote.objects.get().status == Status.REJECTED
    after = fresh(game)
    assert (after.deadline, after.paused) == (deadline, False)
    assert kinds(game)[-1] == "vote_rejected"


def test_computers_do_not_vote_and_one_person_seated_decides_alone(alice):
    game = with_computers(alice, ["ochre", "lilac"], {})
    deadline = game.deadline
    assert votes.propose(game.pk, alice, "extend", 5).status == Status.PASSED
    assert fresh(game).deadline == deadline + 5 * HOUR
    assert not OutgoingEmail.objects.filter(kind="vote_proposed").exists()  # nobody to ask


def test_two_people_and_a_computer_need_both(alice, bob):
    game = with_computers(alice, ["lilac"], {"ochre": bob})
    votes.propose(game.pk, alice, "extend", 5)
    assert DeadlineVote.objects.get().status == Status.OPEN  # 1 of 2: no majority
    votes.cast(game.pk, bob, True)
    assert DeadlineVote.objects.get().status == Status.PASSED


def test_a_person_who_conceded_no_longer_votes(game, alice, bob, charlie):
    services.concede(game.pk, charlie)
    with pytest.raises(services.GameError, match="conceded"):
        votes.propose(game.pk, charlie, "extend", 5)
    votes.propose(game.pk, alice, "extend", 5)
    assert votes.tally(DeadlineVote.objects.get(), list(fresh(game).seats.all())).needed == 2
    with pytest.raises(services.GameError, match="conceded"):
        votes.cast(game.pk, charlie, True)


def test_who_votes_is_one_rule_in_sql_and_on_a_loaded_seat(alice, bob, charlie):
    game = with_computers(alice, ["grey"], {"ochre": bob, "lilac": charlie})
    Seat.objects.filter(game=game, colour="ochre").update(standin=True)  # still votes
    services.concede(game.pk, charlie)
    in_sql = set(votes.voters(game).values_list("colour", flat=True))
    loaded = {s.colour for s in game.seats.all() if votes.is_voter(s)}
    assert in_sql == loaded == {"red", "ochre"}


def test_a_stranger_neither_proposes_nor_votes(game, alice, dave):
    with pytest.raises(services.GameError, match="no seat"):
        votes.propose(game.pk, dave, "extend", 5)
    votes.propose(game.pk, alice, "extend", 5)
    with pytest.raises(services.GameError, match="no seat"):
        votes.cast(game.pk, dave, True)
    assert Ballot.objects.count() == 1


def test_a_vote_once_cast_stands(game, alice, bob):
    votes.propose(game.pk, alice, "pause", 1)
    votes.cast(game.pk, bob, False)
    with pytest.raises(services.GameError, match="already"):
        votes.cast(game.pk, bob, True)
    with pytest.raises(services.GameError, match="already"):
        votes.cast(game.pk, alice, False)  # proposing was alice's yes
    assert Ballot.objects.filter(seat__user=bob).get().yes is False


# --- the limits a club would set ----------------------------------------------------------------


def test_one_open_proposal_at_a_time(game, alice, bob):
    votes.propose(game.pk, alice, "extend", 5)
    with pytest.raises(services.GameError, match="one at a time"):
        votes.propose(game.pk, bob, "pause", 1)
    assert DeadlineVote.objects.count() == 1


@pytest.mark.parametrize(
    ("kind", "amount", "refusal"),
    [
        ("extend", 0, "an extension is 1 to 72 hours"),
        ("extend", 73, "an extension is 1 to 72 hours"),
        ("pause", 8, "a pause is 1 to 7 days"),
        ("pause", 0, "a pause is 1 to 7 days"),
        ("shorten", 5, "propose an extension of the deadline or a pause"),
    ],
)
def test_an_extension_and_a_pause_are_bounded(game, alice, kind, amount, refusal):
    with pytest.raises(services.GameError, match=refusal):
        votes.propose(game.pk, alice, kind, amount)
    assert not DeadlineVote.objects.exists()


def test_the_changes_a_phase_and_a_game_allow(game, alice, bob, settings):
    settings.VOTE_CHANGES_PER_PHASE, settings.VOTE_CHANGES_PER_GAME = 2, 3
    for _ in range(2):
        votes.propose(game.pk, alice, "extend", 1)
        votes.cast(game.pk, bob, True)
    with pytest.raises(services.GameError, match="the most a phase allows"):
        votes.propose(game.pk, alice, "extend", 1)
    for colour in ("red", "ochre", "lilac"):
        decide(game, colour)
    services.resolve(game.pk, game.phase_number)  # a new phase: one more change left
    votes.propose(game.pk, alice, "extend", 1)
    votes.cast(game.pk, bob, True)
    with pytest.raises(services.GameError, match="the most a game allows"):
        votes.propose(game.pk, alice, "extend", 1)


def test_a_phase_takes_a_few_proposals_whatever_became_of_them(game, alice, bob, settings):
    settings.VOTE_PROPOSALS_PER_PHASE = 2
    for _ in range(2):
        votes.propose(game.pk, alice, "extend", 1)
        votes.cast(game.pk, bob, False)
        votes.cast(game.pk, User.objects.get(username="charlie"), False)
    with pytest.raises(services.GameError, match="2 proposals were made in this phase"):
        votes.propose(game.pk, bob, "extend", 1)


def test_a_proposal_expires_after_its_time_and_with_its_phase(game, alice, bob):
    proposal = votes.propose(game.pk, alice, "extend", 5)
    sweep(now=proposal.expires_at - MINUTE)
    assert DeadlineVote.objects.get().status == Status.OPEN
    # Past its time no vote counts, even before a sweep closes it.
    with at(proposal.expires_at), pytest.raises(services.GameError, match="no proposal"):
        votes.cast(game.pk, bob, True)
    assert DeadlineVote.objects.get().status == Status.EXPIRED
    assert kinds(game)[-1] == "vote_expired"
    votes.propose(game.pk, bob, "extend", 5)
    for colour in ("red", "ochre", "lilac"):
        decide(game, colour)
    services.resolve(game.pk, game.phase_number)
    sweep(now=timezone.now())  # the phase is over: so is its proposal
    assert list(DeadlineVote.objects.values_list("status", flat=True)) == [Status.EXPIRED] * 2
    assert fresh(game).deadline > game.deadline  # the new phase's own deadline, not 5 h more


def test_the_settings_refuse_a_limit_of_nothing(monkeypatch):
    from lowenherz_site.settings import env_count

    monkeypatch.setenv("VOTE_HOURS", "0")
    with pytest.raises(ValueError, match="VOTE_HOURS must be 1 or more"):
        env_count("VOTE_HOURS", 24)


# --- a pause -------------------------------------------------------------------------------------


def test_a_paused_phase_keeps_its_time_and_resumes_with_it(
    game,
    alice,
    bob,
    reminded,  # noqa: F811
):
    deadline = game.deadline
    voted = deadline - 30 * HOUR  # 30 hours are left when the pause begins
    with at(voted):
        votes.propose(game.pk, alice, "pause", 2)
        votes.cast(game.pk, bob, True)
    paused = fresh(game)
    assert paused.paused and paused.deadline is None and paused.paused_until == voted + 2 * DAY
    assert not Reminder.objects.filter(sent_at__isnull=True).exists()  # none while paused
    (event,) = events(game, "paused")
    assert event["remaining_seconds"] == 30 * 3600
    for now in (deadline + MINUTE, voted + 2 * DAY - MINUTE):  # its old deadline passes
        sweep(now=now)
    assert fresh(game).paused and reminded == []
    with pytest.raises(services.GameError, match="paused"):
        votes.propose(game.pk, bob, "extend", 5)
    sweep(now=voted + 2 * DAY + 5 * MINUTE)  # a sweep a little late: the time told holds
    resumed = fresh(game)
    assert not resumed.paused and resumed.paused_until is None
    assert resumed.deadline == voted + 2 * DAY + 30 * HOUR == deadline + 2 * DAY
    sweep(now=resumed.deadline - 2 * HOUR)
    assert sorted(reminded) == ["lilac", "ochre", "red"]


def test_a_pause_ends_with_its_phase_and_its_emails_tell_the_new_deadline(game, alice, bob):
    votes.propose(game.pk, alice, "pause", 3)
    votes.cast(game.pk, bob, True)
    for colour in ("red", "ochre", "lilac"):
        decide(game, colour)
    services.resolve(game.pk, game.phase_number)
    game = fresh(game)
    assert game.paused and game.deadline is not None  # until the sweep or the emails
    notify.phase_changed(game.pk, game.phase_number)
    after = fresh(game)
    assert not after.paused and after.deadline == game.deadline
    asked = OutgoingEmail.objects.filter(kind="your_turn", phase_number=game.phase_number)
    assert asked.exists()
    for email in asked:
        assert "none while" not in email.text and "Deadline: " in email.text


def test_an_absence_waits_for_the_end_of_the_tables_pause(game, alice, bob, charlie):
    Game.objects.filter(pk=game.pk).update(on_absence="pause")
    deadline = game.deadline
    with at(deadline - 30 * HOUR):
        votes.propose(game.pk, alice, "pause", 1)
        votes.cast(game.pk, bob, True)
    away(charlie, deadline - 29 * HOUR, deadline + 3 * DAY)
    sweep(now=deadline - 29 * HOUR)
    assert fresh(game).paused_until is not None  # the table's pause holds
    sweep(now=deadline - 6 * HOUR)  # it has ended: charlie is still away
    paused = fresh(game)
    assert paused.paused and paused.paused_until is None and paused.deadline is None
    assert events(game, "paused")[-1]["players"] == ["lilac"]


# --- races: the game's row lock -------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("on_postgresql", "no_dispatch")
def test_the_last_two_votes_at_once_pass_the_proposal_once(monkeypatch):
    alice, bob, charlie, dave = (
        User.objects.create_user(name, f"{name}@example.org", "x")
        for name in ("alice", "bob", "charlie", "dave")
    )
    game = three_player_game(alice, bob, charlie, player_count=4, setup="variable")
    services.join_game(game.pk, dave, "grey")
    deadline = fresh(game).deadline
    votes.propose(game.pk, alice, "extend", 10)
    votes.cast(game.pk, bob, True)  # 2 of 4: a third yes passes it
    monkeypatch.setattr(votes, "tally", slowly(votes.tally))
    results: list[str] = []
    people = iter([charlie, dave])

    def vote() -> None:
        person = next(people)
        try:
            votes.cast(game.pk, person, True)
            results.append("counted")
        except services.GameError as error:
            results.append(str(error))

    at_once(2, vote)
    assert sorted(results) == ["counted", "the table is voting on no proposal now"]
    assert fresh(game).deadline == deadline + 10 * HOUR
    assert len(events(game, "deadline_extended")) == 1
    assert Ballot.objects.count() == 3


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("on_postgresql", "no_dispatch")
def test_two_proposals_at_once_make_one(monkeypatch):
    alice, bob, charlie = (
        User.objects.create_user(name, f"{name}@example.org", "x")
        for name in ("alice", "bob", "charlie")
    )
    game = three_player_game(alice, bob, charlie)
    monkeypatch.setattr(votes, "proposal_problem", slowly(votes.proposal_problem))
    results: list[str] = []
    people = iter([alice, bob])

    def propose() -> None:
        person = next(people)
        try:
            votes.propose(game.pk, person, "extend", 5)
            results.append("proposed")
        except (services.GameError, IntegrityError) as error:
            results.append(str(error))

    at_once(2, propose)
    assert sorted(results) == [
        "proposed",
        "the table is voting on a proposal already: one at a time",
    ]
    assert DeadlineVote.objects.count() == 1


# --- on the game page ---------------------------------------------------------------------------


def page(client, user: User, game: Game) -> str:
    log_in(client, user)
    return client.get(reverse("game", args=[game.pk])).content.decode()


def test_the_page_asks_the_others_to_vote_and_says_how_it_stands(client, game, alice, bob, dave):
    log_in(client, alice)
    response = client.post(
        reverse("propose", args=[game.pk]), {"kind": "extend", "amount": "12"}, follow=True
    )
    assert "Proposed: the others are asked to vote" in response.content.decode()
    text = page(client, bob, game)
    assert "Alice asks the table to extend the deadline by 12 hours." in text
    assert "It passes when 2 of the 3 people seated vote yes" in text
    assert 'id="vote-form"' in text and 'id="propose-extend"' not in text
    mine = page(client, alice, game)
    assert 'id="vote-form"' not in mine and "You voted yes." in mine
    assert 'id="table-vote"' not in page(client, dave, game)  # a spectator does not vote
    response = client.post(reverse("vote", args=[game.pk]), {"vote": "yes"}, follow=True)
    assert "Not counted: you have no seat in this game." in response.content.decode()
    log_in(client, bob)
    response = client.post(reverse("vote", args=[game.pk]), {"vote": "yes"}, follow=True)
    said = response.content.decode()
    assert "Your vote is counted: yes to extending the deadline by 12 hours." in said
    assert "The table said yes: it is done." in said
    assert fresh(game).deadline == game.deadline + 12 * HOUR


@pytest.mark.parametrize(
    ("view", "data", "said"),
    [
        ("vote", {"vote": "perhaps"}, "Not counted: Vote yes or no."),
        ("vote", {}, "Not counted: Vote yes or no."),
        ("vote", {"vote": "yes"}, "Not counted: the table is voting on no proposal now."),
        ("propose", {"kind": "extend", "amount": "soon"}, "Not proposed: Say how long"),
        ("propose", {"kind": "extend", "amount": "0"}, "Not proposed: Say how long"),
        ("propose", {"kind": "extend", "amount": "100"}, "an extension is 1 to 72 hours"),
        ("propose", {"kind": "shorten", "amount": "5"}, "Not proposed: Say what to propose."),
    ],
)
def test_bad_input_is_told_and_changes_nothing(client, game, alice, view, data, said):
    log_in(client, alice)
    response = client.post(reverse(view, args=[game.pk]), data, follow=True)
    assert said in response.content.decode()
    assert not DeadlineVote.objects.exists() and fresh(game).deadline == game.deadline


def test_the_page_shows_a_pause_and_what_cannot_be_proposed(client, game, alice, bob):
    votes.propose(game.pk, alice, "pause", 2)
    votes.cast(game.pk, bob, True)
    text = page(client, bob, game)
    assert "The table voted to pause this phase until" in text
    assert "Nothing can be proposed now: the game is paused" in text


# --- by email -----------------------------------------------------------------------------------


def reply(text: str, game: Game, user: User) -> bytes:
    message = EmailMessage()
    message["From"] = user.email
    message["To"] = reply_address(Seat.objects.get(game=game, user=user), game.phase_number)
    message["Subject"] = "Re: Löwenherz: Test game"
    message.set_content(text)
    return message.as_bytes()


def quoted(text: str) -> str:
    return "\n".join(f"> {line}" for line in text.splitlines())


def test_the_others_are_asked_by_email_in_their_words_and_vote_by_reply(game, alice, bob, charlie):
    Profile.objects.filter(user=charlie).update(language="de")
    votes.propose(game.pk, alice, "extend", 24)
    asked = {e.user: e for e in OutgoingEmail.objects.filter(kind="vote_proposed")}
    assert set(asked) == {bob, charlie}  # not alice: her yes is in
    assert "Alice asks the table to extend the deadline by 24 hours." in asked[bob].text
    assert "It passes when 2 of the 3 people seated vote yes" in asked[bob].text
    assert "    vote yes\n    vote no" in asked[bob].text and asked[bob].reply_to
    assert "    stimme ja\n    stimme nein" in asked[charlie].text
    answer = handle_message(reply("vote no\n\n" + quoted(asked[bob].text), game, bob))
    assert answer.verdict == Verdict.ACCEPTED, answer.reason
    assert "no to extending the deadline by 24 hours" in answer.reason
    answer = handle_message(reply("Stimme ja\n\n" + quoted(asked[charlie].text), game, charlie))
    assert answer.verdict == Verdict.ACCEPTED, answer.reason
    assert fresh(game).deadline == game.deadline + 24 * HOUR
    (told,) = OutgoingEmail.objects.filter(kind="move_accepted", user=charlie)
    assert "Stimme ja" in told.text  # as written, in an answer in German
    assert told.summary["code"] == "vote_accepted"


def test_the_examples_of_a_quoted_call_to_vote_are_no_vote(game, alice, bob):
    votes.propose(game.pk, alice, "extend", 24)
    (asked,) = OutgoingEmail.objects.filter(kind="vote_proposed", user=bob)
    answer = handle_message(reply("Thanks, I will think.\n\n" + quoted(asked.text), game, bob))
    assert answer.verdict == Verdict.REFUSED  # no command: the quote's lines are not read
    assert Ballot.objects.count() == 1


def test_a_quoted_call_to_vote_is_cut_even_without_its_marker_and_original(game, alice, bob):
    """A client that dropped the marker line, and a reply whose email the outbox no longer
    keeps: the lines only the site writes still say where the quote begins."""
    votes.propose(game.pk, alice, "extend", 24)
    (asked,) = OutgoingEmail.objects.filter(kind="vote_proposed", user=bob)
    body = asked.text.split("\n", 2)[2]  # without "## Reply above this line ##"
    assert replies.strip_quoted(f"vote no\n\n{body}").strip() == "vote no"


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ("vote maybe", "vote with 'vote yes' or 'vote no'"),
        ("vote yes\nvote no", "one vote per reply"),
    ],
)
def test_a_vote_that_cannot_be_read_is_refused_and_counts_nothing(game, alice, bob, text, refusal):
    votes.propose(game.pk, alice, "extend", 5)
    answer = handle_message(reply(text, game, bob))
    assert answer.verdict == Verdict.REFUSED and refusal in answer.reason
    assert Ballot.objects.count() == 1


def test_a_vote_by_a_reply_to_an_earlier_phase_is_refused(game, alice, bob, charlie):
    old = reply("vote yes", game, bob)
    for colour in ("red", "ochre", "lilac"):
        decide(game, colour)
    services.resolve(game.pk, game.phase_number)
    votes.propose(game.pk, alice, "extend", 5)
    answer = handle_message(old)
    assert answer.verdict == Verdict.REFUSED and "moved on" in answer.reason
    assert Ballot.objects.count() == 1


def test_a_vote_beside_a_move_is_cast_after_it(game, alice, bob):
    votes.propose(game.pk, alice, "extend", 5)
    move = format_move(engine.default_move(fresh(game).engine_state, "ochre"))
    answer = handle_message(reply(f"{move}\nvote no", game, bob))
    assert answer.verdict == Verdict.ACCEPTED, answer.reason
    assert "no to extending the deadline by 5 hours" in answer.reason
    assert Ballot.objects.get(seat__user=bob).yes is False


# --- what time is it: the clock the votes read ---------------------------------------------------


def test_a_proposal_is_open_for_vote_hours(game, alice, settings):
    settings.VOTE_HOURS = 6
    moment = datetime(2030, 1, 2, 10, 0, tzinfo=timezone.get_current_timezone())
    Game.objects.filter(pk=game.pk).update(deadline=moment + 2 * DAY)
    with at(moment):
        proposal = votes.propose(game.pk, alice, "extend", 5)
    assert proposal.expires_at == moment + 6 * HOUR
    assert seat(game, "red").proposals.get() == proposal


def test_a_call_to_vote_still_unsent_once_the_vote_is_decided_is_dropped(game, alice, bob, charlie):
    """A call to vote that has not left when the vote is decided (or its reader already
    voted) would ask for nothing: the outbox drops it (outbox.MOOT_VOTE), as a later
    phase supersedes an ask; one still open is sent."""
    votes.propose(game.pk, alice, "extend", 5)
    calls = {e.user: e for e in OutgoingEmail.objects.filter(kind="vote_proposed")}
    assert set(calls) == {bob, charlie}
    votes.cast(game.pk, bob, True)  # passes: charlie's call asks for nothing now
    assert outbox.send(calls[bob].pk) is False and outbox.send(calls[charlie].pk) is False
    for email in OutgoingEmail.objects.filter(kind="vote_proposed"):
        assert email.status == OutgoingEmail.Status.FOLDED and email.last_error == outbox.MOOT_VOTE
    votes.propose(game.pk, alice, "extend", 5)  # a new one, still open: its calls go
    (still,) = OutgoingEmail.objects.filter(kind="vote_proposed", user=charlie, status="queued")
    assert outbox.send(still.pk) is True
