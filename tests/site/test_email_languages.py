"""Every email in its reader's language (issue 23): a German, an Italian and an English
player at one table each get theirs, whoever's request (or the worker, with none) wrote
it. The real catalogues come later; here a tiny one is compiled for a few of the emails'
sentences, and everything is composed while the language active is another one (as in a
request of an Italian), so an email that follows the request's language instead of its
reader's fails."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import polib
import pytest
from asgiref.local import Local
from django.conf import settings
from django.contrib.auth.models import User
from django.utils import dateformat, timezone, translation
from django.utils.translation import trans_real

from games import chat, services, votes
from games.mail import compose, notify, replies
from games.models import Game, OutgoingEmail, Profile
from games.show.view_text import time_zone_of
from tests.site.test_emails import decide_all, fresh, seat, sent_to, told_before
from tests.site.test_game_page import play_phases

# A few of the emails' own sentences: the greeting (every email to a person), the one
# to an address alone, the footer (every email), a subject.
WORDS = {
    "de": {
        "Hello %(name)s,": "Hallo %(name)s,",
        "Hello,": "Hallo,",
        "Löwenherz by email": "Löwenherz per E-Mail",
        "Löwenherz: your email could not be used": "Löwenherz: Deine E-Mail war nicht lesbar",
    },
    "it": {
        "Hello %(name)s,": "Ciao %(name)s,",
        "Hello,": "Ciao,",
        "Löwenherz by email": "Löwenherz via e-mail",
        "Löwenherz: your email could not be used": "Löwenherz: la tua e-mail non era leggibile",
    },
}
FOOTER = {"de": "Löwenherz per E-Mail", "it": "Löwenherz via e-mail", "en-gb": "Löwenherz by email"}
HELLO = {"de": "Hallo", "it": "Ciao", "en-gb": "Hello"}
REQUEST_LANGUAGE = "it"  # the language active while the emails are written


def _reset_translations() -> None:
    trans_real._translations = {}
    trans_real._default = None
    trans_real._active = Local()


@pytest.fixture
def catalogues(tmp_path: Path, settings) -> Iterator[None]:
    """The tiny catalogues, compiled into a LOCALE_PATHS of their own."""
    for language, words in WORDS.items():
        po = polib.POFile()
        po.metadata = {
            "Content-Type": "text/plain; charset=UTF-8",
            "Plural-Forms": "nplurals=2; plural=(n != 1);",
        }
        for msgid, msgstr in words.items():
            po.append(polib.POEntry(msgid=msgid, msgstr=msgstr))
        folder = tmp_path / language / "LC_MESSAGES"
        folder.mkdir(parents=True)
        po.save_as_mofile(str(folder / "django.mo"))
    settings.LOCALE_PATHS = [str(tmp_path)]
    _reset_translations()
    yield
    _reset_translations()


@pytest.fixture
def table(game: Game, alice: User, bob: User, charlie: User) -> dict[str, User]:
    """alice reads German, bob Italian, charlie English."""
    readers = {"de": alice, "it": bob, "en-gb": charlie}
    for language, user in readers.items():
        Profile.objects.filter(user=user).update(language=language)
    return {
        language: User.objects.select_related("profile").get(pk=user.pk)
        for language, user in readers.items()
    }


def written_in(email: OutgoingEmail, language: str, *, greeting: str = "") -> None:
    """The email's greeting (if it has one) and footer in `language`, in both bodies."""
    for body in (email.text, email.html):
        assert FOOTER[language] in body, (email.kind, language)
        for other in set(FOOTER) - {language}:
            assert FOOTER[other] not in body, (email.kind, language, other)
        if greeting:
            assert f"{HELLO[language]} {greeting}," in body, (email.kind, language)


def latest(user: User, kind: str) -> OutgoingEmail:
    emails = sent_to(user, kind)
    assert emails, (user, kind)
    return emails[-1]


def name(user: User) -> str:
    return user.profile.display_name


pytestmark = pytest.mark.usefixtures("catalogues")


def test_the_game_s_emails_are_each_in_their_reader_s_language(game, table):
    with translation.override(REQUEST_LANGUAGE):
        for user in table.values():
            s = seat(game, user)
            compose.your_turn(game, s)
            compose.results(game, s, game.phase_number)
            compose.reminder(game, s)
            compose.move_reply(s, True, ["decide 2"], "Accepted: decide 2.", coalesce=False)
            compose.move_reply(s, False, ["decide 9"], "There is no card 9.")
            compose.reply_dropped(s)
    kinds = ("your_turn", "results", "reminder", "move_accepted", "move_refused", "reply_dropped")
    for language, user in table.items():
        for kind in kinds:
            written_in(latest(user, kind), language, greeting=name(user))
    # The summaries worded when read (in a digest, in a later email) are the reader's.
    assert compose.summary_line(latest(table["en-gb"], "move_accepted").summary) == (
        "Your move by email was accepted: decide 2."
    )


def test_a_phase_change_tells_each_player_in_their_language(game, table):
    game = told_before(decide_all(game))
    with translation.override(REQUEST_LANGUAGE):
        notify.phase_changed(game.pk, game.phase_number)
        notify.flush_due(timezone.now() + timedelta(days=1))
    for language, user in table.items():
        sent = [e for e in sent_to(user) if e.status == OutgoingEmail.Status.QUEUED]
        assert sent
        for email in sent:
            written_in(email, language, greeting=name(user))


