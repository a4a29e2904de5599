"""The kinds of email (games.mail.kinds): one table says what each kind is; every kind
has its three templates and every template its kind; the code queues no kind the table
does not know, and the outbox refuses one."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from games import chat
from games.mail import kinds, notify, outbox
from games.models import PHASE_EMAILS, EmailPreference, Notifications, OutgoingEmail

ROOT = Path(__file__).resolve().parents[2]
EMAILS = ROOT / "templates" / "emails"
PARTS = ("-subject.txt", "-body.txt", "-body.html")
# The functions of games/ that take a kind of email, and where: its argument's index.
TAKES_KIND = {
    "_send": 0,
    "_owed": 0,
    "queue": 0,
    "_never_sent": 0,
    "is_queued": 0,
    "_tell_now": 2,
    "can_mail": 1,
    "is_wanted": 1,
    "status_for": 1,
}


def template_names() -> set[str]:
    """Every <name> of templates/emails/<name>-subject.txt etc. (not the _partials)."""
    found = set()
    for path in EMAILS.iterdir():
        for part in PARTS:
            if path.name.endswith(part) and not path.name.startswith("_"):
                found.add(path.name[: -len(part)])
    return found


def test_every_kind_has_its_three_templates_and_every_template_its_kind() -> None:
    rendered = {kinds.template(name) for name, kind in kinds.KINDS.items() if kind.template != ""}
    missing = [
        f"{name}{part}"
        for name in sorted(rendered)
        for part in PARTS
        if not (EMAILS / f"{name}{part}").is_file()
    ]
    assert not missing, f"templates missing in templates/emails/: {missing}"
    strays = template_names() - rendered
    assert not strays, f"templates of no kind in games.mail.kinds.KINDS: {sorted(strays)}"


def test_the_kinds_once_per_phase_are_those_of_the_database_constraint() -> None:
    """`one_email_per_phase` is in the schema (games.models.PHASE_EMAILS, a migration):
    the table must say the same."""
    assert set(kinds.ONE_PER_PHASE) == set(PHASE_EMAILS)


def _strings(node: ast.expr, constants: dict[str, set[str]]) -> set[str]:
    """The strings an argument can be: a literal, `"a" if c else "b"`, or a name
    assigned such in the module (a parameter: nothing known)."""
    if isinstance(node, ast.Constant):
        return {node.value} if isinstance(node.value, str) else set()
    if isinstance(node, ast.IfExp):
        return _strings(node.body, constants) | _strings(node.orelse, constants)
    if isinstance(node, ast.Name):
        return constants.get(node.id, set())
    return set()


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _from_outbox(func: ast.expr) -> bool:
    """Whether a call is on `OutgoingEmail.objects...` (its `kind=` is an email's)."""
    while isinstance(func, ast.Attribute | ast.Call):
        func = func.value if isinstance(func, ast.Attribute) else func.func
    return isinstance(func, ast.Name) and func.id == "OutgoingEmail"


def kinds_in_code() -> Iterator[tuple[str, str]]:
    """(kind, where) for every kind of email games/ names when it queues, checks or
    looks up an email."""
    for path in sorted((ROOT / "games").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        constants: dict[str, set[str]] = {}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                constants.setdefault(node.targets[0].id, set()).update(_strings(node.value, {}))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            index = TAKES_KIND.get(_name(node.func))
            if index is not None and len(node.args) > index:
                yield from ((kind, where) for kind in _strings(node.args[index], constants))
            if _from_outbox(node.func):
                for keyword in node.keywords:
                    if keyword.arg == "kind":
                        yield from ((kind, where) for kind in _strings(keyword.value, constants))


def test_every_kind_the_code_names_is_in_the_table() -> None:
    found = list(kinds_in_code())
    unknown = [f"{kind} ({where})" for kind, where in found if kind not in kinds.KINDS]
    assert not unknown, f"kinds of email not in games.mail.kinds.KINDS: {unknown}"
    # The scan sees literals, constants and choices, so it can fail at all:
    names = {kind for kind, _ in found}
    assert {
        "your_turn",
        "deadline_extended",
        "repair_needed",
        "move_refused",
        "invitation",
        "digest",
    } <= names


def test_the_outbox_refuses_a_kind_not_in_the_table_and_stores_nothing(alice) -> None:
    with pytest.raises(kinds.UnknownKind, match="'your_trun' is no kind of email"):
        outbox.queue("your_trun", alice.email, "S", "T\n", "<p>T</p>", user=alice)
    assert not OutgoingEmail.objects.exists()


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (
            EmailPreference.DIGEST,
            {"results": "held", "your_turn": "queued", "signup_confirm": "queued"},
        ),
        (EmailPreference.OFF, {"results": None, "your_turn": None, "signup_confirm": "queued"}),
        (
            EmailPreference.EVERY,
            {"results": "queued", "your_turn": "queued", "signup_confirm": "queued"},
        ),
    ],
)
def test_the_table_alone_says_whether_an_email_waits_for_the_digest(alice, mode, expected) -> None:
    """No caller says whether its email is urgent (the outbox takes no such flag): news
    waits for a digest reader's digest, an ask never does, an account's email is sent
    even to a person who wants none."""
    Notifications.objects.update_or_create(user=alice, defaults={"mode": mode})
    alice.refresh_from_db()
    assert {kind: outbox.status_for(alice, kind) for kind in expected} == expected


def test_a_digest_readers_owed_messages_wait_unrendered_then_go_in_the_digest(
    game, alice, bob
) -> None:
    """message_owed never waits for the digest itself (it is folded into the person's
    next email of the game, or replaced by "messages" once due): a held row of owed news,
    not rendered; the "messages" that replaces it is what the digest carries."""
    Notifications.objects.update_or_create(user=bob, defaults={"mode": EmailPreference.DIGEST})
    chat.post(game.pk, alice.pk, "Anyone there?")
    (owed,) = OutgoingEmail.objects.filter(user=bob, kind="message_owed")
    assert owed.status == OutgoingEmail.Status.COALESCING
    assert owed.text == "New messages at the table: told in the next email of the game.\n"
    due = timezone.now() + timedelta(seconds=settings.EMAIL_MESSAGES_HOLD_SECONDS + 1)
    notify.flush_due(due)
    (email,) = OutgoingEmail.objects.filter(user=bob, kind="messages")
    assert email.status == OutgoingEmail.Status.HELD and "Anyone there?" in email.text
    owed.refresh_from_db()
    assert owed.status == OutgoingEmail.Status.FOLDED
