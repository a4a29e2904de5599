"""games.mail.replies reads replies as mail clients send them: the new text, then the commands.

The samples in mail_samples/ are replies to a "the game waits for you" email whose
quoted original holds an example command ('decide 2'): a reply whose quote is not cut
shows up here as a second move.
"""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import cast

import pytest

from engine.moves import Expand, Knight, Swords
from engine.notation import _PARSERS, parse_move
from games.mail.replies import (
    COMMAND_WORDS,
    REPLY_MARKER,
    commands,
    html_text,
    reply_text,
    strip_quoted,
)

SAMPLES = Path(__file__).parent / "mail_samples"


def sample(name: str) -> EmailMessage:
    raw = (SAMPLES / name).read_bytes()
    return cast(EmailMessage, BytesParser(policy=policy.default).parsebytes(raw))


def html_part(message: EmailMessage) -> EmailMessage:
    """The HTML alternative alone: the email as an HTML-only client would send it."""
    part = message.get_body(preferencelist=("html",))
    assert part is not None
    return cast(EmailMessage, part)


# --- the new text, client by client ------------------------------------------------------------

CLIENTS = [
    # sample, the text written, its commands, its prose
    (
        "gmail_top_posted.eml",
        "decide 1, 3\n\nThanks, that was quick!",
        ["decide 1, 3"],
        ["Thanks, that was quick!"],
    ),
    ("apple_mail.eml", "Decide 2, 3\n\nBob", ["Decide 2, 3"], ["Bob"]),
    ("iphone.eml", "Decide 1, 2", ["Decide 1, 2"], []),
    ("outlook_desktop.eml", "decide 1, 3\n\nGrüße\nCharlie", ["decide 1, 3"], ["Grüße", "Charlie"]),
    ("outlook_web.eml", "decide 2, 3\n\nSchöne Grüße, Bob", ["decide 2, 3"], ["Schöne Grüße, Bob"]),
    ("outlook_ios.eml", "Decide 1, 2", ["Decide 1, 2"], []),
    ("thunderbird.eml", "decide 2, 3\n\nCheers", ["decide 2, 3"], ["Cheers"]),
    (
        "html_only.eml",
        "Here is my action:\n\nknight F7\nexpand G7 G8\n\nGood luck!",
        ["knight F7, expand G7 G8"],
        ["Here is my action:", "Good luck!"],
    ),
    ("german.eml", "decide 1, 3\n\nViele Grüße\nAlice", ["decide 1, 3"], ["Viele Grüße", "Alice"]),
    ("knight_expand.eml", "knight F7\nexpand G7 G8", ["knight F7, expand G7 G8"], []),
    (
        "prose_around.eml",
        "Hi Alice and Charlie,\n\nI'll take the walls this time:\n\nwalls F7/F8 G7/G8\n\n"
        "Good luck!\nBob",
        ["walls F7/F8 G7/G8"],
        ["Hi Alice and Charlie,", "I'll take the walls this time:", "Good luck!", "Bob"],
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "submissions", "ignored"), CLIENTS, ids=[c[0] for c in CLIENTS]
)
def test_a_reply_from_each_mail_client_reads_as_what_was_written(name, text, submissions, ignored):
    read = commands(reply_text(sample(name)))
    assert reply_text(sample(name)) == text
    assert (list(read.submissions), list(read.ignored), read.errors) == (submissions, ignored, ())


@pytest.mark.parametrize(
    "name",
    [
        "gmail_top_posted.eml",
        "apple_mail.eml",
        "outlook_desktop.eml",
        "outlook_ios.eml",
        "thunderbird.eml",
    ],
)
def test_the_html_alternative_gives_the_same_commands_as_the_text(name):
    plain = commands(reply_text(sample(name)))
    html = commands(reply_text(html_part(sample(name))))
    assert html.submissions == plain.submissions and html.errors == ()
    assert html.ignored == plain.ignored


def test_text_is_preferred_to_html():
    message = sample("gmail_top_posted.eml")
    plain = message.get_body(preferencelist=("plain",))
    assert plain is not None
    plain.set_content("decide 2, 3\n", subtype="plain")  # the HTML still says decide 1, 3
    assert reply_text(message) == "decide 2, 3"


