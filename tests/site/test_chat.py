"""Messages between players (issue 10, item 2): the table's talk, to everyone or to one
player, on the game page and by email, with its limits, muting, and the archive.

The game: alice red, bob ochre, charlie lilac (basic setup, sealed decisions), all three
asked to decide. Emails are outbox rows (games.mail.outbox): the tests read the rows.
"""

from __future__ import annotations

from datetime import timedelta
from email.message import EmailMessage

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from games import chat, services
from games.mail import compose, inbound, notify, replies
from games.mail.tokens import reply_address
from games.models import (
    MESSAGE_CHARS,
    Game,
    Message,
    MessageEmails,
    Notifications,
    OutgoingEmail,
    Seat,
)
from tests.site.conftest import three_player_game
from tests.site.test_emails import decide_all, fresh, seat, sent_to

pytestmark = pytest.mark.django_db
Status = OutgoingEmail.Status


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def client_of(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page(user: User, game: Game) -> str:
    response = client_of(user).get(reverse("game", args=[game.pk]))
    assert response.status_code == 200
    return response.content.decode()


def texts(user: User, game: Game) -> list[str]:
    """The messages the user's seat reads."""
    return [m.text for m in Message.objects.filter(game=game).visible_to(seat(game, user))]


def choose(user: User, mode: str) -> None:
    Notifications.objects.update_or_create(user=user, defaults={"messages": mode})


def owed_rows(user: User) -> list[OutgoingEmail]:
    return [e for e in sent_to(user, "message_owed") if e.status == Status.COALESCING]


# --- who reads what -------------------------------------------------------------------------


def test_a_message_to_everyone_is_read_by_every_player_and_no_spectator(
    game, alice, bob, charlie, dave
):
    chat.post(game.pk, alice.pk, "Shall we share the hills?")
    for user in (alice, bob, charlie):
        assert texts(user, game) == ["Shall we share the hills?"]
        assert "Shall we share the hills?" in page(user, game)
    assert "Shall we share the hills?" not in page(dave, game)  # a spectator
    assert not Message.objects.visible_to(None).exists()


def test_a_private_message_is_read_by_its_two_players_alone(game, alice, bob, charlie, dave):
    chat.post(game.pk, alice.pk, "Bob, take the west; I take the east.", to_colour="ochre")
    assert texts(alice, game) == texts(bob, game) == ["Bob, take the west; I take the east."]
    assert texts(charlie, game) == []
    for user in (charlie, dave):
        assert "take the west" not in page(user, game)
    assert "Alice (red) to you only" in page(bob, game)
    assert "You to Bob (ochre) only" in page(alice, game)


def test_a_finished_game_s_archive_shows_the_public_talk_and_never_the_private(
    game, alice, bob, dave
):
    chat.post(game.pk, alice.pk, "Good luck, all.")
    chat.post(game.pk, bob.pk, "Secret pact with red", to_colour="red")
    Game.objects.filter(pk=game.pk).update(status=Game.Status.FINISHED)
    for viewer in (Client(), client_of(dave), client_of(alice)):
        body = viewer.get(reverse("archive_game", args=[game.pk])).content.decode()
        assert "Good luck, all." in body and "Alice (red) to everyone" in body
        assert "Secret pact" not in body
    with pytest.raises(services.GameError, match="finished"):  # the talk is over
        chat.post(game.pk, alice.pk, "One more thing")


# --- what cannot be sent ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "to", "problem"),
    [
        ("   \n\t ", "", "empty"),
        ("x" * (MESSAGE_CHARS + 1), "", f"at most {MESSAGE_CHARS} characters"),
        ("hello", "red", "your own colour"),
        ("hello", "grey", "nobody plays grey"),
    ],
)
def test_a_message_that_cannot_go_is_refused_with_a_sentence_and_nothing_stored(
    game, alice, text, to, problem
):
    with pytest.raises(services.GameError, match=problem):
        chat.post(game.pk, alice.pk, text, to_colour=to)
    assert not Message.objects.exists() and not OutgoingEmail.objects.exists()


