"""A pseudo-language crawl (issue 23): a catalogue made here from the site's messages and
Django's own, each translation the English with every letter swapped for an accented
twin ("Ţùŕñ 1"), placeholders kept, is a person's language; every page and every email
a person reads then shows no plain word but names, numbers, cells, time zones and the
move notation. A sentence built outside gettext, a template word left unmarked, or a
code put into a translated sentence ("up to phase 2, negotiation") shows a plain English
word and fails the crawl.
"""

from __future__ import annotations

import html
import re
import zoneinfo
from datetime import timedelta
from pathlib import Path

import django
import polib
import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone, translation

from engine.notation import _PARSERS
from games import chat, votes
from games.mail import compose, notify
from games.mail.kinds import KINDS
from games.mail.replies import TALK_EXAMPLES
from games.models import Game, OutgoingEmail, Profile
from tests.site.test_emails import fresh, seat, sent_to
from tests.site.test_game_page import play_phases
from tests.site.test_game_page_words import page_for, states_of_every_kind
from tests.site.test_lobby import finish

PSEUDO, PSEUDO_NAME = "xx", "Pseudo"  # no language has it
PLAIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
TWINS = "àƀçđèƒĝĥìĵķĺɱñòþʠŕšţùṽŵẋýžÀƁÇĐÈƑĜĤÌĴĶĹṀÑÒƤǪŔŠŢÙṼŴẊÝŽ"
ACCENTED = str.maketrans(PLAIN, TWINS)
# What a translation keeps as it is: placeholders, tags and entities.
KEPT = re.compile(r"%(\(\w+\))?[-+ #0-9.]*[sdif%]|\{\w*\}|<[^>]*>|&\w+;")


def pseudo(text: str) -> str:
    """`text` with its letters accented, its placeholders, tags and entities kept."""
    parts, at = [], 0
    for kept in KEPT.finditer(text):
        parts += [text[at : kept.start()].translate(ACCENTED), kept.group()]
        at = kept.end()
    return "".join([*parts, text[at:].translate(ACCENTED)])


ROOT = Path(__file__).resolve().parents[2]
DJANGO = Path(django.__file__).resolve().parent  # its own catalogues, and its apps'

# What may stand outside the marks: names of people and games, numbers, cells and
# edges, times, dates' numbers, time zones, the site's name and punctuation.
NAMES = {"Alice", "Bob", "Charlie", "Dave", "alice", "bob", "charlie", "dave", "Test", "game"}
ALLOWED = re.compile(
    r"""^(
        [0-9]+([.,:][0-9]+)*%?            # numbers, times
      | [A-Z]{1,2}[0-9]{1,2}(/[A-Z]{1,2}[0-9]{1,2})?   # cells, edges
      | [A-Za-z_]+/[A-Za-z_/+\-0-9]+      # time zones (Europe/Berlin)
      | UTC|CET|CEST|GMT|[A-Z]{3,4}       # zone abbreviations
      | Löwenherz
      | [^@\s]+@[^@\s]+                  # email addresses
      | [A-Z]                             # the board's column letters
      | [\W_]+                            # punctuation, symbols
    )$""",
    re.VERBOSE,
)


# The move notation's words (engine.notation): a reply may use them in every language, so
# a language without command words of its own (this one) shows them as they are.
NOTATION = {*_PARSERS, "off", "alliance", "renegade", "treasure", "from", "parchment"}
NOTATION |= {"say", "to", "everyone", "red", "ochre", "lilac", "grey"}  # table talk by email
NOTATION |= {"vote", "yes", "no"}  # a vote by email (games.show.command_words.VOTE)


# Words that are each language's alike: the notation's, the languages' own names (the
# switcher), time zones.
ALWAYS = (
    NOTATION
    | {PSEUDO_NAME, *(name for _, name in django_settings.LANGUAGES)}
    | zoneinfo.available_timezones()
)


