"""A pseudo-language crawl (issue 23): a catalogue made here from the German one's
messages, each translation the English wrapped in ⟦ ⟧, is a person's language; every
page a person reads then shows no word outside the marks but names, numbers, cells,
dates and time zones, and what Django itself translates (its own catalogues: the
login's fields, the names of months). A sentence built outside gettext, or a template
word left unmarked, shows as a bare English word and fails the crawl.
"""

from __future__ import annotations

import html
import re
import zoneinfo
from pathlib import Path

import django
import polib
import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import translation

from engine.notation import _PARSERS
from games import chat, deadlines
from games.mail import compose
from games.mail.kinds import KINDS
from games.mail.replies import TALK_EXAMPLES
from games.models import Game, OutgoingEmail, Profile
from tests.site.test_emails import fresh, seat, sent_to
from tests.site.test_game_page import play_phases
from tests.site.test_game_page_words import page_for, states_of_every_kind
from tests.site.test_lobby import finish

PSEUDO = "xx"  # no language has it
OPEN, CLOSE = "⟦", "⟧"
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
      | [A-Z]                             # the board's column letters
      | [\W_]+                            # punctuation, symbols
    )$""",
    re.VERBOSE,
)


# The move notation's words (engine.notation): a reply may use them in every language, so
# a language without command words of its own (this one) shows them as they are.
NOTATION = {*_PARSERS, "off", "alliance", "renegade", "treasure", "from", "parchment"}


def pseudo_catalogue(directory: Path) -> None:
    """Every message of the site's catalogues, its translation marked: ⟦English⟧."""
    po = polib.pofile(str(ROOT / "locale" / "de" / "LC_MESSAGES" / "django.po"))
    for entry in po:
        if entry.msgid_plural:
            entry.msgstr_plural = {
                0: f"{OPEN}{entry.msgid}{CLOSE}",
                1: f"{OPEN}{entry.msgid_plural}{CLOSE}",
            }
        else:
            entry.msgstr = f"{OPEN}{entry.msgid}{CLOSE}"
    target = directory / PSEUDO / "LC_MESSAGES"
    target.mkdir(parents=True)
    po.save_as_mofile(str(target / "django.mo"))


def djangos_own() -> set[str]:
    """What Django's own catalogues translate (their English), which the pseudo-language
    has no catalogue for: they show in English, and German and Italian readers get
    Django's translations."""
    words: set[str] = set()
    for po_path in [
        DJANGO / "conf/locale/de/LC_MESSAGES/django.po",
        *DJANGO.glob("contrib/*/locale/de/LC_MESSAGES/django.po"),
    ]:
        if po_path.exists():
            for entry in polib.pofile(str(po_path)):
                words.update(_words(entry.msgid))
                if entry.msgid_plural:
                    words.update(_words(entry.msgid_plural))
    return words


def _words(text: str) -> set[str]:
    return set(re.findall(r"[^\W\d_]+", re.sub(r"%\(\w+\)s|\{\w+\}", " ", text)))


@pytest.fixture
def pseudo(settings, tmp_path, alice, bob, charlie) -> None:
    pseudo_catalogue(tmp_path)
    settings.LOCALE_PATHS = [tmp_path, *settings.LOCALE_PATHS]
    settings.LANGUAGES = [*settings.LANGUAGES, (PSEUDO, "Pseudo")]
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
    """The words outside the marks that are not allowed there."""
    while True:  # a marked sentence may hold marked words: the innermost first
        stripped = re.sub(rf"{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}", " ", text)
        if stripped == text:
            break
        text = stripped
    found = []
    for token in text.split():
        token = token.strip(".,:;()[]·!?«»„“\"'")
        if not token or ALLOWED.match(token) or token.strip(".,:;()·!?") in NAMES | allowed_words:
            continue
        words = re.findall(r"[^\W\d_]+", token)
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


def test_every_page_shows_only_marked_words(pseudo, client, game, alice, dave):
    django_words = djangos_own() | {name for _, name in django_settings.LANGUAGES}
    django_words |= NOTATION | zoneinfo.available_timezones()
    pages = pages_of_a_game(client, game)
    client.force_login(alice)
    for name, url in (
        ("lobby", reverse("lobby")),
        ("history", reverse("game_history", args=[game.pk])),
        ("profile", reverse("profile")),
        ("preferences", reverse("email_preferences")),
        ("new game", reverse("create_game")),
        ("archive", reverse("archive")),
        ("not found", "/no/such/page/"),
    ):
        pages[name] = client.get(url).content.decode()
    finished = finish(game, ["red"])
    pages["archive game"] = client.get(reverse("archive_game", args=[finished.pk])).content.decode()
    visitor = Client(headers={"accept-language": PSEUDO})
    for name, url in (("login", reverse("login")), ("signup", reverse("signup"))):
        pages[name] = visitor.get(url).content.decode()
    leftovers = {
        name: sorted(set(unmarked(visible(page), django_words))) for name, page in pages.items()
    }
    leftovers = {name: words for name, words in leftovers.items() if words}
    for name, words in leftovers.items():
        print(name, words)
    print(f"pages crawled: {len(pages)}")
    assert leftovers == {}


# --- every kind of email -------------------------------------------------------------------------

URL_OR_ADDRESS = re.compile(r"https?://[^\s⟦⟧]+|[^\s⟦⟧]+@[^\s⟦⟧]+|<[^>]*>|##[^#]*##")
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
    reason = f"{OPEN}There is no card 9.{CLOSE}"
    compose.move_reply(mine, False, ["decide 9"], reason)
    compose.reply_dropped(mine)
    chat.post(game.pk, bob.pk, "Alice?")  # a player's words are theirs
    compose.messages(game, mine)
    deadlines.extend_deadline(game.pk, alice, 5)
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


def test_every_kind_of_email_shows_only_marked_words(pseudo, game, alice, bob):
    allowed = djangos_own() | NOTATION | {name for _, name in django_settings.LANGUAGES}
    alice, bob = (User.objects.select_related("profile").get(pk=u.pk) for u in (alice, bob))
    with translation.override("en-gb"):  # the worker's: no request, the site's language
        emails = emails_of_every_kind(game, alice, bob)
    emails = [e for e in emails if KINDS[e.kind].template != ""]  # never sent as it is: none
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
