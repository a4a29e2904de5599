"""A quote of the site's own email is never a move (issue 21, items 2, 4 and 5).

The emails here are the site's own: a game of three people (alice, bob, charlie, the
variable setup) is played through services until it has asked for every kind of phase
(placement, decision, negotiation, duel, each kind of perform, the crown), and at each
the composer writes the "waits for you" email; a reminder, the answers to a refused and
an accepted move (which echo the commands) and the results follow. A reply is read
beside the emails sent with its address, found in the outbox as `inbound` finds them.

Each email is quoted as clients quote it (without ">" as Outlook and Gmail's phone apps
do, under a header block or an attribution, with ">", indented, re-wrapped at 72
columns, ">" lines wrapped without ">", the HTML made text) and cut at every line (a
person deleting the top of the quote down to any line), with nothing of the player's
own or only a greeting and a signature: nothing is read as a command, and nothing of
the site's text is echoed as the player's. A command typed above the quote is read,
also when it is the very example the email shows: what tells them apart is position.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage

import pytest
from django.db import transaction
from django.test import override_settings

from engine.game import is_simultaneous
from games.mail import compose, outbox, replies, tokens
from games.mail.inbound import Verdict, handle_message
from games.mail.replies import (
    MAX_LINES,
    MAX_READ_LINES,
    Original,
    commands,
    html_text,
    originals,
    strip_quoted,
)
from games.models import Game, OutgoingEmail, PendingSubmission, Seat
from games.show import view_text
from games.show.presenter import present
from tests.site.conftest import make_user, three_player_game
from tests.site.test_game_page import fresh, play_phases
from tests.site.test_inbound import email, snapshot

pytestmark = pytest.mark.django_db

GREETING = ("Hi all,", "see you on the board", "Lion")  # a reply with no move in it
ATTRIBUTION = "On Mon, 3 Mar 2026 at 10:15, Löwenherz <play+x@games.example.org> wrote:"
HEADER = [
    "From: Löwenherz <play+x@games.example.org>",
    "Sent: Monday, March 3, 2026 10:15 AM",
    "To: Lion <lion@example.org>",
    "Subject: Re: Test game: your move",
]
PHASE_KINDS = {
    "placement",
    "decision",
    "negotiation",
    "duel",
    "perform/walls",
    "perform/swords",
    "perform/piles",
    "crown",
}


@pytest.fixture(autouse=True)
def fast_passwords(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def many_emails(settings) -> Iterator[None]:
    """More emails from one sender than an hour allows: these tests send many."""
    with override_settings(
        RATE_LIMITS={**settings.RATE_LIMITS, "inbound": "10000/h", "refusal": "10000/d"}
    ):
        yield


# --- the site's emails, from a game played to every kind of phase ---------------------------


@dataclass(frozen=True)
class Sent:
    """One email the site sent with a reply address: its kind, the examples it shows,
    its bodies, and what a reply to it is read beside (found as `inbound` finds it)."""

    name: str
    examples: tuple[str, ...]
    text: str
    html: str
    originals: tuple[Original, ...]


def phase_name(game: Game) -> str:
    """'decision', 'perform/walls': the kind of phase, and of perform."""
    state = game.engine_state
    ask = present(game, waiting_seat(game)).view.get("ask") or {}
    extra = next((f"/{key}" for key in ("walls", "swords", "piles") if key in ask), "")
    return state.phase.kind + extra


def waiting_seat(game: Game) -> Seat:
    return game.seats.select_related("user").get(colour=game.engine_state.waiting[0])


def read_back(game: Game, seat: Seat, email_row: OutgoingEmail | None) -> Sent:
    """What a reply to this email is read beside, found in the outbox by its address."""
    assert email_row is not None and email_row.reply_to
    token = tokens.token_of(email_row.reply_to)
    assert token is not None
    found = outbox.sent_with(tokens.address_of(token), seat.user_id, game.pk, replies.SENT_EMAILS)
    name = email_row.kind if email_row.kind != "your_turn" else f"your_turn/{phase_name(game)}"
    shown = view_text.examples(present(game, seat).view)  # those this email shows
    examples = tuple(example for example in shown if f"\n    {example}\n" in email_row.text)
    return Sent(name, examples, email_row.text, email_row.html, originals(found))


def emails_of_every_phase() -> list[Sent]:
    """Play a game through services until every kind of phase has asked for a move; at
    each new kind, the composer's "waits for you" email; then the other emails with a
    reply address."""
    alice, bob, charlie = (make_user(name) for name in ("alice", "bob", "charlie"))
    game = three_player_game(alice, bob, charlie, setup="variable")
    found: dict[str, Sent] = {}
    for _ in range(400):
        game = fresh(game)
        if game.status != Game.Status.RUNNING or set(found) >= PHASE_KINDS:
            break
        name = phase_name(game)
        if name not in found:
            seat = waiting_seat(game)
            found[name] = read_back(game, seat, compose.your_turn(game, seat))
            if name == "decision":
                found.update(answers(game, seat))
        game = play_phases(game, 1)
    assert set(found) >= PHASE_KINDS, f"the game asked only for {sorted(found)}"
    return list(found.values())


def answers(game: Game, seat: Seat) -> dict[str, Sent]:
    """A reminder, the answer to a refused move (it echoes the commands) and to an
    accepted one, and the results, for a seat asked to decide."""
    compose.reminder(game, seat)
    rows = {
        "reminder": OutgoingEmail.objects.filter(kind="reminder").last(),
        "move_refused": compose.move_reply(
            seat, False, ["decide 1, 3", "bid 5"], "Nothing was applied: one move per reply."
        ),
        "move_accepted": compose.move_reply(seat, True, ["decide 2"], "Accepted.", coalesce=False),
        "results": compose.results(game, seat, game.phase_number - 1),
    }
    return {name: read_back(game, seat, row) for name, row in rows.items()}


@pytest.fixture(scope="module")
def our_emails(django_db_setup, django_db_blocker) -> list[Sent]:
    """The emails, written in a transaction that is undone: the tests share them."""
    with django_db_blocker.unblock(), transaction.atomic():
        emails = emails_of_every_phase()
        transaction.set_rollback(True)
    return emails


# --- how clients quote ---------------------------------------------------------------------------


def wrapped(lines: list[str], width: int, prefix: str = "") -> list[str]:
    """Lines re-wrapped by a client: `prefix` on the first part of each only (a ">"
    line wrapped without ">"), each empty line kept."""
    out: list[str] = []
    for line in lines:
        parts = textwrap.wrap(prefix + line, width, break_long_words=False, break_on_hyphens=False)
        out.extend(parts or [prefix.rstrip()])
    return out


def body_lines(sent: Sent, style: str) -> list[str]:
    """The email as this style shows it before it is cut."""
    if style == "html":
        return html_text(sent.html).split("\n")
    return sent.text.rstrip("\n").split("\n")


def quoted(lines: list[str], style: str) -> list[str]:
    """`lines` (the email from where the person cut it) as the client quotes them."""
    if style == "bare" or style == "html":
        return ["", *(wrapped(lines, 76) if style == "html" else lines)]
    if style == "header":  # Outlook
        return ["", *HEADER, "", *lines]
    if style == "attribution":  # Gmail's phone apps
        return ["", ATTRIBUTION, "", *lines]
    if style == "indented":
        return ["", *(f"    {line}" if line else "" for line in lines)]
    if style == "wrapped":
        return ["", *wrapped(lines, 72)]
    if style == "quoted":
        return ["", ATTRIBUTION, *(f"> {line}" if line else ">" for line in lines)]
    assert style == "quoted, wrapped without >"
    return ["", ATTRIBUTION, *wrapped(lines, 76, "> ")]


STYLES = (
    "bare",
    "header",
    "attribution",
    "indented",
    "wrapped",
    "quoted",
    "quoted, wrapped without >",
    "html",
)


def cuts(sent: Sent, style: str) -> Iterator[tuple[int, list[str]]]:
    """The email quoted from each of its lines on: the person deleted the lines above."""
    lines = body_lines(sent, style)
    for first in range(len(lines)):
        if lines[first].strip():
            yield first, quoted(lines[first:], style)


def read(reply: list[str], sent: Sent) -> replies.Commands:
    return commands(strip_quoted("\n".join(reply), sent.originals))


# --- item 2: a quoted example is never a move ---------------------------------------------------


def test_the_game_asks_for_every_kind_of_phase_and_each_email_shows_examples(our_emails):
    names = {sent.name for sent in our_emails}
    assert {f"your_turn/{kind}" for kind in PHASE_KINDS} <= names
    assert {"reminder", "move_refused", "move_accepted", "results"} <= names
    for sent in our_emails:
        assert sent.originals, sent.name  # found again by its reply address
        if sent.name.startswith(("your_turn", "reminder")):
            assert sent.examples and all(f"    {e}" in sent.text for e in sent.examples)


def test_without_the_emails_sent_a_quote_cut_at_the_examples_would_move(our_emails):
    """The test below can fail: read without the emails, a quote that starts at "Reply
    to this email with your move" applies the example under it (the issue's case)."""
    moved = 0
    for sent in our_emails:
        if sent.examples:
            lines = sent.text.split("\n")
            first = next(n for n, line in enumerate(lines) if line.startswith("Reply to"))
            moved += bool(
                commands(strip_quoted("\n".join(quoted(lines[first:], "bare")))).submissions
            )
    assert moved >= len(PHASE_KINDS)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("own", [(), GREETING], ids=["nothing", "greeting"])
