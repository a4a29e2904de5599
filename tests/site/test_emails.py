"""The emails (games.mail.compose) and who gets them when a phase changes (games.mail.notify).

alice (red, Europe/Berlin), bob (ochre, America/New_York) and charlie (lilac, UTC)
play the `game` fixture. Emails are rows in the outbox here; test_outbox sends them.
Secrets are planted in the game and searched for in every other player's emails; the
owner's emails (or the stored state) must show them, so each search can fail.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.utils import dateformat, timezone

from engine.game import GameState, Phase
from engine.moves import Bid
from engine.notation import parse_move
from engine.serialize import state_from_json, state_to_json
from engine.view import view
from games import services
from games.mail import compose, notify, tokens
from games.models import (
    EmailPreference,
    Event,
    Game,
    MagicLink,
    Notifications,
    OutgoingEmail,
    PendingSubmission,
    ReplyToken,
    Seat,
)
from games.show.textboard import board_text
from tests.site.test_game_page import play_phases

KINDS = (
    "invitation",
    "your_turn",
    "results",
    "reminder",
    "game_over",
    "move_accepted",
    "move_refused",
    "refusal",
    "digest",
    "reply_dropped",
)


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# --- helpers --------------------------------------------------------------------------------


def fresh(game: Game) -> Game:
    return Game.objects.get(pk=game.pk)


def seat(game: Game, user: User) -> Seat:
    return Seat.objects.select_related("user__profile").get(game=game, user=user)


def plant(game: Game, change: Callable[[GameState], None]) -> Game:
    stored = fresh(game)
    state = state_from_json(stored.state)
    change(state)
    stored.state = state_to_json(state)
    stored.waiting = list(state.waiting)
    stored.phase_kind = state.phase.kind
    stored.save(update_fields=["state", "waiting", "phase_kind"])
    return fresh(game)


def sent_to(user: User, kind: str | None = None) -> list[OutgoingEmail]:
    rows = OutgoingEmail.objects.filter(user=user).order_by("id")
    return list(rows.filter(kind=kind) if kind else rows)


def whole(email: OutgoingEmail) -> str:
    """Everything an email carries: subject, both bodies, headers."""
    return "\n".join(
        [email.subject, email.text, email.html, json.dumps(email.headers), email.reply_to]
    )


def your_turn_for(game: Game, user: User) -> OutgoingEmail:
    compose.your_turn(game, seat(game, user))
    return sent_to(user, "your_turn")[-1]


def local_deadline(game: Game, zone: str) -> str:
    return dateformat.format(game.deadline.astimezone(ZoneInfo(zone)), "D j M Y, H:i T")


def decide_all(game: Game) -> Game:
    """Everyone decides (the start player two cards); the phase resolves."""
    state = fresh(game).engine_state
    for s in Seat.objects.filter(game=game):
        cards = "1, 2" if state.cards_to_choose(s.colour) == 2 else "3"
        services.submit(game.pk, s.pk, parse_move(f"decide {cards}"))
    services.resolve(game.pk, fresh(game).phase_number)
    return fresh(game)


@pytest.fixture
def finished(game) -> Game:
    game = play_phases(game, 1000)
    assert game.is_finished
    return game


# --- every kind renders ----------------------------------------------------------------------


def test_every_kind_renders_a_subject_a_text_and_an_html_body(finished, alice, bob, dave):
    open_game = services.create_game(
        bob,
        name="Open one",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=24,
        invite_only=False,
        colour="ochre",
        computer_colours=[],
    )
    other = _another_running_game(alice, bob, dave)
    compose.invitation(open_game, "newcomer@example.org", bob)
    compose.your_turn(other, seat(other, alice))
    compose.results(other, seat(other, alice), other.phase_number)
    compose.reminder(other, seat(other, alice))
    compose.game_over(finished, seat(finished, alice))
    compose.move_reply(seat(other, alice), True, ["decide 2"], "Your submission: decide 2.")
    compose.move_reply(seat(other, alice), False, ["decide 9"], "There is no card 9.")
    compose.refusal("stranger@example.org", "This reply address is not known.")
    compose.reply_dropped(seat(other, alice))
    Notifications.objects.create(user=alice, mode=EmailPreference.DIGEST)
    compose.results(other, seat(other, alice), other.phase_number - 1)  # one per phase
    notify.send_digests(now=timezone.now() + timedelta(days=1))
    for kind in KINDS:
        email = OutgoingEmail.objects.filter(kind=kind).last()
        assert email is not None, kind
        assert email.subject and "\n" not in email.subject, kind
        assert email.text.strip() and "{%" not in email.text and "{{" not in email.text, kind
        assert email.html.lstrip().startswith("<!doctype html>") and "</html>" in email.html
        assert "&amp;" not in email.text and "&#x27;" not in email.text, kind  # not escaped


def _another_running_game(alice: User, bob: User, dave: User) -> Game:
    game = services.create_game(
        alice,
        name="Second",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=[],
    )
    services.join_game(game.pk, bob, "ochre")
    services.join_game(game.pk, dave, "lilac")
    return fresh(game)


def test_an_invitation_names_the_inviter_the_game_and_its_join_link(alice):
    game = services.create_game(
        alice,
        name="Castles & Co",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=24,
        invite_only=True,
        colour="red",
        computer_colours=[],
    )
    compose.invitation(game, "friend@example.org", alice)
    email = OutgoingEmail.objects.get(kind="invitation")
    assert email.to == "friend@example.org" and email.user is None
    assert email.subject == "Alice invites you to play Löwenherz: Castles & Co"
    join = f"{settings.SITE_URL}/invite/{game.invite_token}/"
    assert join in email.text and join in email.html
    assert "Castles & Co" in email.text and "Castles &amp; Co" in email.html
    assert "2 seats free" in email.text and "24 hours per phase" in email.text


def test_an_invitation_to_a_member_goes_to_their_account_and_respects_their_choice(alice, bob):
    game = services.create_game(
        alice,
        name="G",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=24,
        invite_only=False,
        colour="red",
        computer_colours=[],
    )
    compose.invitation(game, "BOB@example.org", alice)
    assert OutgoingEmail.objects.get(kind="invitation").user == bob
    Notifications.objects.create(user=bob, mode=EmailPreference.OFF)
    compose.invitation(game, "bob@example.org", alice)
    assert OutgoingEmail.objects.filter(kind="invitation").count() == 1


# --- the game waits for you ------------------------------------------------------------------


def test_the_ask_for_a_move_holds_everything_needed_to_move(game, alice, bob, charlie):
    state = game.engine_state
    for user, zone in ((alice, "Europe/Berlin"), (bob, "America/New_York"), (charlie, "UTC")):
        s = seat(game, user)
        email = your_turn_for(game, user)
        v = view(state, s.colour)
        count = state.cards_to_choose(s.colour)
        cards = "2 decision cards" if count == 2 else "1 decision card"
        assert f"Choose {cards} (1, 2 or 3) for the action card {state.card}" in email.text
        assert ("decide 1, 3" if count == 2 else "decide 2") in email.text  # how to reply
        assert board_text(v) in email.text
        assert "Ducats: 12" in email.text and "Politics cards: none" in email.text
        named = "" if zone == "UTC" else f" ({zone})"  # the zone is named once
        assert f"Deadline: {local_deadline(game, zone)}{named}\n" in email.text
        assert f"{local_deadline(game, zone)}{named}<" in email.html
        token = ReplyToken.objects.get(seat=s, phase_number=game.phase_number)
        assert email.reply_to == f"play+{token.token}@{settings.REPLY_DOMAIN}"
        link = MagicLink.objects.filter(user=user, game=game).latest("id")
        assert link.phase_number == game.phase_number
        assert f"{settings.SITE_URL}/m/" in email.text and f"{settings.SITE_URL}/m/" in email.html
        assert email.subject == "Löwenherz: Test game"  # one thread per game
        assert compose.summary_line(email.summary) == f"Your move: decision, turn {state.turn}"
        assert email.status == OutgoingEmail.Status.QUEUED and email.to == user.email


def test_the_deadlines_differ_by_time_zone(game, alice, bob):
    berlin, new_york = your_turn_for(game, alice).text, your_turn_for(game, bob).text
    assert local_deadline(game, "Europe/Berlin") in berlin
    assert local_deadline(game, "Europe/Berlin") not in new_york
    assert local_deadline(game, "America/New_York") in new_york


def test_the_ask_shows_the_hand_and_the_last_events(game, alice):
    game = plant(game, lambda s: s.pos.players["red"].hand.extend(["treasure 10", "alliance"]))
    email = your_turn_for(game, alice)
    assert "Politics cards: Alliance, Treasure 10" in email.text
    assert "You may play Alliance with a card." in email.text
    revealed = Event.objects.filter(game=game, kind="reveal").latest("index")
    assert f"The action card {revealed.data['card']} is revealed" in email.text


@pytest.mark.parametrize(
    ("phase", "asked", "example"),
    [
        (Phase("perform", waiting=["red"], action="W2"), "Place up to 2 walls", "walls "),
        (Phase("perform", waiting=["red"], action="S1"), "Use 1 sword", "knight "),
        (Phase("perform", waiting=["red"], action="P"), "choose a politics pile", "pile 1"),
        (
            Phase("duel", waiting=["red", "ochre"], action="W2", contenders=["red", "ochre"]),
            "Make a sealed bid for 2 walls: up to 12 ducats",
            "bid 5",
        ),
        (
            Phase(
                "negotiation",
                waiting=["ochre"],
                action="S1",
                contenders=["red", "ochre"],
                offer=("ochre", 2),
            ),
            "Bob offers you 2 ducats to perform 1 sword alone",
            "accept",
        ),
    ],
)
def test_each_kind_of_phase_says_what_it_asks(game, alice, phase, asked, example):
    if phase.offer:  # alice answers bob's offer
        phase.waiting = ["red"]
    game = plant(game, lambda s: setattr(s, "phase", phase))
    email = your_turn_for(game, alice)
    assert asked in email.text and f"    {example}" in email.text


# --- secrets --------------------------------------------------------------------------------

NEXT_CARD = "M5 S2 W3"  # an action card no deck has on top: the next card, planted


def plant_secrets(state: GameState) -> None:
    """A duel for 2 walls: bob has bid in secret (with his Treasure 15), alice still
    bids; charlie holds Parchment 4 (a private event says so) and money is hidden."""
    state.phase = Phase("duel", waiting=["red"], action="W2", contenders=["red", "ochre"])
    state.pos.players["ochre"].hand.append("treasure 15")
    state.pos.players["ochre"].ducats = 37
    state.sealed["ochre"] = Bid(7, (15,))
    state.pos.players["lilac"].hand.append("parchment 4")
    state.deck.insert(0, NEXT_CARD)


SECRETS = {  # the owner's colour → what only they may read
    "ochre": ["bid 7 treasure 15", "Treasure 15", "Ducats: 37", "37 ducats"],
    "lilac": ["Parchment 4"],
}


def test_no_email_shows_another_players_secrets(game, alice, bob, charlie):
    game = plant(game, plant_secrets)
    Event.objects.create(
        game=game,
        index=999,
        phase_number=game.phase_number,
        turn=game.turn,
        kind="card",
        data={"card": "parchment 4"},
        to_colour="lilac",
    )
    bob_seat = seat(game, bob)
    PendingSubmission.objects.create(
        game=game,
        seat=bob_seat,
        phase_number=game.phase_number,
        move={"type": "Bid", "ducats": 8, "treasure": []},
        text="bid 8 pending",
    )
    for user in (alice, bob, charlie):
        s = seat(game, user)
        compose.your_turn(game, s)
        compose.reminder(game, s)
        compose.results(game, s, game.phase_number)
    by_colour = {
        s.colour: [whole(e) for e in sent_to(s.user)] for s in Seat.objects.filter(game=game)
    }
    assert all(len(texts) == 3 for texts in by_colour.values())
    for owner, secrets in SECRETS.items():
        for secret in secrets:
            assert any(secret in text for text in by_colour[owner]), secret  # it was planted
            for colour, texts in by_colour.items():
                if colour != owner:
                    assert not any(secret in text for text in texts), (secret, colour)
    assert NEXT_CARD in json.dumps(fresh(game).state)  # planted, and nobody's to read
    everything = [text for texts in by_colour.values() for text in texts]
    assert not any(NEXT_CARD in text or "bid 8" in text for text in everything)
    assert any("You took the Parchment 4 card." in t for t in by_colour["lilac"])


def test_the_emails_of_a_phase_read_together_show_each_player_only_their_own_events(
    game, alice, bob, charlie
):
    """notify reads every reader's news in one query (`presenter.read_together`): each
    email still tells its reader's private events, and nobody else's."""
    game = fresh(game)
    assert set(game.waiting) == {"red", "ochre", "lilac"}  # all three are asked
    cards = {"ochre": "treasure 15", "lilac": "parchment 4"}
    for index, (colour, card) in enumerate(cards.items(), start=900):
        Event.objects.create(
            game=game,
            index=index,
            phase_number=game.phase_number,
            turn=game.turn,
            kind="card",
            data={"card": card},
            to_colour=colour,
        )
    OutgoingEmail.objects.all().delete()
    Game.objects.filter(pk=game.pk).update(notified_phase=game.phase_number - 1)
    notify.phase_changed(game.pk, game.phase_number)
    for s in Seat.objects.filter(game=game):
        [email] = sent_to(s.user, "your_turn")
        for colour, card in cards.items():
            told = f"You took the {card.title()} card." in email.text
            assert told == (colour == s.colour), (s.colour, card)
            assert (card.title() in whole(email)) == (colour == s.colour), (s.colour, card)


# --- who is told what when a phase changes ----------------------------------------------------


def told_before(game: Game) -> Game:
    """The phases before the current one were told (as their own tasks would have)."""
    Game.objects.filter(pk=game.pk).update(notified_phase=game.phase_number - 1)
    return fresh(game)


def test_a_new_phase_asks_the_awaited_players_with_the_results_and_holds_the_others(
    game, alice, bob, charlie
):
    """Issue 10: one email per person and phase change that needs them; the results of
    the others wait (COALESCING) for their next email."""
    game = told_before(decide_all(game))
    notify.phase_changed(game.pk, game.phase_number)
    awaited = {s.user for s in Seat.objects.filter(game=game, colour__in=game.waiting)}
    assert awaited and awaited != {alice, bob, charlie}
    for user in (alice, bob, charlie):
        (email,) = sent_to(user)
        assert email.kind == ("your_turn" if user in awaited else "results")
        assert email.status == (
            OutgoingEmail.Status.QUEUED if user in awaited else OutgoingEmail.Status.COALESCING
        )
        if user in awaited:
            assert "The decisions are revealed" in email.text
            assert "has decided" not in email.text  # no news in an email
    # A held row only says what is owed (issue 11: it is never sent as it is, so nothing
    # is rendered for it); once due, the results go in an email composed then.
    assert notify.flush_due(timezone.now() + timedelta(days=1)) == 3 - len(awaited)
    for user in {alice, bob, charlie} - awaited:
        (email,) = [e for e in sent_to(user) if e.status == OutgoingEmail.Status.QUEUED]
        assert email.kind == "results" and email.html
        assert "The decisions are revealed" in email.text and "has decided" not in email.text


def test_the_notification_is_idempotent(game, alice, bob, charlie):
    game = decide_all(game)
    notify.phase_changed(game.pk, game.phase_number)
    count, links = OutgoingEmail.objects.count(), MagicLink.objects.count()
    notify.phase_changed(game.pk, game.phase_number)
    assert OutgoingEmail.objects.count() == count and MagicLink.objects.count() == links
    assert count > 3  # results held for three, and at least one ask


def test_the_ask_of_a_new_phase_has_a_token_of_its_own_and_an_older_one_stays_good(game, alice):
    """notify asks with new reply tokens without looking for unused ones (tokens.links):
    a token an email gave out before the ask (a race) is still good once, as is the
    ask's."""
    game = fresh(game)
    seat = game.seats.get(user=alice)
    earlier = ReplyToken.objects.create(seat=seat, phase_number=game.phase_number)
    notify.phase_changed(game.pk, game.phase_number)
    ask = OutgoingEmail.objects.get(user=alice, kind="your_turn")
    mine = ReplyToken.objects.get(
        seat=seat, phase_number=game.phase_number, used_at=None, pk__gt=earlier.pk
    )
    assert ask.reply_to == f"play+{mine.token}@{settings.REPLY_DOMAIN}"
    assert ReplyToken.objects.filter(pk=earlier.pk, used_at=None).exists()
    # Every later email of the phase answers to the oldest unused one, as before.
    assert (
        tokens.reply_address(seat, game.phase_number)
        == f"play+{earlier.token}@{settings.REPLY_DOMAIN}"
    )