def test_nobody_writes_to_a_computer_and_only_players_write(alice, bob, dave):
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
    with pytest.raises(services.GameError, match="computer"):
        chat.post(game.pk, alice.pk, "hello", to_colour="lilac")
    with pytest.raises(services.GameError, match="only the players"):
        chat.post(game.pk, dave.pk, "hello from the rail")
    assert not Message.objects.exists()


def test_control_and_direction_characters_are_taken_out(game, alice, bob):
    message = chat.post(game.pk, alice.pk, "a\u202eb\x07c\r\n\n\n\n\nd  ")
    assert message.text == "abc\n\n\nd"


def test_the_rate_of_messages_is_limited(game, alice, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "message": "3/h"}
    for n in range(3):
        chat.post(game.pk, alice.pk, f"message {n}")
    with pytest.raises(services.GameError, match="many messages"):
        chat.post(game.pk, alice.pk, "one too many")
    assert Message.objects.count() == 3


# --- muting a player ----------------------------------------------------------------------------


def test_a_muted_player_s_messages_are_neither_shown_nor_emailed(game, alice, bob, charlie):
    chat.set_player_muted(seat(game, charlie), "red", True)
    chat.post(game.pk, alice.pk, "Charlie never reads this")
    assert texts(charlie, game) == [] and texts(bob, game) == ["Charlie never reads this"]
    assert owed_rows(bob) and not owed_rows(charlie)
    chat.set_player_muted(seat(game, charlie), "red", False)
    assert texts(charlie, game) == ["Charlie never reads this"]
    with pytest.raises(services.GameError, match="nobody else plays"):
        chat.set_player_muted(seat(game, charlie), "lilac", True)


def test_the_page_mutes_and_unmutes_a_player(game, alice, bob, charlie):
    chat.post(game.pk, alice.pk, "Hello from red")
    client = client_of(bob)
    url = reverse("mute_player", args=[game.pk])
    client.post(url, {"colour": "red", "muted": "on"})
    assert seat(game, bob).muted_colours == ["red"]
    assert "Hello from red" not in page(bob, game)
    client.post(url, {"colour": "red", "muted": "off"})
    assert "Hello from red" in page(bob, game)


# --- the game page ------------------------------------------------------------------------------


def test_the_page_sends_a_message_and_keeps_a_refused_one(game, alice, bob, settings):
    client = client_of(alice)
    url = reverse("game_say", args=[game.pk])
    response = client.post(url, {"to": "ochre", "text": "Meet me at the river"})
    assert response.status_code == 302 and response["Location"].endswith("#chat")
    assert texts(bob, game) == ["Meet me at the river"]
    too_long = "y" * (MESSAGE_CHARS + 5)
    response = client.post(url, {"to": "", "text": too_long}, follow=True)
    body = response.content.decode()
    assert f"at most {MESSAGE_CHARS} characters" in body
    assert too_long in body  # kept in the form, to be shortened
    assert Message.objects.count() == 1
    response = client.post(url, {"to": "grey", "text": "hi"}, follow=True)
    assert "Grey is not a player you can write to" in response.content.decode()


def test_a_spectator_cannot_post_and_sees_no_form(game, dave):
    client = client_of(dave)
    assert 'id="chat-form"' not in page(dave, game)
    response = client.post(reverse("game_say", args=[game.pk]), {"text": "hi"}, follow=True)
    assert "only the players" in response.content.decode()
    assert not Message.objects.exists()


def test_the_live_version_changes_for_those_who_read_a_message(game, alice, bob, charlie):
    def version(user: User) -> str:
        answer = client_of(user).get(reverse("game_live", args=[game.pk])).json()
        return answer["game"]["version"]

    before = {u.username: version(u) for u in (alice, bob, charlie)}
    chat.post(game.pk, alice.pk, "psst", to_colour="ochre")
    assert version(bob) != before["bob"] and version(alice) != before["alice"]
    assert version(charlie) == before["charlie"]  # nothing new for charlie to read


# --- by email -------------------------------------------------------------------------------------