def test_a_quote_cut_at_any_line_in_any_style_is_no_move(our_emails, style, own):
    wrong = []
    for sent in our_emails:
        for first, quote in cuts(sent, style):
            got = read([*own, *quote], sent)
            if got.submissions or got.errors or got.said or set(got.ignored) - set(own):
                wrong.append(
                    f"{sent.name} from line {first}: {got.submissions} "
                    f"{got.errors[:1]} {got.ignored[:3]}"
                )
    assert not wrong, f"{len(wrong)} misread:\n" + "\n".join(wrong[:8])


def ambiguous(lines: list[str], first: int, command: str, style: str) -> bool:
    """The quote starts right under the words of `command` in the email, set apart from
    them by an empty line as the player's own line is (in an HTML email made text, any
    two blocks may be), and they are a whole line: a command typed above it reads as
    one more line of the quote.
    Named in the report; only the answers (move_refused, move_accepted) echo a command
    there (test below)."""
    above = [n for n in range(first) if replies._words(lines[n])]
    if not above:
        return False
    apart = style == "html" or any(not lines[n].strip() for n in range(above[-1] + 1, first))
    return apart and replies._words(lines[above[-1]]) == replies._words(command)


@pytest.mark.parametrize(
    "style",
    [
        "bare",
        "header",
        "attribution",
        "indented",
        "wrapped",
        "quoted",
        "quoted, wrapped without >",
        "html",
    ],
)
def test_the_example_typed_above_the_quote_is_the_move(our_emails, style):
    wrong = []
    for sent in our_emails:
        for command in sent.examples[:1] + sent.examples[-1:]:
            lines = body_lines(sent, style)
            for first, quote in cuts(sent, style):
                if ambiguous(lines, first, command, style):
                    continue
                got = read([command, *quote], sent)
                if got.submissions != (command,) or got.errors:
                    wrong.append(
                        f"{sent.name} '{command}' above line {first}: "
                        f"{got.submissions} {got.errors[:1]}"
                    )
    assert not wrong, f"{len(wrong)} misread:\n" + "\n".join(wrong[:8])