def test_an_empty_text_part_falls_back_to_the_html():
    message = sample("gmail_top_posted.eml")
    plain = message.get_body(preferencelist=("plain",))
    assert plain is not None
    plain.set_content("\n \n", subtype="plain")
    assert commands(reply_text(message)).submissions == ("decide 1, 3",)


def test_charsets_and_transfer_encodings_are_decoded():
    assert "Grüße" in reply_text(sample("outlook_desktop.eml"))  # windows-1252, QP
    assert "Schöne Grüße" in reply_text(sample("outlook_web.eml"))  # HTML only, QP
    assert "Viele Grüße" in reply_text(sample("german.eml"))  # iso-8859-1, QP
    assert reply_text(sample("outlook_ios.eml")) == "Decide 1, 2"  # base64


def test_an_unknown_charset_is_read_as_utf8():
    message = EmailMessage()
    message.set_content("decide 1, 3\n", cte="8bit")
    message.replace_header("Content-Type", 'text/plain; charset="x-made-up"')
    assert reply_text(message) == "decide 1, 3"


def test_format_flowed_lines_are_joined():
    # thunderbird.eml writes "decide 2, " and "3" as one flowed line.
    assert commands(reply_text(sample("thunderbird.eml"))).submissions == ("decide 2, 3",)


# --- quotes and signatures, line by line -----------------------------------------------------


@pytest.mark.parametrize(
    "tail",
    [
        "On Mon, 3 Mar 2025 at 10:15, Löwenherz <play+x@localhost> wrote:\n> decide 2",
        "On Mon, 3 Mar 2025 at 10:15, Löwenherz <\nplay+x@localhost> wrote:\n\n> decide 2",
        "Am 03.03.2025 um 10:15 schrieb Löwenherz <play+x@localhost>:\n> decide 2",
        "Le lun. 3 mars 2025 à 10:15, Löwenherz <play+x@localhost> a écrit :\n> decide 2",
        "Le lun. 3 mars 2025 à 10:15, Löwenherz <\nplay+x@localhost> a écrit :\n\n> decide 2",
        "-----Original Message-----\nFrom: Löwenherz\nSent: Monday\n\ndecide 2",
        "________________________________\nFrom: Löwenherz\nSent: Monday\n\ndecide 2",
        "From: Löwenherz <play+x@localhost>\nSent: Monday, March 3, 2025 10:15\nTo: Alice\n\n"
        "decide 2",
        "Von: Löwenherz <play+x@localhost>\nGesendet: Montag, 3. März 2025 10:15\n\ndecide 2",
        "On Monday, Löwenherz wrote:\nThe game waits for you.\ndecide 2",  # an unquoted original
        "-- \nAlice\ndecide 2 (my favourite)",
        "--\nAlice",
        "Sent from my iPhone\n\ndecide 2",
        "Sent from my Android phone\ndecide 2",
        "Get Outlook for Android\ndecide 2",
        "> decide 2\n> pass",
    ],
)
def test_quotes_and_signatures_are_cut(tail):
    assert strip_quoted(f"decide 1, 3\n\n{tail}\n") == "decide 1, 3"


def test_a_reply_below_the_quote_and_between_quoted_lines_is_kept():
    text = (
        "On 03.03.25 10:15, Löwenherz wrote:\n> The game waits for you.\n>\n"
        "> What is your decision?\ndecide 1, 3\n> And your bid?\nbid 5\n"
    )
    assert strip_quoted(text) == "decide 1, 3\nbid 5"


def test_html_blocks_and_breaks_make_lines_and_quotes_are_skipped():
    html = (
        "<html><head><style>p {margin:0}</style></head><body>"
        "<p>Hello,<br>my move:</p><ul><li>knight F7</li><li>expand G7&nbsp;G8</li></ul>"
        "<div><div>pass</div></div>"
        "<blockquote type='cite'>decide 2</blockquote>"
        "<div class='gmail_signature'>Alice</div>"
        "<div class='yahoo_quoted'>walls F7/F8</div><p>after</p></body></html>"
    )
    assert html_text(html) == "Hello,\nmy move:\nknight F7\nexpand G7 G8\npass\nafter"