def test_messages_ride_in_the_next_email_and_make_none_of_their_own(game, alice, bob, charlie):
    chat.post(game.pk, alice.pk, "First word")
    chat.post(game.pk, alice.pk, "Second word")
    chat.post(game.pk, charlie.pk, "Lilac here", to_colour="ochre")
    assert len(owed_rows(bob)) == 1  # one row owes bob the lot
    assert not OutgoingEmail.objects.filter(status=Status.QUEUED).exists()
    notify.phase_changed(game.pk, game.phase_number)  # the game asks bob to decide
    (ask,) = sent_to(bob, "your_turn")
    for line in (
        "MESSAGES",
        "Alice (red) to everyone (turn 1):",
        "  First word",
        "  Second word",
        "Charlie (lilac) to you only (turn 1):",
        "  Lilac here",
    ):
        assert line in ask.text
    assert "Lilac here" in ask.html and "TALK TO THE TABLE" in ask.text
    assert [e.status for e in sent_to(bob, "message_owed")] == [Status.FOLDED]
    # told once: once the ask is sent, the next email does not repeat them (an ask still
    # unsent when the next phase asks again is superseded, and its messages told anew:
    # test_a_message_in_an_email_that_is_never_sent_is_told_in_the_next)
    OutgoingEmail.objects.filter(pk=ask.pk).update(status=Status.SENT)
    game = decide_all(game)
    notify.phase_changed(game.pk, game.phase_number)
    later = [e for e in sent_to(bob) if e.pk > ask.pk and e.kind in ("your_turn", "results")]
    assert later and all("First word" not in e.text for e in later)


def test_owed_messages_go_alone_once_due_in_one_email(game, alice, bob, charlie):
    chat.post(game.pk, alice.pk, "Anyone there?")
    chat.post(game.pk, charlie.pk, "Yes")
    assert notify.flush_due(timezone.now()) == 0  # within the hour
    due = timezone.now() + timedelta(seconds=settings.EMAIL_MESSAGES_HOLD_SECONDS + 1)
    assert notify.flush_due(due) == 3  # alice, bob and charlie: one email each
    assert notify.flush_due(due) == 0
    (email,) = sent_to(bob, "messages")
    assert email.status == Status.QUEUED and "Anyone there?" in email.text and "Yes" in email.text
    assert email.reply_to  # a reply can answer the table
    (own,) = sent_to(alice, "messages")  # alice reads charlie's answer, and her own line
    assert "You to everyone (turn 1):" in own.text and "Charlie (lilac)" in own.text


def test_a_person_who_chose_so_gets_each_message_at_once_or_none(game, alice, bob, charlie):
    choose(bob, MessageEmails.EACH)
    choose(charlie, MessageEmails.OFF)
    chat.post(game.pk, alice.pk, "one")
    chat.post(game.pk, alice.pk, "two")
    emails = sent_to(bob, "messages")
    assert [e.status for e in emails] == [Status.QUEUED, Status.QUEUED]
    assert "one" in emails[0].text and "two" not in emails[0].text and "two" in emails[1].text
    assert sent_to(charlie) == []
    notify.phase_changed(game.pk, game.phase_number)
    (ask,) = sent_to(charlie, "your_turn")
    assert "MESSAGES" not in ask.text


def test_a_muted_game_emails_no_message(game, alice, bob):
    notify.set_muted(seat(game, bob), True)
    chat.post(game.pk, alice.pk, "hello")
    assert sent_to(bob) == []


def test_a_message_in_an_email_that_is_never_sent_is_told_in_the_next(game, alice, bob, charlie):
    chat.post(game.pk, alice.pk, "Do not lose me")
    notify.phase_changed(game.pk, game.phase_number)
    (ask,) = sent_to(bob, "your_turn")
    assert "Do not lose me" in ask.text
    OutgoingEmail.objects.filter(pk=ask.pk).update(status=Status.FOLDED)  # superseded unsent
    due = timezone.now() + timedelta(seconds=settings.EMAIL_MESSAGES_HOLD_SECONDS + 1)
    chat.post(game.pk, charlie.pk, "And me")
    notify.flush_due(due)
    (again,) = sent_to(bob, "messages")
    assert "Do not lose me" in again.text and "And me" in again.text


# --- replies by email ---------------------------------------------------------------------------


def reply(game: Game, user: User, text: str, phase: int | None = None) -> bytes:
    message = EmailMessage()
    message["From"] = user.email
    message["To"] = reply_address(seat(game, user), game.phase_number if phase is None else phase)
    message["Subject"] = "Re: Löwenherz: Test game"
    message.set_content(text)
    return message.as_bytes()