def test_a_phase_of_only_trivial_events_sends_no_results(game, alice):
    game = fresh(game)
    Event.objects.filter(game=game, phase_number=game.phase_number).delete()
    Event.objects.create(
        game=game,
        index=500,
        phase_number=game.phase_number,
        turn=1,
        kind="decided",
        data={"player": "ochre"},
    )
    notify.phase_changed(game.pk, game.phase_number)
    assert not OutgoingEmail.objects.filter(kind="results").exists()
    assert OutgoingEmail.objects.filter(kind="your_turn").count() == 3


def test_computers_and_stand_ins_are_not_asked(alice, bob):
    game = services.create_game(
        alice,
        name="With a computer",
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
    Seat.objects.filter(game=game, user=bob).update(standin=True)
    notify.phase_changed(game.pk, fresh(game).phase_number)
    asked = OutgoingEmail.objects.filter(kind="your_turn")
    assert [e.user for e in asked] == [alice]
    # alice's results ride in her ask; bob's (a computer stands in) wait for his next email
    assert {e.user for e in OutgoingEmail.objects.filter(kind="results")} == {bob}


def test_a_notification_that_comes_late_asks_nobody_for_a_past_phase(game, alice):
    number = fresh(game).phase_number
    game = decide_all(game)
    notify.phase_changed(game.pk, number)
    assert not OutgoingEmail.objects.filter(kind="your_turn").exists()


def test_the_end_of_the_game_sends_the_final_scores_instead(finished, alice, bob, charlie):
    finished = told_before(finished)
    notify.phase_changed(finished.pk, finished.phase_number)
    notify.phase_changed(finished.pk, finished.phase_number)
    assert set(OutgoingEmail.objects.values_list("kind", flat=True)) == {"game_over"}
    for user in (alice, bob, charlie):
        (email,) = sent_to(user)
        assert f"{settings.SITE_URL}/archive/{finished.pk}/" in email.text
        assert "FINAL SCORES" in email.text and "The game is over:" in email.text
        colour = seat(finished, user).colour
        assert ("You win" in email.text) == (colour in finished.winners)
        assert email.subject == "Löwenherz: Test game"


def test_the_unsubscribed_get_nothing_but_answers_to_their_own_emails(game, alice):
    Notifications.objects.create(user=alice, mode=EmailPreference.OFF)
    game = decide_all(game)
    notify.phase_changed(game.pk, game.phase_number)
    compose.move_reply(seat(game, alice), False, ["decide 9"], "There is no card 9.")
    assert [e.kind for e in sent_to(alice)] == ["move_refused"]
    assert not MagicLink.objects.filter(user=alice).exists()  # none made for nothing
    assert "List-Unsubscribe" not in sent_to(alice)[0].headers


# --- answers to emailed moves -----------------------------------------------------------------


def test_an_accepted_sealed_move_may_be_replaced_by_replying_again(game, alice):
    s = seat(game, alice)
    compose.move_reply(s, True, ["decide 2"], "Your submission: decide 2 (3 walls).")
    email = sent_to(alice, "move_accepted")[0]
    assert "    decide 2" in email.text and "(3 walls)" in email.text
    assert email.reply_to.startswith("play+") and "change it" in email.text
    assert email.subject == "Löwenherz: Test game"


def test_a_refused_move_says_why_and_may_be_sent_again(game, alice):
    compose.move_reply(seat(game, alice), False, ["decide 9"], "'decide 9': there is no card 9.")
    email = sent_to(alice, "move_refused")[0]
    assert "is not accepted, and nothing has changed" in email.text
    assert "'decide 9': there is no card 9." in email.text and email.reply_to


def test_a_refusal_goes_to_the_sender_and_only_there(db):
    compose.refusal("someone@example.org", "This reply address has been used already.")
    email = OutgoingEmail.objects.get(kind="refusal")
    assert email.to == "someone@example.org" and email.user is None and email.game is None
    assert "has been used already" in email.text and email.reply_to == ""
    assert email.headers["Auto-Submitted"] == "auto-replied"


def test_a_deadline_names_the_zone_once(game, alice, charlie):
    """'15:23 UTC', not '15:23 UTC (UTC)'; a named zone keeps its name beside the short one."""
    utc = your_turn_for(game, charlie).text
    assert local_deadline(game, "UTC") in utc and "UTC (UTC)" not in utc
    assert (
        f"{local_deadline(game, 'Europe/Berlin')} (Europe/Berlin)"
        in your_turn_for(game, alice).text
    )