def pseudo_catalogue(directory: Path) -> None:
    """Every message of the site's catalogue and of Django's own (its login fields, the
    names of days and months), each translation its English accented (`pseudo`)."""
    site = polib.pofile(str(ROOT / "locale" / "de" / "LC_MESSAGES" / "django.po"))
    djangos = [DJANGO / "conf/locale/de/LC_MESSAGES/django.po"]
    djangos += sorted(DJANGO.glob("contrib/*/locale/de/LC_MESSAGES/django.po"))
    seen = {(e.msgctxt, e.msgid) for e in site}
    for path in djangos:
        for entry in polib.pofile(str(path)):
            if entry.msgid and (entry.msgctxt, entry.msgid) not in seen:
                seen.add((entry.msgctxt, entry.msgid))
                site.append(entry)
    for entry in site:
        if entry.msgid_plural:
            entry.msgstr_plural = {
                0: pseudo(entry.msgid),
                1: pseudo(entry.msgid_plural),
            }
        else:
            entry.msgstr = pseudo(entry.msgid)
        entry.flags = [flag for flag in entry.flags if flag != "fuzzy"]
    target = directory / PSEUDO / "LC_MESSAGES"
    target.mkdir(parents=True)
    site.save_as_mofile(str(target / "django.mo"))


@pytest.fixture
def pseudo_language(settings, tmp_path, alice, bob, charlie) -> None:
    pseudo_catalogue(tmp_path)
    settings.LOCALE_PATHS = [tmp_path, *settings.LOCALE_PATHS]
    settings.LANGUAGES = [*settings.LANGUAGES, (PSEUDO, PSEUDO_NAME)]
    Profile.objects.update(language=PSEUDO)


def visible(page: str) -> str:
    """What a reader sees or hears of a page: its text and the words of its attributes
    (titles, labels, placeholders, alternatives), without scripts and styles."""
    page = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", page)
    page = re.sub(r"(?s)<!--.*?-->", " ", page)
    said = re.findall(r'\b(?:title|aria-label|placeholder|alt)="([^"]*)"', page)
    text = re.sub(r"<[^>]+>", " ", page)
    return html.unescape(" ".join([text, *said]))


def unmarked(text: str, allowed_words: set[str]) -> list[str]:
    """The plain words (of unaccented letters) that are not allowed: English that did not
    come through the catalogue."""
    found = []
    for token in text.split():
        token = token.strip(".,:;()[]·!?«»„“\"'")
        if not token or ALLOWED.match(token) or token in NAMES | allowed_words:
            continue
        words = re.findall(r"[A-Za-z]+", token)
        if all(w in NAMES | allowed_words or w.lower() in allowed_words for w in words):
            continue
        found.append(token)
    return found


def pages_of_a_game(client: Client, game: Game) -> dict[str, str]:
    pages = {}
    for kind, state in states_of_every_kind().items():
        page, _ = page_for(client, game, state)
        pages[f"game page: {kind}"] = page
    return pages


def test_every_page_shows_only_marked_words(pseudo_language, client, game, alice, dave):
    allowed = ALWAYS
    pages = pages_of_a_game(client, game)
    played = play_phases(fresh(game), 3)  # past phases: the history's steps and their kinds
    client.force_login(alice)
    pages["history step"] = client.get(
        reverse("game_history", args=[played.pk]) + "?step=1"
    ).content.decode()
    for name, url in (
        ("lobby", reverse("lobby")),
        ("history", reverse("game_history", args=[game.pk])),
        ("profile", reverse("profile")),
        ("preferences", reverse("email_preferences")),
        ("new game", reverse("create_game")),
        ("archive", reverse("archive")),
        ("rules", reverse("rules")),
        ("how to win", reverse("how_to_win")),
        ("not found", "/no/such/page/"),
        ("own person page", reverse("person", args=[alice.pk])),
        ("another's person page", reverse("person", args=[dave.pk])),
        ("leaderboard", reverse("leaderboard")),
        ("record import", reverse("import_record")),
    ):
        pages[name] = client.get(url).content.decode()
    finished = finish(game, ["red"])
    pages["archive game"] = client.get(reverse("archive_game", args=[finished.pk])).content.decode()
    pages["archive searched"] = client.get(
        reverse("archive") + "?players=3&setup=basic&order=longest&turns_min=1"
    ).content.decode()
    pages["archive, a bad filter"] = client.get(reverse("archive") + "?players=9").content.decode()
    record = client.get(reverse("record_text", args=[finished.pk]))
    pages["record as text"] = record.content.decode()
    visitor = Client(headers={"accept-language": PSEUDO})
    for name, url in (("login", reverse("login")), ("signup", reverse("signup"))):
        pages[name] = visitor.get(url).content.decode()
    leftovers = {
        name: sorted(set(unmarked(visible(page), allowed))) for name, page in pages.items()
    }
    leftovers = {name: words for name, words in leftovers.items() if words}
    for name, words in leftovers.items():
        print(name, words)
    print(f"pages crawled: {len(pages)}")
    assert leftovers == {}


