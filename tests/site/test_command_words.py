"""Moves by email in each language (issue 23, docs/glossary.md section 2): a German or
Italian command reads as the English one, in any case and with umlauts in any spelling;
the examples the site shows come out in the reader's words and read back; a German and an
Italian reply move the game and are confirmed in the player's language; and no word of one
table can be read as a cell or as an English command of another meaning."""

from __future__ import annotations

import re

import pytest
from django.utils import translation

from engine.errors import NotationError
from engine.notation import _PARSERS, parse_move
from games.mail import compose, replies
from games.mail.inbound import Verdict, handle_message
from games.models import OutgoingEmail, Profile
from games.show import command_words
from games.show.command_words import (
    COMMANDS,
    KEYWORDS,
    TALK,
    VOTE,
    spellings,
    to_english,
    to_reader,
    vote_to_reader,
)
from games.show.words import refusal_text
from tests.site.test_inbound import (  # noqa: F401 (fixtures)
    address_of,
    email,
    fast_passwords,
    outbox,
    pending,
    seat_of,
    starter,
)

# docs/glossary.md 2.3: English (as the site shows it), German, Italian.
EXAMPLES = [
    ("place C3 D3", "setzen C3 D3", "piazza C3 D3"),
    ("decide 2", "entscheiden 2", "decidi 2"),
    ("decide 1, 3", "entscheiden 1, 3", "decidi 1, 3"),
    ("decide 2 alliance C3 H5", "entscheiden 2 bündnis C3 H5", "decidi 2 alleanza C3 H5"),
    ("decide 2 alliance C3 H5", "entscheiden 2 buendnis C3 H5", "decidi 2 alleanza C3 H5"),
    (
        "decide 1 alliance C3 H5, 3 renegade F7 G7",
        "entscheiden 1 bündnis C3 H5, 3 überläufer F7 G7",
        "decidi 1 alleanza C3 H5, 3 disertore F7 G7",
    ),
    (
        "decide 3 renegade F7 G7 treasure 10",
        "entscheiden 3 ueberlaeufer F7 G7 dukatenschatz 10",
        "decidi 3 disertore F7 G7 tesoro 10",
    ),
    ("offer 3", "anbieten 3", "offri 3"),
    ("accept", "annehmen", "accetta"),
    ("break off", "abbrechen", "rifiuta"),
    ("break", "abbrechen", "rifiuta"),
    ("break alliance C3 H5", "aufheben C3 H5", "sciogli C3 H5"),
    ("break alliance C3 H5", "aufheben bündnis C3 H5", "sciogli alleanza C3 H5"),
    (
        "break alliance C3 H5 treasure 10",
        "aufheben C3 H5 dukatenschatz 10",
        "sciogli C3 H5 tesoro 10",
    ),
    ("bid 5", "bieten 5", "punta 5"),
    ("bid 5 treasure 10", "bieten 5 dukatenschatz 10", "punta 5 tesoro 10"),
    ("bid treasure 8", "bieten dukatenschatz 8", "punta tesoro 8"),
    ("walls F7/F8 G7/G8", "grenzen F7/F8 G7/G8", "confini F7/F8 G7/G8"),
    ("wall F7/F8", "grenze F7/F8", "confine F7/F8"),
    ("knight F7", "ritter F7", "cavaliere F7"),
    ("knights F7 G7", "ritter F7 G7", "cavalieri F7 G7"),
    ("knight F7 treasure 10", "ritter F7 dukatenschatz 10", "cavaliere F7 tesoro 10"),
    ("expand G7", "erweitern G7", "allarga G7"),
    (
        "knight F7, expand G7 G8 from C3",
        "ritter F7, erweitern G7 G8 von C3",
        "cavaliere F7, allarga G7 G8 da C3",
    ),
    ("pile 1", "stapel 1", "mazzo 1"),
    ("look 2", "ansehen 2", "sfoglia 2"),
    ("take alliance", "nehmen bündniszwang", "prendi alleanza"),
    ("take alliance", "nehmen bündnis", "prendi alleanza forzata"),
    ("take renegade", "nehmen überläufer", "prendi disertore"),
    ("take treasure 10", "nehmen dukatenschatz 10", "prendi tesoro 10"),
    ("take parchment 3", "nehmen lehen 3", "prendi mezzadria 3"),
    ("pass", "passen", "passo"),
    ("decline", "verzichten", "rinuncio"),
    ("skip", "aussetzen", "salto"),
]