def test_only_the_answers_echo_a_command_right_above_a_cut(our_emails):
    """The ambiguity skipped above: no email that asks for a move has it."""
    for sent in our_emails:
        if not sent.name.startswith(("your_turn", "reminder")):
            continue
        for style in ("bare", "html"):
            lines = body_lines(sent, style)
            for command in sent.examples:
                assert not any(
                    ambiguous(lines, first, command, style) for first in range(len(lines))
                ), (sent.name, command)


def test_the_example_written_below_a_quote_with_marks_is_the_move(our_emails):
    """Thunderbird's habit: the reply below the ">" quote, the very example too."""
    for sent in our_emails:
        for command in sent.examples:
            for first, quote in cuts(sent, "quoted"):
                got = read([*quote, "", command, "", "Lion"], sent)
                assert got.submissions == (command,), (sent.name, first, got)


# --- item 2, through the way in: at each kind of phase ------------------------------------------


def reply_email(seat: Seat, address: str, lines: list[str]) -> bytes:
    return email("\n".join(lines), to=address, sender=seat.user.email)


def test_at_every_kind_of_phase_a_cut_quote_applies_nothing_and_a_typed_move_is_applied(
    alice, bob, charlie, many_emails
):
    game = three_player_game(alice, bob, charlie, setup="variable")
    seen: set[str] = set()
    for _ in range(400):
        game = fresh(game)
        if game.status != Game.Status.RUNNING or seen >= PHASE_KINDS:
            break
        name = phase_name(game)
        if name not in seen:
            seen.add(name)
            check_phase(game, name)
        game = play_phases(game, 1)
    assert seen >= PHASE_KINDS