def test_html_source_layout_makes_no_lines_but_an_empty_paragraph_does():
    html = (
        "<div>\n  <div>decide 1, 3</div>\n  <div>Bye</div>\n</div>\n"
        "<p class=MsoNormal><o:p>&nbsp;</o:p></p>\n<p>Alice</p>"
    )
    assert html_text(html) == "decide 1, 3\nBye\n\nAlice"


@pytest.mark.parametrize(
    "separator",
    [
        '<div id="divRplyFwdMsg"><b>From:</b> Löwenherz</div>',
        '<div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm">',
        '<div style="border-top: 1pt solid rgb(225, 225, 225)">',
    ],
)
def test_outlook_separators_end_the_html_reply(separator):
    html = f"<div>decide 1, 3</div>{separator}<p>The game waits.</p><p>decide 2</p>"
    assert html_text(html) == "decide 1, 3"


# --- commands -----------------------------------------------------------------------------------


def test_the_command_words_are_those_the_notation_reads():
    assert set(_PARSERS) == COMMAND_WORDS


def test_knight_and_expand_lines_in_a_row_are_one_action():
    read = commands("knight F7\n\nexpand G7 G8\ntreasure 10\n")
    assert read.submissions == ("knight F7, expand G7 G8 treasure 10",)
    assert parse_move(read.submissions[0]) == Swords(
        (Knight((5, 6)), Expand(((6, 6), (6, 7)))), (10,)
    )


def test_prose_between_two_actions_makes_two_moves_which_is_an_error():
    read = commands("knight F7\nand then\nexpand G7 G8\n")
    assert read.submissions == ("knight F7", "expand G7 G8")
    assert read.ignored == ("and then",)
    assert read.errors == (
        "one move per reply, please: this reply has 'knight F7' and 'expand G7 G8'",
    )


def test_ending_an_alliance_may_come_with_a_move():
    read = commands("break alliance C3 H5\nbid 5\ntreasure 10\n")
    assert read.submissions == ("break alliance C3 H5", "bid 5 treasure 10")
    assert read.errors == ()


def test_a_command_line_that_does_not_parse_is_an_error_with_the_notations_sentence():
    read = commands("decide 1, 3\nbid five\n")
    assert read.errors == (
        "'bid five': after 'bid' write an amount of ducats, like 'bid 5' or 'bid 5 treasure 10'",
    )


def test_prose_that_starts_with_a_command_word_is_an_error_not_a_guess():
    assert commands("decide 1, 3\nTake care,\n").errors != ()


def test_a_treasure_line_without_a_move_above_it_is_an_error():
    assert "write Treasure cards after the move" in commands("Hi\ntreasure 10\n").errors[0]


@pytest.mark.parametrize(
    ("line", "submission"),
    [
        ("Decide: 1, 3", "Decide 1, 3"),
        ("- decide 1, 3.", "decide 1, 3"),
        ("* pass!", "pass"),
        ("2. accept", "accept"),
        ("  BREAK OFF  ", "BREAK OFF"),
    ],
)
def test_bullets_colons_and_full_stops_around_a_command_are_dropped(line, submission):
    read = commands(f"Hi,\n{line}\nBye\n")
    assert read.submissions == (submission,) and read.errors == ()
    assert read.ignored == ("Hi,", "Bye")


def test_a_reply_without_a_command_has_no_submissions():
    read = commands("Sorry, I am not sure yet.\n\nAlice")
    assert read == type(read)((), ("Sorry, I am not sure yet.", "Alice"), ())


# --- the site's own email, and clients in every language (issue 10) ---------------------------

OUR_EMAIL = (
    'Hello Alice,\n\nthe game "Mail game" waits for you. The players choose their '
    "decision cards.\n\nWHAT IS ASKED (decision, turn 1)\nChoose 2 decision cards "
    "(1, 2 or 3) for the action card W2 S1 W3.\nDeadline: Tue 4 Mar 2025, 14:00 CET\n\n"
    "HOW TO MOVE\nReply to this email with your move, one command per line above the "
    "quoted text, e.g.:\n    decide 2\n"
)