@pytest.mark.parametrize(("english", "german", "italian"), EXAMPLES)
def test_every_command_example_has_a_german_and_an_italian_form_read_as_the_same_move(
    english, german, italian
):
    move = parse_move(english)
    for text in (german, italian, german.upper(), italian.title(), english):
        assert parse_move(to_english(text)) == move, text


@pytest.mark.parametrize(("english", "german", "italian"), EXAMPLES)
def test_the_examples_shown_in_each_language_read_back_as_the_same_move(english, german, italian):
    move = parse_move(english)
    for language in ("de", "it", "en-gb"):
        shown = to_reader(english, language)
        assert parse_move(to_english(shown)) == move, (language, shown)
    assert to_reader(english, "en-gb") == english


@pytest.mark.parametrize(
    ("text", "english"),
    [
        ("Wählen 2", "decide 2"),
        ("waehlen 2", "decide 2"),
        ("WAHLEN 2", "decide 2"),
        ("nehmen Überläufer", "take renegade"),
        ("nehmen UEBERLAEUFER", "take renegade"),
        ("nehmen uberlaufer", "take renegade"),
        ("Entscheiden 2 Bundnis c3 h5", "decide 2 alliance c3 h5"),
        ("Nimm Bündniszwang", "take alliance"),
        ("Ritter F7", "knight F7"),
    ],
)
def test_umlauts_in_any_spelling_and_any_case(text, english):
    assert to_english(text) == english


def _meanings() -> dict[str, dict[str, set[str]]]:
    """Each language's spellings and the English words they stand for; `knight` and
    `knights` are one command (the parser reads them alike), German *ritter* both."""
    found: dict[str, dict[str, set[str]]] = {}
    for language in COMMANDS:
        words: dict[str, set[str]] = {}
        for table in (COMMANDS, KEYWORDS, TALK, VOTE):
            for english, forms in table[language].items():
                for form in forms:
                    for spelling in spellings(form):
                        words.setdefault(spelling, set()).add(english.replace("knights", "knight"))
        found[language] = words
    return found


def test_no_word_collides_with_a_cell_an_english_command_or_another_language():
    english = set(_PARSERS) | {"alliance", "renegade", "treasure", "from", "off", "parchment"}
    english |= {"say", "to", "everyone", "everybody", "all", *replies.COMMAND_WORDS}
    english |= {"vote", "yes", "no"}
    meanings = _meanings()
    for language, words in meanings.items():
        for word, means in words.items():
            assert len(means) == 1, (language, word, means)  # one meaning within a language
            assert not re.fullmatch(r"[a-z]+[0-9]+", word), word  # never a cell
            assert word.isalpha(), word
            assert word not in english, (language, word)
    assert not meanings["de"].keys() & meanings["it"].keys()


@pytest.mark.parametrize(
    ("line", "yes"),
    [
        ("vote yes", True),
        ("Vote: no", False),
        ("stimme ja", True),
        ("Abstimmen NEIN", False),
        ("voto sì", True),
        ("Voto si", True),
        ("voto no", False),
    ],
)
def test_a_vote_is_read_in_every_language(line, yes):
    """Issue 24: `vote yes` / `vote no` in the three languages, any case."""
    read = replies.commands(f"{line}\n\nThanks")
    assert read.errors == () and read.vote == (line, yes)


def test_the_vote_shown_to_each_reader_reads_back():
    for language, shown in (("en-gb", "vote yes"), ("de", "stimme ja"), ("it", "voto sì")):
        assert vote_to_reader(True, language) == shown
        assert replies.commands(shown).vote == (shown, True)
        assert replies.commands(vote_to_reader(False, language)).vote[1] is False


