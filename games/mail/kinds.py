"""Every kind of email the site sends, and what each kind is: one table (`KINDS`).

compose, outbox and notify ask it (`of`, `named`) instead of keeping sets of their own.
A kind's templates are templates/emails/<template>-subject.txt, -body.txt and -body.html;
tests/site/test_email_kinds.py checks that every kind has its three and every template
its kind, and that the outbox refuses a kind not in the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """What the code does differently for an email of this kind."""

    # An answer to the person's own email, or news of their account: sent whatever
    # their preferences, without an unsubscribe link, "Auto-Submitted: auto-replied".
    transactional: bool = False
    # Asks for a move: never held for the digest; an ask of a later phase supersedes
    # one of an earlier phase not sent yet (outbox.supersede_asks).
    ask: bool = False
    # May wait for the daily digest of a person who chose it (the others go at once).
    digest: bool = False
    # In the game's one thread in the reader's mail client (In-Reply-To the game's root).
    threaded: bool = False
    # Carries a link that mutes the game for its reader.
    mute_link: bool = False
    # At most one per person, game and phase: the unique constraint
    # `one_email_per_phase` (games.models.PHASE_EMAILS, which must agree).
    one_per_phase: bool = False
    # Tells the table's messages unread by the reader (when sent as written, not held).
    carries_talk: bool = False
    # A call to vote (games.votes): moot, and dropped unsent, once the vote is decided or
    # its reader has voted before it leaves (outbox.send), as an ask is once answered.
    asks_vote: bool = False
    # Owed news: a held row never sent as it is (told in the person's next email of
    # the game, or composed afresh once due): not rendered (compose._owed).
    owed_news: bool = False
    # Not an email: a Web Push notification to the person's subscribed browsers
    # (games.mail.push.deliver sends it; its body is the push's JSON payload), whatever
    # their email preferences; never rendered.
    push: bool = False
    # The templates' name; "": never rendered (a row of owed news only).
    template: str | None = None


KINDS: dict[str, Kind] = {
    # A game's play.
    "your_turn": Kind(
        threaded=True, ask=True, mute_link=True, one_per_phase=True, carries_talk=True
    ),
    "reminder": Kind(threaded=True, ask=True, mute_link=True),
    "results": Kind(
        threaded=True,
        digest=True,
        mute_link=True,
        one_per_phase=True,
        carries_talk=True,
        owed_news=True,
    ),
    "game_over": Kind(threaded=True, digest=True, one_per_phase=True, carries_talk=True),
    "messages": Kind(threaded=True, digest=True, mute_link=True, carries_talk=True),
    # Told in the next email of the game, or by "messages" once due.
    "message_owed": Kind(threaded=True, mute_link=True, owed_news=True, template=""),
    # The ask of a person watching the game's page (games.watching): sent as "your_turn"
    # once due, unless they looked at the game since or moved (notify._flush).
    "your_turn_owed": Kind(threaded=True, mute_link=True, owed_news=True, template=""),
    # Held (owed news) for the next email of the game, or sent alone once due; rendered
    # only for a digest reader, or when it goes alone (compose.deadline_extended).
    "deadline_extended": Kind(threaded=True, digest=True, mute_link=True, owed_news=True),
    # An ask by Web Push, beside the ask's email or instead of it (PushChoice).
    "push": Kind(push=True, template=""),
    # The table is asked to vote (games.votes): at once, since the vote closes soon.
    "vote_proposed": Kind(threaded=True, mute_link=True, asks_vote=True),
    # Answers to a person's email.
    "move_accepted": Kind(threaded=True, transactional=True),
    "move_refused": Kind(threaded=True, transactional=True),
    "reply_dropped": Kind(threaded=True, transactional=True),
    "refusal": Kind(transactional=True),
    # Not of one game's play.
    "invitation": Kind(),
    "digest": Kind(),
    "repair_needed": Kind(),
    # News of a person's account.
    "signup_confirm": Kind(transactional=True),
    "signup_taken": Kind(transactional=True),
    "signup_name_taken": Kind(transactional=True),
    "email_confirm": Kind(transactional=True),
    "email_changed": Kind(transactional=True),
    "email_change_asked": Kind(transactional=True),
    "email_change_taken": Kind(transactional=True),
}


class UnknownKind(ValueError):
    """A kind of email not in `KINDS`: a mistake in the code, never a person's."""


def of(name: str) -> Kind:
    """The kind of this name; UnknownKind if the table has none."""
    try:
        return KINDS[name]
    except KeyError:
        raise UnknownKind(
            f"{name!r} is no kind of email: games.mail.kinds.KINDS names "
            f"every kind the site sends ({', '.join(sorted(KINDS))})"
        ) from None


def template(name: str) -> str:
    """The name of the kind's templates (templates/emails/<it>-subject.txt ...)."""
    found = of(name).template
    return name if found is None else found


def named(has: Callable[[Kind], bool]) -> tuple[str, ...]:
    """The kinds that have it, in the table's order: `named(lambda k: k.ask)`."""
    return tuple(name for name, kind in KINDS.items() if has(kind))


ASKS = named(lambda k: k.ask)
ONE_PER_PHASE = named(lambda k: k.one_per_phase)