def test_the_table_s_messages_and_a_deadline_extended_are_in_each_reader_s_language(game, table):
    alice = table["de"]
    with translation.override(REQUEST_LANGUAGE):
        chat.post(game.pk, alice.pk, "Guten Tag!")
        for user in table.values():
            compose.messages(game, seat(game, user))
        decider = next(user for user in table.values() if user != alice)
        votes.propose(game.pk, alice, "extend", 5)  # the table says yes: alice and one more
        votes.cast(game.pk, decider, True)
        # owed to the others (not to whoever decided it), and told alone once due
        notify.flush_due(
            timezone.now() + timedelta(seconds=settings.EMAIL_RESULTS_HOLD_SECONDS + 1)
        )
    for language, user in table.items():
        if user != alice:  # one's own message is no news
            written_in(latest(user, "messages"), language, greeting=name(user))
        if user != decider:  # who cast the vote that passed it saw it pass
            written_in(latest(user, "deadline_extended"), language, greeting=name(user))


def test_the_end_of_the_game_is_told_in_each_reader_s_language(game, table):
    finished = play_phases(fresh(game), 1000)
    assert finished.is_finished
    with translation.override(REQUEST_LANGUAGE):
        for user in table.values():
            compose.game_over(finished, seat(finished, user))
    for language, user in table.items():
        written_in(latest(user, "game_over"), language, greeting=name(user))


def test_the_account_s_emails_and_the_digest_are_in_the_account_s_language(game, table):
    alice, bob = table["de"], table["it"]
    with translation.override(REQUEST_LANGUAGE):
        for user in table.values():
            compose.signup_confirm(user, "https://example.org/confirm")
            compose.signup_taken(user)
            compose.email_changed(user, "old@example.org")
            compose.results(game, seat(game, user), game.phase_number)
            compose.digest(user, sent_to(user, "results"))
        # alice asks for an address bob's account has: she hears in German, he in Italian.
        compose.email_change_asked(alice, bob.email, "https://example.org/c", bob)
    kinds = ("signup_confirm", "signup_taken", "email_changed", "digest")
    for language, user in table.items():
        for kind in kinds:
            written_in(latest(user, kind), language, greeting=name(user))
    written_in(latest(alice, "email_change_asked"), "de", greeting=name(alice))
    written_in(latest(bob, "email_change_taken"), "it", greeting=name(bob))
    # A date in an email: in the reader's language and time zone ("Mo 3 Mär 2025").
    for language, user in table.items():
        changed = latest(user, "email_changed")
        local = timezone.localtime(changed.created_at, time_zone_of(user))
        with translation.override(language):
            assert dateformat.format(local, "D j M Y") in changed.text, language


def test_answers_to_an_address_are_in_the_language_of_its_account_else_the_site_s(game, table):
    alice, bob = table["de"], table["it"]
    open_game = services.create_game(
        alice,
        name="Offen",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=24,
        invite_only=False,
        colour="red",
        computer_colours=[],
    )
    with translation.override(REQUEST_LANGUAGE):
        compose.refusal(alice.email, "This reply address is not known.")
        compose.refusal("stranger@example.org", "This reply address is not known.")
        compose.invitation(open_game, bob.email, alice)  # bob's account: Italian
        compose.invitation(open_game, "friend@example.org", alice)  # nobody's: the inviter's
    refusals = {e.to: e for e in OutgoingEmail.objects.filter(kind="refusal")}
    written_in(refusals[alice.email], "de", greeting="")
    assert refusals[alice.email].subject == "Löwenherz: Deine E-Mail war nicht lesbar"
    assert "Hallo," in refusals[alice.email].text
    written_in(refusals["stranger@example.org"], "en-gb")
    assert refusals["stranger@example.org"].subject == "Löwenherz: your email could not be used"
    invitations = {e.to: e for e in OutgoingEmail.objects.filter(kind="invitation")}
    written_in(invitations[bob.email], "it", greeting=name(bob))
    written_in(invitations["friend@example.org"], "de")
    assert "Hallo," in invitations["friend@example.org"].text


@pytest.mark.parametrize("language", ["de", "it"])
def test_the_reply_marker_is_in_the_reader_s_language_and_read_back_in_any(game, table, language):
    user = table[language]
    with translation.override(REQUEST_LANGUAGE):
        compose.your_turn(game, seat(game, user))
    marker = replies.REPLY_MARKERS[language]
    email = latest(user, "your_turn")
    assert email.text.startswith(f"{marker}\n") and marker in email.html
    quoted = "\n".join(f"> {line}" for line in email.text.splitlines())
    reply = f"decide 2\n\nAm Montag schrieb Löwenherz:\n{quoted}"
    assert replies.strip_quoted(reply).strip() == "decide 2"
    wrapped = f"decide 2\n\n{marker[:20]}\n{marker[20:]}\nHallo"
    assert replies.strip_quoted(wrapped).strip() == "decide 2"
    assert replies.without_marker(email.text).startswith("\n")