@pytest.mark.parametrize(
    "tail",
    [
        f"{REPLY_MARKER}\n{OUR_EMAIL}",
        f"   {REPLY_MARKER}\n\n{OUR_EMAIL}",  # indented, as some clients set the original off
        f"| {REPLY_MARKER}\n| decide 2",  # another quote mark than ">"
        "## Reply above this\nline ##\ndecide 2",  # wrapped by a narrow client
        "*## Reply above this line ##*\n\nbid 5",  # bold, as HTML made text may show it
        f"{REPLY_MARKER}\nOr reply to this email with your move, e.g. decide 2, bid 3.",
        # An attribution in a wording known nowhere here: above the marker, still the client's.
        "Pe lun., 3 mar. 2025 la 10:15, Löwenherz <play+x@localhost> a scris:\n\n"
        f"{REPLY_MARKER}\ndecide 2",
        f"2025. márc. 3. 10:15 Löwenherz <\nplay+x@localhost> ezt írta:\n{REPLY_MARKER}\ndecide 2",
        # A header block in a language known nowhere here (Hungarian Outlook).
        f"Feladó: Löwenherz <play+x@localhost>\nElküldve: 2025. március 3. 10:15\nCímzett: Alice\n"
        f"Tárgy: Mail game\n\n{REPLY_MARKER}\ndecide 2",
    ],
)
def test_the_marker_line_cuts_the_original_however_it_is_written(tail):
    assert strip_quoted(f"decide 1, 3\n\n{tail}\n") == "decide 1, 3"


def test_the_marker_cuts_an_html_original_that_is_not_in_a_quote():
    html = (
        f"<div>decide 1, 3</div><div><br></div><div>Bye</div>"
        f"<div><p style='color:#999'>{REPLY_MARKER}</p><p>Hello Alice,</p>"
        "<p>Or reply to this email with your move, e.g. <code>decide 2</code>.</p></div>"
    )
    assert strip_quoted(html_text(html)) == "decide 1, 3\n\nBye"


def test_a_quoted_marker_does_not_cut_the_reply_written_below_the_quote():
    text = (
        f"On Mon, 3 Mar 2025 at 10:15, Löwenherz <play+x@localhost> wrote:\n"
        f"> {REPLY_MARKER}\n>\n> Hello Alice,\n>     decide 2\n\ndecide 1, 3\n"
    )
    assert strip_quoted(text) == "decide 1, 3"


@pytest.mark.parametrize(
    "original",
    [
        OUR_EMAIL,
        OUR_EMAIL.split("\n\n", 2)[2],  # from "WHAT IS ASKED" on
        "THE BOARD\n   A  B  C\n 1 F  H  .R\n 2 .  .r T\n\nWalls: | between two cells, -- below.",
        'Hello Alice,\n\nyour move in "Mail game" is not accepted, and nothing has changed:\n'
        "    decide 2\n    bid 5\n",
        'Hello Alice,\n\na reminder: the game "Mail game" still waits for your move.\n\n'
        "WHAT IS ASKED (duel for 2 walls, turn 3)\nMake a sealed bid for 2 walls: up to 5 ducats.\n"
        "    bid 5\n",
        # as a client makes text of the HTML body
        "What is asked (decision, turn 1)\n\nDeadline: Tue 4 Mar 2025\n\nOpen the game, signed in\n"
        "Or reply to this email with your move, one command per line above the quoted text, e.g. "
        "decide 2.",
    ],
)
def test_lines_the_site_writes_mark_an_original_that_lost_its_marker(original):
    read = commands(strip_quoted(f"decide 1, 3\n\nThanks\n\n{original}"))
    assert (read.submissions, read.ignored, read.errors) == (("decide 1, 3",), ("Thanks",), ())


