"""The rules on the site (issue 24, item 3): a rules page and a "how to win" page in every
language, an anchor for every section the site cites, citations that are links which
resolve (the help on the game page, the new-game form), help for every option of the
new-game form, and the tables of the page drawn from the engine's own data."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import urlsplit

import polib
import pytest
from django.test import Client
from django.urls import resolve, reverse
from django.utils import translation

from engine.position import founding_points
from engine.setup import default_deck
from games.forms import CreateGameForm
from games.show.rules_text import SECTIONS, anchor, founding_rows
from tests.site.test_magic_links import emailed_link

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = {
    "en-gb": "The rules of Löwenherz",
    "de": "Die Spielregel von Löwenherz",
    "it": "Le regole di Löwenherz",
}
HOW_TO_WIN = {"en-gb": "How to win", "de": "Wie man gewinnt", "it": "Come si vince"}
CITATION = re.compile(r'<a class="rules-link" href="([^"#]+#[^"]+)">([^<]*)</a>')
COMMENTS = re.compile(r"(?s)\{%\s*comment\s*%\}.*?\{%\s*endcomment\s*%\}|\{#.*?#\}")
CITED_IN_CODE = re.compile(r'\bcite\(([^)]*)\)|\{% rules_link "([^"]+)" %\}')


def page(client: Client, path: str, language: str = "en-gb") -> str:
    response = client.get(path, headers={"accept-language": language})
    assert response.status_code == 200, path
    assert response.headers["Content-Language"] == language
    return response.content.decode()


def between(text: str, start: str, end: str) -> str:
    """The part of `text` from `start` to the next `end`."""
    at = text.index(start)
    return text[at : text.index(end, at)]


def ids(text: str) -> list[str]:
    return re.findall(r'\bid="([^"]+)"', text)


def cited_sections() -> set[str]:
    """Every section the code and the templates cite: `cite("5.1", "6.1")` in Python,
    `{% rules_link "6.1" %}` in a template."""
    sources = [ROOT / "games/show/help.py", ROOT / "games/forms.py"]
    sources += sorted((ROOT / "templates").rglob("*.html"))
    found: set[str] = set()
    for source in sources:
        for python_args, template_arg in CITED_IN_CODE.findall(source.read_text()):
            found |= set(re.findall(r'"([\d.]+)"', python_args)) | ({template_arg} - {""})
    return found


def assert_resolves(client: Client, href: str) -> None:
    """A link to a section: its page answers, and holds the anchor it points to."""
    url = urlsplit(html.unescape(href))
    assert resolve(url.path).url_name == "rules"
    assert url.fragment in ids(page(client, url.path)), href


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_the_rules_and_how_to_win_are_written_in_each_language(client, language):
    rules = page(client, reverse("rules"), language)
    assert f">{LANGUAGES[language]}</h1>" in rules
    assert f">{HOW_TO_WIN[language]}</h1>" in page(client, reverse("how_to_win"), language)


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_every_section_of_the_rules_has_its_heading_and_anchor_once(client, language):
    with translation.override(language):
        titles = {number: str(title) for number, title in SECTIONS.items()}
    rules = page(client, reverse("rules"), language)
    found = ids(rules)
    for number, title in titles.items():
        assert found.count(anchor(number)) == 1, number
        assert f'id="{anchor(number)}"' in rules and f"{number} {html.escape(title)}<" in rules
    assert len(found) == len(set(found))  # no id twice on the page


def test_every_section_the_site_cites_has_its_anchor_on_the_rules_page(client):
    cited = cited_sections()
    assert {"3", "4", "4.1", "4.2", "5.1", "5.2", "5.3", "5.4", "7.3"} <= cited  # the help's
    anchors = ids(page(client, reverse("rules")))
    assert sorted(s for s in cited if anchor(s) not in anchors) == []


def test_no_text_a_reader_sees_cites_the_rules_by_a_bare_number():
    """Before issue 24 the help said "(RULES 5.4)" with nowhere to read them: citations
    are links now, never words in a sentence."""
    for language in ("de", "it"):
        po = polib.pofile(str(ROOT / "locale" / language / "LC_MESSAGES" / "django.po"))
        assert [e.msgid for e in po if "RULES" in e.msgid + e.msgstr] == []
    for template in (ROOT / "templates").rglob("*"):
        if template.is_file():
            text = COMMENTS.sub("", template.read_text())
            assert not re.search(r"RULES\s*\d", text), template


def test_the_help_on_the_game_page_links_each_sentence_to_the_rules(client, game, alice):
    client.force_login(alice)
    game_page = page(client, reverse("game", args=[game.pk]))
    help_html = between(game_page, 'id="help"', "</details>")
    for line in re.findall(r"<li>(.*?)</li>", help_html, re.S):
        assert CITATION.search(line), line  # every sentence names where it comes from
    links = CITATION.findall(help_html)
    assert ("/rules/#s3", "Rules 3") in links
    for href, _words in links:
        assert_resolves(client, href)
    for whole_page in ("rules", "how_to_win"):
        assert f'href="{reverse(whole_page)}"' in help_html


def test_the_help_links_are_in_the_reader_s_language(client, game, alice):
    alice.profile.language = "de"
    alice.profile.save()
    client.force_login(alice)
    game_page = page(client, reverse("game", args=[game.pk]), "de")
    assert '<a class="rules-link" href="/rules/#s3">Regeln 3</a>' in game_page


def test_every_option_of_the_new_game_form_has_help(client, alice):
    client.force_login(alice)
    for name, field in CreateGameForm().fields.items():
        assert str(field.help_text).strip(), name
    form_page = page(client, reverse("create_game"))
    for name in CreateGameForm().fields:
        assert f'id="id_{name}_helptext"' in form_page, name
    links = CITATION.findall(form_page)
    assert {href.split("#")[1] for href, _ in links} >= {"s2", "s2-2", "s2-3", "s3", "s1", "s9"}
    for href, _words in links:
        assert_resolves(client, href)
    assert f'href="{reverse("how_to_win")}"' in form_page


@pytest.mark.parametrize(("language", "words"), [("de", "Regeln 2.3"), ("it", "Regole 2.3")])
def test_the_new_game_form_s_help_is_in_the_reader_s_language(client, alice, language, words):
    alice.profile.language = language
    alice.profile.save()
    client.force_login(alice)
    form_page = page(client, reverse("create_game"), language)
    assert f'href="/rules/#s2-3">{words}</a>' in form_page


def test_the_navigation_and_the_footer_lead_to_the_rules(client):
    lobby = page(client, reverse("lobby"))
    assert 'id="nav-rules"' in lobby
    footer = lobby[lobby.index("<footer") :]
    assert f'href="{reverse("rules")}"' in footer and f'href="{reverse("how_to_win")}"' in footer


def test_a_session_opened_by_an_email_s_link_may_read_the_rules(client, game, alice):
    """The help the link's game page shows links to the rules: no password asked there."""
    client.post(emailed_link(game, alice))
    for name in ("rules", "how_to_win"):
        assert client.get(reverse(name)).status_code == 200
    assert client.get(reverse("profile")).status_code == 302  # the scope still holds


def test_the_rules_page_shows_the_engine_s_deck_and_founding_table(client):
    rules = page(client, reverse("rules"))
    deck = between(rules, 'id="rules-deck"', "</table>")
    assert deck.count("<li>") == sum(len(cards) for cards in default_deck().values()) == 31
    assert "1: 3 walls · 2: 2 walls · 3: 4 ducats" in deck  # pile A's first card
    for cells, power in founding_rows():
        first = int(re.match(r"\d+", cells).group())
        assert founding_points(first) == power
    assert founding_rows()[0] == ("1–4", 3) and founding_rows()[-1] == ("31 or more", 12)


def test_the_pages_refuse_to_be_written_to(client):
    assert client.post(reverse("rules")).status_code == 405