# --- every kind of email -------------------------------------------------------------------------

URL_OR_ADDRESS = re.compile(r"https?://[^\s]+|[^\s]+@[^\s]+|<[^>]*>|##[^#]*##")
# Lines for machines, in every language alike: the reply marker (read back in any
# language, games.mail.replies) and the rows of the text board (a letter per terrain,
# explained by its translated legend). The examples of table talk are each language's
# own constants too (replies.TALK_EXAMPLES_IN, never read as a message), English for a
# language without its own.
MACHINE_LINES = re.compile(
    r"^(##.*##|\s*[0-9]*\s+([.FHT|RrOoLlGg]{1,3}\s*)+|\s*(--\s*)+)$", re.MULTILINE
)


def emails_of_every_kind(game: Game, alice, bob) -> list[OutgoingEmail]:
    """One email of each kind a person reads (not the operators' repair_needed), most of
    them to alice, composed the way the site composes them."""
    mine = seat(game, alice)
    compose.your_turn(game, mine)
    compose.results(game, mine, game.phase_number)
    compose.reminder(game, mine)
    compose.move_reply(mine, True, ["decide 2"], "decide 2", coalesce=False)
    # A refusal's reason is its caller's, worded in the reader's language there
    # (games.mail.inbound); here one marked as the catalogue would.
    reason = pseudo("There is no card 9.")
    compose.move_reply(mine, False, ["decide 9"], reason)
    compose.reply_dropped(mine)
    chat.post(game.pk, bob.pk, "Alice?")  # a player's words are theirs
    compose.messages(game, mine)
    votes.propose(game.pk, bob, "extend", 5)  # alice is asked to vote
    votes.cast(game.pk, alice, True)  # it passes: owed to the others, sent alone once due
    notify.flush_due(
        timezone.now() + timedelta(seconds=django_settings.EMAIL_RESULTS_HOLD_SECONDS + 1)
    )
    compose.move_reply(mine, True, ["vote yes"], "vote yes", coalesce=False, code="vote_accepted")
    compose.signup_confirm(alice, "https://example.org/confirm")
    compose.signup_taken(alice)
    with translation.override(PSEUDO):  # to an address, in its visitor's language
        compose.signup_name_taken(alice.email, "alice", "https://example.org/signup")
    compose.email_changed(alice, "old@example.org")
    compose.email_change_asked(alice, "new@example.org", "https://example.org/c", None)
    compose.email_change_asked(bob, alice.email, "https://example.org/c", alice)
    compose.refusal(alice.email, reason)
    compose.invitation(game, alice.email, bob)
    compose.digest(alice, sent_to(alice, "results"))
    finished = play_phases(fresh(game), 1000)
    compose.game_over(finished, seat(finished, alice))
    return list(OutgoingEmail.objects.all())


def test_every_kind_of_email_shows_only_marked_words(pseudo_language, game, alice, bob):
    allowed = ALWAYS
    alice, bob = (User.objects.select_related("profile").get(pk=u.pk) for u in (alice, bob))
    with translation.override("en-gb"):  # the worker's: no request, the site's language
        emails = emails_of_every_kind(game, alice, bob)
    # Never sent as it is (a held row of owed news, told in another email): none.
    emails = [
        e
        for e in emails
        if KINDS[e.kind].template != "" and e.status != OutgoingEmail.Status.FOLDED
    ]
    kinds = {email.kind for email in emails}
    sent_as_such = {name for name, kind in KINDS.items() if kind.template != ""}
    assert kinds == sent_as_such - {"repair_needed"}  # the operators' email stays English
    leftovers = {}
    for email in emails:
        for part, text in (("subject", email.subject), ("text", email.text), ("html", email.html)):
            seen = visible(text) if part == "html" else text
            for example in TALK_EXAMPLES:  # each language's own (a language without: English)
                seen = seen.replace(example, " ")
            seen = URL_OR_ADDRESS.sub(" ", MACHINE_LINES.sub(" ", seen))
            words = sorted(set(unmarked(seen, allowed)))
            if words:
                leftovers[f"{email.kind} {part}"] = words
    print(f"email kinds crawled: {len(kinds)}")
    assert leftovers == {}