def check_phase(game: Game, name: str) -> None:
    seat = waiting_seat(game)
    row = compose.your_turn(game, seat)
    assert row is not None
    lines = row.text.split("\n")
    first = next(n for n, line in enumerate(lines) if line.startswith("Reply to"))
    before = snapshot(game)
    # Every cut from what is asked down to the board (where the examples are: the
    # matrix above tries every line of every email, without the way in) ...
    asked, board = (
        lines.index(next(x for x in lines if x.startswith("WHAT IS ASKED"))),
        lines.index("THE BOARD"),
    )
    cases = [(cut, "bare") for cut in range(asked, board) if lines[cut].strip()]
    # ... and the cut, the example itself, all of it, in two more styles
    cases += [
        (cut, style)
        for cut in (first, first + 1, 0)
        for style in ("indented", "quoted, wrapped without >")
    ]
    for cut, style in cases:
        result = handle_message(
            reply_email(seat, row.reply_to, [*GREETING, *quoted(lines[cut:], style)])
        )
        assert result.verdict == Verdict.REFUSED, (name, cut, style, result)
        assert result.reason.startswith("No command was found"), (name, cut, style, result.reason)
        assert "Reply to this email" not in result.reason  # nothing of ours echoed
        assert snapshot(game) == before, (name, cut, style)
    example = view_text.examples(present(game, seat).view)[0]
    result = handle_message(
        reply_email(seat, row.reply_to, [example, *quoted(lines[first:], "bare")])
    )
    # Read as the move: applied, or refused by the rules for itself (the placement
    # example is always 'place C3 D3', which the board may not allow).
    assert result.accepted == (example,) or result.reason.startswith(
        f"Not accepted: '{example}'"
    ), (name, result)
    if result.verdict == Verdict.ACCEPTED and is_simultaneous(fresh(game).engine_state):
        assert PendingSubmission.objects.filter(seat=seat).exists()


# --- item 5: ">" lines wrapped without ">" ------------------------------------------------------


def test_a_quoted_line_wrapped_without_its_mark_is_quoted(our_emails):
    sent = next(s for s in our_emails if s.name == "your_turn/decision")
    lines = sent.text.split("\n")
    first = next(n for n, line in enumerate(lines) if line.startswith("Reply to"))
    reply = ["decide 2", "", ATTRIBUTION, *wrapped(lines[first:], 60, "> ")]
    assert any(line and not line.startswith(">") for line in reply[3:])  # wrapped so
    got = read(reply, sent)
    assert (got.submissions, got.ignored, got.errors) == (("decide 2",), (), ())