def test_reply_lines_are_read_as_messages():
    read = replies.commands(
        "say Hello all,\nwhat a board!\n\ndecide 2\nto Ochre: deal?\nTo be frank: I am bluffing"
    )
    assert read.said == (
        replies.Said("", "Hello all,\nwhat a board!"),
        replies.Said("ochre", "deal?\nTo be frank: I am bluffing"),
    )
    assert read.submissions == ("decide 2",) and not read.errors
    assert replies.commands("Say: hi").said == (replies.Said("", "hi"),)
    assert replies.commands("to everyone - hi").said == (replies.Said("", "hi"),)
    assert replies.commands("To be frank: no").said == ()  # prose: no colour
    assert replies.commands("say").errors and not replies.commands("say").said
    for example in replies.TALK_EXAMPLES:  # the emails' own examples are never read
        assert replies.commands(example).said == ()


def test_a_reply_with_a_message_alone_posts_it_whatever_phase_its_address_was_for(
    game, alice, bob, charlie
):
    old_phase = game.phase_number
    game = decide_all(game)
    assert game.phase_number > old_phase
    result = inbound.handle_message(
        reply(game, bob, "to red: deal, I stay out of the east", phase=old_phase)
    )
    assert result.verdict == inbound.Verdict.ACCEPTED
    assert texts(alice, game) == ["deal, I stay out of the east"]
    assert texts(charlie, game) == []
    assert Message.objects.get().via == Message.Via.EMAIL
    assert not sent_to(bob, "move_accepted") and not sent_to(bob, "move_refused")


def legal_decision(game: Game, user: User) -> str:
    """RULES.md 3.2: the start player chooses two cards in a 3-player game."""
    two = fresh(game).engine_state.cards_to_choose(seat(game, user).colour) == 2
    return "decide 1, 2" if two else "decide 3"


def test_a_reply_with_a_move_and_a_message_does_both_and_says_so(game, alice, bob):
    move = legal_decision(game, bob)
    result = inbound.handle_message(reply(game, bob, f"{move}\nsay I played my card"))
    assert result.verdict == inbound.Verdict.ACCEPTED and result.accepted == (move,)
    assert texts(alice, game) == ["I played my card"]
    (confirmation,) = sent_to(bob, "move_accepted")
    assert "Sent: your message to everyone ('I played my card')." in confirmation.text


def test_a_reply_with_a_message_that_cannot_go_applies_nothing(game, bob):
    before = fresh(game).state
    result = inbound.handle_message(
        reply(game, bob, f"{legal_decision(game, bob)}\nto grey: hello")
    )
    assert result.verdict == inbound.Verdict.REFUSED
    assert "nobody plays grey" in result.reason and "Nothing was applied or sent" in result.reason
    assert not Message.objects.exists() and fresh(game).state == before
    assert not game.pending.exists()
    (refusal,) = sent_to(bob, "move_refused")
    assert "nobody plays grey" in refusal.text


def test_a_refused_move_sends_its_message_neither(game, bob):
    # a move the notation reads but the phase refuses: no bid is asked in a decision
    result = inbound.handle_message(reply(game, bob, "bid 5\nsay I bid five"))
    assert result.verdict == inbound.Verdict.REFUSED
    assert "Your message was not sent either" in result.reason
    assert not Message.objects.exists()


def test_the_talk_syntax_is_in_every_email_a_player_can_answer(game, alice, bob, charlie):
    notify.phase_changed(game.pk, game.phase_number)
    (ask,) = sent_to(alice, "your_turn")
    assert "TALK TO THE TABLE" in ask.text and '"say"' in ask.text and "to <colour>:" in ask.text
    assert "<code>say</code>" in ask.html
    s: Seat = seat(game, alice)
    news = compose.results(fresh(game), s, game.phase_number)
    assert news is not None and "TALK TO THE TABLE" in news.text and news.reply_to


def test_only_players_with_a_seat_see_the_game_s_talk_in_a_new_game(alice, bob, charlie):
    game = three_player_game(alice, bob, charlie, name="Another")
    assert 'id="chat-form"' in page(alice, game)
    assert "No messages yet" in page(alice, game)