@pytest.mark.parametrize(
    "text",
    [
        "The board looks great.\nThe game is fun.\ndecide 1, 3",
        "Hello Bob,\nScores are close!\ndecide 1, 3",
        "Hello Bob,\nDeadline: I am away on Monday.\ndecide 1, 3",
        "What is asked (I wonder)\ndecide 1, 3",
    ],
)
def test_a_players_words_like_the_sites_do_not_cut_the_commands_below_them(text):
    assert strip_quoted(text) == text


@pytest.mark.parametrize(
    "block",
    [
        'Gesendet: Montag, 03. März 2025 um 10:15 Uhr\nVon: "Löwenherz" <play+x@localhost>\n'
        "An: alice@example.org\nBetreff: Mail game",  # GMX, web.de: date first
        "-----Ursprüngliche Nachricht-----\nVon: Löwenherz\nGesendet: Montag\nAn: Alice",
        "Date: Mon, 3 Mar 2025 10:15\nSubject: Mail game\nFrom: play+x@localhost",  # Hotmail
        "Da: Löwenherz <play+x@localhost>\nInviato: lunedì 3 marzo 2025 10:15\nA: Alessia\n"
        "Oggetto: Mail game",
        "De : Löwenherz <play+x@localhost>\nEnvoyé : lundi 3 mars 2025 10:15\nÀ : Amélie\n"
        "Objet : Mail game",
        "De : Löwenherz <play+x@localhost>\nEnvoyé le : lundi 3 mars 2025 10:15\nÀ : Amélie",
        "Van: Löwenherz <play+x@localhost>\nVerzonden: maandag 3 maart 2025 10:15\nAan: Daan\n"
        "Onderwerp: Mail game",
        "Från: Löwenherz <play+x@localhost>\nSkickat: den 3 mars 2025 10:15\nTill: Sara\n"
        "Ämne: Mail game",
        "Fra: Löwenherz <play+x@localhost>\nSendt: 3. marts 2025 10:15\nTil: Mads\nEmne: Mail game",
        "De: Löwenherz <play+x@localhost>\nEnviado: lunes, 3 de marzo de 2025 10:15\nPara: Lucía\n"
        "Asunto: Mail game",
        "Od: Löwenherz <play+x@localhost>\nWysłano: poniedziałek, 3 marca 2025 10:15\nDo: Piotr\n"
        "Temat: Mail game",
        "De: Löwenherz <play+x@localhost>\nEnviada: segunda-feira, 3 de março de 2025 10:15\n"
        "Para: João\nAssunto: Mail game",
        "De: play+x@localhost\nEnviada em: segunda-feira, 3 de março de 2025 10:15\nPara: João",
        "*From:* Löwenherz <play+x@localhost>\n*Sent:* Monday, March 3, 2025 10:15",
        "From: Löwenherz\n<play+a-very-long-token@localhost>\nSent: Monday, March 3, 2025 10:15",
    ],
)
def test_header_blocks_in_each_language_and_order_start_the_original(block):
    text = f"decide 1, 3\n\nGrüße\n\n{block}\n\nThe game waits for you.\ndecide 2\n"
    assert strip_quoted(text) == "decide 1, 3\n\nGrüße"