def test_a_line_typed_under_a_whole_quoted_line_is_the_players(our_emails):
    """A continuation starts in the middle of a line of ours; the player's starts
    after a whole one (here right under the quoted "e.g.:" line, without the example)."""
    sent = next(s for s in our_emails if s.name == "your_turn/decision")
    intro = next(line for line in sent.text.split("\n") if line.startswith("Reply to"))
    command = sent.examples[0]
    got = read([ATTRIBUTION, f"> {intro}", command], sent)
    assert got.submissions == (command,)


# --- item 5: the answer echoes only the player's own lines -------------------------------------

# What clients write around a reply, in many languages: none is the player's.
CLIENT_LINES = [
    "On Mon, 3 Mar 2026, Lion <lion@example.org> wrote:",
    "Am Mo., 3. März 2026 um 10:15 Uhr schrieb Löwenherz <play+x@games.example.org>:",
    "Il giorno lun 3 mar 2026 alle ore 10:15 Löwenherz <play+x@games.example.org> ha scritto:",
    "Le lun. 3 mars 2026 à 10:15, Löwenherz <play+x@games.example.org> a écrit :",
    "El lun, 3 mar 2026 a las 10:15, Löwenherz (<play+x@games.example.org>) escribió:",
    "Op ma 3 mrt 2026 om 10:15 schreef Löwenherz <play+x@games.example.org>:",
    "Den mån 3 mars 2026 kl 10:15 skrev Löwenherz <play+x@games.example.org>:",
    "W dniu 3.03.2026 o 10:15, Löwenherz pisze:",
    "Em seg., 3 de mar. de 2026 às 10:15, Löwenherz <play+x@games.example.org> escreveu:",
    "3 мар. 2026 г., в 10:15, Löwenherz <play+x@games.example.org> пишет:",
    "3 Mar 2026 Pzt, 10:15 tarihinde Löwenherz <play+x@games.example.org> şunu yazdı:",
    "在 2026年3月3日 周一 10:15，Löwenherz <play+x@games.example.org> 写道：",
    "2026年3月3日(月) 10:15 Löwenherz <play+x@games.example.org>:",
    "Στις Δευ 3 Μαρ 2026 στις 10:15, ο/η Löwenherz <play+x@games.example.org> έγραψε:",
    "În lun., 3 mar. 2026 la 10:15, Löwenherz <play+x@games.example.org> a scris:",
    "El dl., 3 de març 2026, a les 10:15, Löwenherz (<play+x@games.example.org>) va escriure:",
    "2026년 3월 3일 (월) 오전 10:15, Löwenherz <play+x@games.example.org>님이 작성:",
    "-----Original Message-----",
    "-----Ursprüngliche Nachricht-----",
    "-------- Message d'origine --------",
    "-----Messaggio originale-----",
    "________________________________",
    "Sent from my iPhone",
    "Von meinem iPhone gesendet",
    "Inviato da iPhone",
    "Envoyé de mon iPhone",
    "Enviado desde mi iPhone",
    "Enviado do meu iPhone",
    "Verzonden vanaf mijn iPhone",
    "Skickat från min iPhone",
    "Sendt fra min iPhone",
    "Wysłane z iPhone'a",
    "Von meinem/meiner Galaxy gesendet",
    "Get Outlook for Android",
    "Gesendet von Outlook für Android",
    "Sent from Yahoo Mail on Android",
    "Sent from ProtonMail mobile",
    "Отправлено с iPhone",
    "Надіслано з iPhone",
    "iPhone'umdan gönderildi",
    "Odesláno z iPhonu",
    "Lähetetty iPhonesta",
    "Az iPhone-omról küldve",
    "Trimis de pe iPhone-ul meu",
    "Enviat des del meu iPhone",
    "Στάλθηκε από το iPhone μου",
    "从我的iPhone发送",
    "發自我的 iPhone",
    "iPhoneから送信",
    "iPhone에서 보냄",
    "\n".join(HEADER),
    "Von: Löwenherz <play+x@games.example.org>\nGesendet: Montag, 3. März 2026 10:15\n"
    "An: Lion\nBetreff: Ihr Zug",
    "De : Löwenherz <play+x@games.example.org>\nEnvoyé : lundi 3 mars 2026 10:15\n"
    "À : Lion\nObjet : votre tour",
]


