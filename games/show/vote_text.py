"""The table's votes (games.votes) in sentences, for the game page, the emails and the
answer to a vote by email: what a proposal asks, where it stands, a vote counted. The log's
lines of the same events are games.show.event_text's.
"""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from games.models import DeadlineVote

Kind = DeadlineVote.Kind
Status = DeadlineVote.Status


def proposal_text(vote: DeadlineVote, proposer: str) -> str:
    """ "Alice asks the table to extend the deadline by 24 hours." """
    if vote.kind == Kind.PAUSE:
        return ngettext(
            "%(player)s asks the table to pause the phase for %(days)s day.",
            "%(player)s asks the table to pause the phase for %(days)s days.",
            vote.amount,
        ) % {"player": proposer, "days": vote.amount}
    return ngettext(
        "%(player)s asks the table to extend the deadline by %(hours)s hour.",
        "%(player)s asks the table to extend the deadline by %(hours)s hours.",
        vote.amount,
    ) % {"player": proposer, "hours": vote.amount}


def majority_text(needed: int, voters: int) -> str:
    """ "It passes when 2 of the 3 people seated vote yes (computers do not vote)." """
    return ngettext(
        "It passes when %(needed)s of the %(voters)s person seated votes yes (computers do "
        "not vote).",
        "It passes when %(needed)s of the %(voters)s people seated vote yes (computers do "
        "not vote).",
        voters,
    ) % {"needed": needed, "voters": voters}


def counted_text(vote: DeadlineVote, yes: bool) -> str:
    """The answer to a vote by email: what was counted, and what became of the proposal."""
    words = {"hours": vote.amount, "days": vote.amount}
    if vote.kind == Kind.PAUSE and yes:
        counted = ngettext(
            "Your vote is counted: yes to pausing the phase for %(days)s day.",
            "Your vote is counted: yes to pausing the phase for %(days)s days.",
            vote.amount,
        )
    elif vote.kind == Kind.PAUSE:
        counted = ngettext(
            "Your vote is counted: no to pausing the phase for %(days)s day.",
            "Your vote is counted: no to pausing the phase for %(days)s days.",
            vote.amount,
        )
    elif yes:
        counted = ngettext(
            "Your vote is counted: yes to extending the deadline by %(hours)s hour.",
            "Your vote is counted: yes to extending the deadline by %(hours)s hours.",
            vote.amount,
        )
    else:
        counted = ngettext(
            "Your vote is counted: no to extending the deadline by %(hours)s hour.",
            "Your vote is counted: no to extending the deadline by %(hours)s hours.",
            vote.amount,
        )
    return f"{counted % words} {outcome_text(vote)}"


def outcome_text(vote: DeadlineVote) -> str:
    """What became of the proposal, in a sentence."""
    if vote.status == Status.PASSED:
        return _("The table said yes: it is done.")
    if vote.status == Status.REJECTED:
        return _("The table said no: nothing changes.")
    return _("The vote goes on until a majority is reached, or it closes.")