@pytest.mark.parametrize(
    "attribution",
    [
        "Il giorno lun 3 mar 2025 alle ore 10:15 Löwenherz <play+x@localhost> ha scritto:",
        "In data 3 marzo 2025 10:15:22, Löwenherz <play+x@localhost> ha scritto:",
        "Le 3 mars 2025 à 10:15, Löwenherz <play+x@localhost> a écrit :",
        "Op ma 3 mrt 2025 om 10:15 schreef Löwenherz <play+x@localhost>:",
        "Op 3 mrt. 2025 om 10:15 heeft Löwenherz <play+x@localhost> het volgende geschreven:",
        "Den mån 3 mars 2025 10:15 skrev Löwenherz <play+x@localhost>:",
        "man. 3. mar. 2025 kl. 10.15 skrev Löwenherz <play+x@localhost>:",
        "El lun, 3 mar 2025 a las 10:15, Löwenherz (<play+x@localhost>) escribió:",
        "pon., 3 mar 2025 o 10:15 Löwenherz <play+x@localhost> napisał(a):",
        "Dnia 3 marca 2025 10:15 Löwenherz <play+x@localhost> napisał:",
        "Em seg., 3 de mar. de 2025 às 10:15, Löwenherz <play+x@localhost> escreveu:",
        "Löwenherz <play+x@localhost> wrote:",  # K-9
        "Löwenherz <play+x@localhost> schrieb:",
        "Am Montag, 3. März 2025, 10:15:22 MEZ hat Löwenherz <play+x@localhost> Folgendes "
        "geschrieben:",  # Yahoo
        "Löwenherz <play+x@localhost> schrieb am Mo., 3. März 2025, 10:15:",
        "---- On Mon, 03 Mar 2025 10:15:22 +0100 play+x@localhost wrote ----",  # Zoho
    ],
)
@pytest.mark.parametrize("quote", ["> ", ""])
def test_attributions_in_each_language_start_the_original(attribution, quote):
    text = f"decide 1, 3\n\n{attribution}\n\n{quote}The game waits.\n{quote}decide 2\n"
    assert strip_quoted(text) == "decide 1, 3"


@pytest.mark.parametrize(
    "signature",
    [
        "Inviato da iPhone",
        "Inviato dal mio iPhone",
        "Von meinem iPhone gesendet",
        "Envoyé de mon iPhone",
        "Enviado desde mi iPhone",
        "Verzonden vanaf mijn iPhone",
        "Skickat från min iPhone",
        "Sendt fra min iPhone",
        "Wysłane z iPhone'a",
        "Enviado do meu iPhone",
        "Sent from my Android",
        "Get Outlook for iOS",
        "Get Outlook for Android",
        "Gesendet von Outlook für Android<https://aka.ms/AAb9ysg>",
        "Télécharger Outlook pour iOS<https://aka.ms/o0ukef>",
        "Gesendet mit der GMX Mail App",
    ],
)
def test_mobile_signatures_right_above_an_unmarked_original_end_the_reply(signature):
    text = f"decide 1, 3\n\n{signature}\n\nThe game waits for you.\ndecide 2\n"
    assert strip_quoted(text) == "decide 1, 3"


@pytest.mark.parametrize(
    "separator",
    [
        "-----Messaggio originale-----",
        "-----Mensaje original-----",
        "-----Oorspronkelijk bericht-----",
        "-------- Message d'origine --------",
        "-----Oprindelig meddelelse-----",
        "----- Mail original -----",
        "-----Mensagem original-----",
        "-----Wiadomość oryginalna-----",
    ],
)
def test_separators_in_each_language_end_the_reply(separator):
    assert strip_quoted(f"decide 1, 3\n{separator}\ndecide 2\n") == "decide 1, 3"


def test_a_command_line_is_never_taken_for_part_of_an_attribution():
    text = "decide 1, 3\nLöwenherz <play+x@localhost> wrote:\n> decide 2\n"
    assert strip_quoted(text) == "decide 1, 3"


def test_only_the_players_own_lines_are_reported_as_not_read():
    text = (
        f"Sorry, not sure yet.\n\nAlice\n\nGesendet: Montag\nVon: Löwenherz\n\n"
        f"{REPLY_MARKER}\n{OUR_EMAIL}"
    )
    read = commands(strip_quoted(text))
    assert read == type(read)((), ("Sorry, not sure yet.", "Alice"), ())


@pytest.mark.parametrize(
    "html",
    [
        '<div>decide 1, 3</div><div name="quote" style="border-left:2px solid #C3D9E5">'
        '<div><b>Gesendet:</b> Montag</div><div name="quoted-content">decide 2</div></div>',
        '<div>decide 1, 3</div><hr id="zwchr"><b>From: </b>play+x@localhost<br>decide 2',
        '<div>decide 1, 3</div><div class="protonmail_quote">decide 2</div>',
    ],
)
def test_gmx_zimbra_and_proton_quotes_are_skipped_in_html(html):
    assert html_text(html) == "decide 1, 3"