def placed(line: str, sent: Sent, where: str) -> list[str]:
    """The client's line in a reply 'decide 2, 3' signed 'Lion', and the quote after it."""
    lines = sent.text.rstrip("\n").split("\n")
    first = next(n for n, text in enumerate(lines) if text.startswith("Reply to"))
    after = {
        "before a quote with marks": ["", *(f"> {text}" for text in lines)],
        "before the whole email": ["", *lines],
        "before a cut email": ["", *lines[first:]],
        "at the end": [],
    }[where]
    return ["decide 2, 3", "", "Lion", line, *after]


@pytest.mark.parametrize(
    "where",
    ["before a quote with marks", "before the whole email", "before a cut email", "at the end"],
)
def test_what_clients_write_around_a_reply_is_not_echoed(our_emails, where):
    sent = next(s for s in our_emails if s.name == "your_turn/decision")
    wrong = []
    for line in CLIENT_LINES:
        got = read(placed(line, sent, where), sent)
        if (got.submissions, got.ignored, got.errors) != (("decide 2, 3",), ("Lion",), ()):
            wrong.append(f"{line[:50]!r}: {got.submissions} {got.ignored[:3]}")
    assert not wrong, "\n".join(wrong)


def test_the_confirmation_echoes_only_the_players_lines(alice, bob, charlie, many_emails):
    game = three_player_game(alice, bob, charlie)
    seat = waiting_seat(game)
    row = compose.your_turn(game, seat)
    assert row is not None
    need = game.engine_state.cards_to_choose(seat.colour)
    move = "decide 2, 3" if need == 2 else "decide 2"
    text = "\n".join(
        [
            move,
            "",
            "Thanks!",
            "Отправлено с iPhone",
            "",
            "3 мар. 2026 г., в 10:15, Löwenherz <play+x@games.example.org> пишет:",
            *(f"> {line}" for line in row.text.split("\n")),
        ]
    )
    result = handle_message(email(text, to=row.reply_to, sender=seat.user.email))
    assert result.verdict == Verdict.ACCEPTED
    assert result.reason.endswith("These lines were not read as commands:\n  Thanks!")


# --- item 4: a long quotation does not refuse a short reply ------------------------------------


def long_quote(row: OutgoingEmail, times: int) -> list[str]:
    """The email quoted with ">" under a thread of older ones: `times` copies of it."""
    return [ATTRIBUTION, *(f"> {line}" for line in row.text.split("\n"))] * times


def test_a_move_above_a_quote_longer_than_the_limits_is_applied(alice, bob, charlie, many_emails):
    game = three_player_game(alice, bob, charlie)
    seat = waiting_seat(game)
    row = compose.your_turn(game, seat)
    assert row is not None
    move = "decide 2, 3" if game.engine_state.cards_to_choose(seat.colour) == 2 else "decide 2"
    text = "\n".join([move, "", *long_quote(row, 100)])
    assert text.count("\n") > 2 * MAX_LINES and len(text) > 2 * replies.MAX_TEXT_CHARS
    result = handle_message(email(text, to=row.reply_to, sender=seat.user.email))
    assert result.verdict == Verdict.ACCEPTED and result.accepted == (move,)


def test_a_move_above_a_long_html_quote_is_applied(alice, bob, charlie, many_emails):
    game = three_player_game(alice, bob, charlie)
    seat = waiting_seat(game)
    row = compose.your_turn(game, seat)
    assert row is not None
    move = "decide 2, 3" if game.engine_state.cards_to_choose(seat.colour) == 2 else "decide 2"
    message = EmailMessage()
    message["From"], message["To"] = seat.user.email, row.reply_to
    quote = f'<div class="gmail_quote"><blockquote>{row.html * 60}</blockquote></div>'
    assert len(quote) > 200_000  # what was read of HTML at all before
    message.set_content(f"<div>{move}</div>{quote}", subtype="html")
    result = handle_message(message.as_bytes())
    assert result.verdict == Verdict.ACCEPTED and result.accepted == (move,)