def test_a_reply_may_also_talk_in_the_reader_s_words():
    read = replies.commands("an ocker: nicht in mein Gebiet\nnachricht Hallo alle\n\nentscheiden 2")
    assert read.errors == () and read.submissions == ("entscheiden 2",)
    assert [(m.to, m.text) for m in read.said] == [
        ("ochre", "nicht in mein Gebiet"),
        ("", "Hallo alle"),
    ]
    read = replies.commands("a tutti: ciao\nsciogli C3 H5\ndukatenschatz 10")
    assert [(m.to, m.text) for m in read.said] == [("", "ciao")]
    assert read.submissions == ("sciogli C3 H5 dukatenschatz 10",)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("language", "reply", "accepted"),
    [
        ("de", "Entscheiden 1, 3\n\nDanke!", "Angenommen: entscheiden 1, 3."),
        ("it", "Decidi 1, 3\n\nGrazie!", "Accettata: decidi 1, 3."),
    ],
)
def test_a_german_and_an_italian_reply_move_the_game_and_are_confirmed_in_their_language(
    game,
    outbox,  # noqa: F811
    starter,  # noqa: F811
    language,
    reply,
    accepted,
):
    Profile.objects.filter(user=seat_of(game, starter.colour).user).update(language=language)
    result = handle_message(email(reply, to=address_of(game, starter.colour), sender=starter.email))
    assert result.verdict == Verdict.ACCEPTED, result.reason
    assert pending(game) == {starter.colour: "decide 1, 3"}
    [(_, ok, _, message)] = outbox.move_replies
    assert ok and accepted in message


@pytest.mark.django_db
def test_a_refusal_quotes_the_german_move_as_written_in_german(
    game,
    outbox,  # noqa: F811
    starter,  # noqa: F811
):
    Profile.objects.filter(user=seat_of(game, starter.colour).user).update(language="de")
    result = handle_message(
        email("entscheiden 9", to=address_of(game, starter.colour), sender=starter.email)
    )
    assert result.verdict != Verdict.ACCEPTED and pending(game) == {}
    [(_, ok, _, message)] = outbox.move_replies
    assert (not ok and "Partie" in message) or "entscheiden" in message


@pytest.mark.django_db
def test_the_examples_of_a_german_player_s_waits_for_you_email_are_german_and_legal(
    game,
    starter,  # noqa: F811
):
    seat = seat_of(game, starter.colour)
    Profile.objects.filter(user=seat.user).update(language="de")
    seat = seat_of(game, starter.colour)
    with translation.override("de"):
        compose.your_turn(game, seat)
    sent = OutgoingEmail.objects.filter(kind="your_turn", to=seat.user.email).order_by("pk").last()
    assert sent is not None
    shown = [line.strip() for line in sent.text.split("\n") if line.startswith("    ")]
    moves = [line for line in shown if replies.command_word(line) in replies.COMMAND_WORDS]
    assert moves and all(
        line.split()[0] in command_words.COMMANDS["de"]["decide"] for line in moves
    )
    for line in moves:
        parse_move(to_english(line))
    assert "nachricht Wollen wir uns die Gebirge gegenseitig lassen?" in sent.text
    read = replies.commands("\n".join(moves[:1]))
    assert read.errors == () and read.moves


@pytest.mark.parametrize(
    ("language", "text", "said", "unsaid"),
    [
        ("de", "springen 2", ["setzen", "abbrechen", "aufheben"], ["place", "break off"]),
        ("it", "volare 2", ["piazza", "rifiuta", "sciogli"], ["place", "break off"]),
        ("it", "salto 2", ["'salto 2'", "dopo 'salto'"], ["skip"]),
        ("de", "annehmen 3", ["'annehmen 3'", "'annehmen'"], ["accept"]),
        ("de", "nehmen krone", ["bündniszwang", "dukatenschatz 8", "lehen 3"], ["parchment"]),
        ("it", "prendi corona", ["alleanza", "tesoro 8", "mezzadria 3"], ["parchment"]),
    ],
)
def test_a_refusal_lists_what_may_be_written_in_the_reader_s_words(language, text, said, unsaid):
    """The notation's lists (every command, every politics card after `take`) are English
    in the engine; the reader is told the words of their own table, which a reply reads."""
    with pytest.raises(NotationError) as refused, translation.override(language):
        parse_move(to_english(text))
    with translation.override(language):
        told = refusal_text(refused.value)
    for word in said:
        assert word in told, told
    for word in unsaid:
        assert word not in told, told


@pytest.mark.parametrize(
    ("language", "reply", "start"),
    [("de", "nachricht", "„nachricht“"), ("it", "a ocra:", "«a ocra»"), ("en", "say", "'say'")],
)
def test_a_message_without_text_is_named_by_its_first_words_in_the_reader_s_words(
    language, reply, start
):
    with translation.override(language):
        read = replies.commands(reply)
    assert len(read.errors) == 1 and start in read.errors[0], read.errors