def test_the_players_own_text_is_still_bounded_after_the_quote_is_cut(
    alice, bob, charlie, many_emails
):
    game = three_player_game(alice, bob, charlie)
    seat = waiting_seat(game)
    row = compose.your_turn(game, seat)
    assert row is not None
    own = ["decide 2", *(f"words {n}" for n in range(MAX_LINES + 10))]
    result = handle_message(
        email("\n".join([*own, "", *long_quote(row, 3)]), to=row.reply_to, sender=seat.user.email)
    )
    assert result.reason.startswith(f"Nothing was applied: only the first {MAX_LINES} lines")


@pytest.mark.timeout(60)
def test_an_email_is_read_only_as_far_as_the_bound_on_work():
    """A million short lines: read up to MAX_READ_LINES, and the rest said to be cut, so
    that nothing of it is applied (`commands` refuses a text that reached the cut)."""
    text = "decide 1, 3\n" + "> x\nOn 3 Mar 2026, a@b.c wrote:\n" * 500_000
    kept = strip_quoted(text)
    assert kept.endswith(replies.CUT_LINE) and kept.count("\n") < MAX_READ_LINES
    assert commands(kept).errors and not commands(kept).moves


def test_what_is_read_at_all_is_bounded():
    read_text = replies.read_bounded("x\n" * (MAX_READ_LINES + 5))
    assert read_text.count("\n") == MAX_READ_LINES and read_text.endswith(replies.CUT_LINE)
    assert len(replies.read_bounded("y" * 3_000_000)) < 1_100_000


def test_a_reply_is_read_beside_the_emails_sent_with_its_address(alice, bob, charlie):
    """The newest of each kind first (the ask is still there after many refusals), then
    the newest others; not another person's, and not a body housekeeping emptied."""
    game = three_player_game(alice, bob, charlie)
    seat = waiting_seat(game)
    ask = compose.your_turn(game, seat)
    assert ask is not None
    compose.reminder(game, seat)
    refusals = [compose.move_reply(seat, False, [f"decide {n}"], "No.") for n in range(12)]
    other = game.seats.exclude(pk=seat.pk).first()
    assert other is not None
    compose.your_turn(game, other)
    found = outbox.sent_with(ask.reply_to, seat.user_id, game.pk, 4)
    newest = refusals[-1]
    assert newest is not None and found[0] == (newest.text, newest.html)
    assert (ask.text, ask.html) in found and len(found) == 4
    assert all("Reply above" in text for text, _ in found)
    assert [text for text, _ in found if '" waits for you' in text] == [ask.text]
    OutgoingEmail.objects.filter(pk=ask.pk).update(text="", html="")  # housekeeping
    assert (ask.text, ask.html) not in outbox.sent_with(ask.reply_to, seat.user_id, game.pk, 4)


def test_a_message_ending_in_a_colon_above_a_quote_is_sent_not_taken_for_an_attribution(our_emails):
    sent = next(s for s in our_emails if s.name == "your_turn/decision")
    message = "say Let us meet on the hills at turn 3:"
    got = read([message, "", *(f"> {line}" for line in sent.text.split("\n"))], sent)
    assert got.said == (replies.Said("", "Let us meet on the hills at turn 3:"),)


def test_the_lines_looked_at_as_wrapped_parts_of_a_quote_are_bounded(our_emails):
    sent = next(s for s in our_emails if s.name == "your_turn/decision")
    intro = next(line for line in sent.text.split("\n") if line.startswith("Reply to"))
    head, _, tail = intro.rpartition(" quoted")
    lines = [f"> {head}", f"quoted{tail}"] * (replies.CONTINUATIONS + 50)
    marked = replies._quote_continuations(lines, sent.originals)
    assert sum(line.startswith(">quoted") for line in marked) == replies.CONTINUATIONS
