"""The table decides together (issue 24): the people seated vote to extend the current
phase's deadline, or to pause the phase, within the limits a club would set. Site policy,
not a rule of the game: the engine knows nothing of deadlines.

Decisions:
- Who votes: the people seated who are still in the game, a person's seat not conceded
  (one a computer stands in for after missed deadlines still votes: they may take their
  seat back). Computers do not vote. Any of them may propose; proposing is their yes.
- A proposal passes with a majority of them: more than half (2 of 2, 2 of 3, 3 of 4).
  With one person seated (the others computers) their proposal is a majority by itself
  and passes at once, within the same limits. It is rejected as soon as the votes not yet
  cast cannot make a majority, and expires with its phase or after VOTE_HOURS (the
  sweep closes it: `expire_votes`; until then `open_vote` no longer shows it).
- A vote once cast stands; one ballot per person and proposal.
- The limits (settings, README "The table decides together"): one open proposal per
  game; an extension of 1 to VOTE_EXTEND_MAX_HOURS hours, a pause of 1 to
  VOTE_PAUSE_MAX_DAYS days; VOTE_CHANGES_PER_PHASE passed (an extension or a pause, each
  one change) in a phase and VOTE_CHANGES_PER_GAME in a game; VOTE_PROPOSALS_PER_PHASE
  proposals made in a phase, whatever became of them (no one asks the table again and
  again). A paused game has no deadline to change: proposals and votes wait until it
  resumes.
- What passes is done by `games.deadlines` (`extend_by_vote`, `pause_by_vote`), which
  announces it with `deadline_extended` (every person seated is told by email); a new
  proposal is announced with `vote_proposed` (the others are asked to vote by email).
- Race-free: a proposal and a vote take the game's row lock (select_for_update), as every
  change to a game does. Two votes at once that would each make the majority take turns:
  the first passes the proposal, the second finds it closed and is refused; two proposals
  at once make one. The unique constraints (`one_open_vote_per_game`,
  `one_ballot_per_seat`) stand behind those checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.dispatch import Signal
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from games import deadlines, services
from games.models import PERSON, VOTES_HELD, Ballot, DeadlineVote, Game, Seat, none_held
from games.services import GameError

Kind = DeadlineVote.Kind
Status = DeadlineVote.Status

# game (its row locked), vote (the DeadlineVote just proposed, still open): sent inside
# the transaction that stores it. Received by games.mail.compose: every other voter is
# asked by email.
vote_proposed = Signal()


@dataclass(frozen=True)
class Tally:
    """Where a proposal stands: the votes cast by the people who may vote, and how many
    yes make the majority."""

    yes: list[str]  # colours, in seat order
    no: list[str]
    voters: int
    needed: int

    @property
    def votes(self) -> dict[str, bool]:
        """Colour → yes?, of the votes cast."""
        return {**dict.fromkeys(self.yes, True), **dict.fromkeys(self.no, False)}

    @property
    def passed(self) -> bool:
        return len(self.yes) >= self.needed

    @property
    def lost(self) -> bool:
        """Not even every vote still to come could make the majority."""
        return self.voters - len(self.no) < self.needed


# Who votes: a person seated who has not conceded (computers do not). `is_voter` says the
# same of a loaded seat.
VOTER = PERSON & Q(conceded=False)


def is_voter(seat: Seat) -> bool:
    return seat.is_person and not seat.conceded


def voters(game: Game) -> QuerySet[Seat]:
    """The seats whose person votes (`VOTER`)."""
    return game.seats.filter(VOTER)


def majority(count: int) -> int:
    """More than half of `count` voters: 1 of 1, 2 of 2, 2 of 3, 3 of 4."""
    return count // 2 + 1


def is_live(vote: DeadlineVote, game: Game, now: datetime) -> bool:
    """Open, and neither past its time nor its phase (the sweep closes it soon)."""
    return (
        vote.status == Status.OPEN
        and game.status == Game.Status.RUNNING
        and vote.phase_number == game.phase_number
        and now < vote.expires_at
    )


def open_vote(game: Game, now: datetime | None = None) -> DeadlineVote | None:
    """The game's proposal the table votes on now, if any."""
    return standing(game, now or timezone.now()).open


def tally(vote: DeadlineVote, seats: list[Seat]) -> Tally:
    """The votes on `vote` of the people who vote among `seats` (the game's, loaded)."""
    voting = [s for s in seats if is_voter(s)]
    cast = dict(vote.ballots.values_list("seat_id", "yes"))
    return Tally(
        yes=[s.colour for s in voting if cast.get(s.pk) is True],
        no=[s.colour for s in voting if cast.get(s.pk) is False],
        voters=len(voting),
        needed=majority(len(voting)),
    )


# --- what the limits leave ----------------------------------------------------------------


@dataclass(frozen=True)
class Left:
    """What the limits leave of the game's changes by vote now."""

    this_phase: int  # changes that may still pass in this phase
    this_game: int
    proposals: int  # proposals that may still be made in this phase


@dataclass(frozen=True)
class Standing:
    """Where the game's votes stand now: the proposal open, and what the limits leave."""

    open: DeadlineVote | None
    left: Left


def standing(game: Game, now: datetime) -> Standing:
    """The game's votes now, in one query: this phase's proposals and the game's passed
    ones (a few rows: the limits keep them few)."""
    rows = (
        []
        if none_held(game, VOTES_HELD)  # the page read that the game has had no vote
        else list(
            game.deadline_votes.filter(
                Q(phase_number=game.phase_number) | Q(status=Status.PASSED)
            ).select_related("proposer")
        )
    )
    passed = [v for v in rows if v.status == Status.PASSED]
    this_phase = [v for v in rows if v.phase_number == game.phase_number]
    return Standing(
        open=next((v for v in this_phase if is_live(v, game, now)), None),
        left=Left(
            this_phase=settings.VOTE_CHANGES_PER_PHASE
            - sum(v.phase_number == game.phase_number for v in passed),
            this_game=settings.VOTE_CHANGES_PER_GAME - len(passed),
            proposals=settings.VOTE_PROPOSALS_PER_PHASE - len(this_phase),
        ),
    )


def proposal_problem(game: Game, kind: str, amount: int, now: datetime) -> str | None:
    """Why the table may not be asked this now (the caller holds the game's row lock, and
    closed the proposals past their time: `_close_stale`); None if it may."""
    if kind == Kind.EXTEND and not 1 <= amount <= settings.VOTE_EXTEND_MAX_HOURS:
        return _("an extension is 1 to %(most)s hours") % {"most": settings.VOTE_EXTEND_MAX_HOURS}
    if kind == Kind.PAUSE and not 1 <= amount <= settings.VOTE_PAUSE_MAX_DAYS:
        return _("a pause is 1 to %(most)s days") % {"most": settings.VOTE_PAUSE_MAX_DAYS}
    if kind not in Kind.values:
        return _("propose an extension of the deadline or a pause of the phase")
    return changes_problem(game, now)


def changes_problem(game: Game, now: datetime, votes: Standing | None = None) -> str | None:
    """Why no proposal may be made in the game now, whatever it would be; None if one may.
    `votes`: where they stand, if the caller knows (`standing`)."""
    if game.status != Game.Status.RUNNING:
        return _("this game is not running")
    if game.paused or game.deadline is None:
        return _("the game is paused: its deadline is set aside until it resumes")
    votes = votes or standing(game, now)
    if votes.open is not None:
        return _("the table is voting on a proposal already: one at a time")
    limits = votes.left
    if limits.proposals <= 0:
        return ngettext(
            "%(count)s proposal was made in this phase, the most a phase takes",
            "%(count)s proposals were made in this phase, the most a phase takes",
            settings.VOTE_PROPOSALS_PER_PHASE,
        ) % {"count": settings.VOTE_PROPOSALS_PER_PHASE}
    if limits.this_phase <= 0:
        return ngettext(
            "the table changed this phase's deadline %(count)s time, the most a phase allows",
            "the table changed this phase's deadline %(count)s times, the most a phase allows",
            settings.VOTE_CHANGES_PER_PHASE,
        ) % {"count": settings.VOTE_CHANGES_PER_PHASE}
    if limits.this_game <= 0:
        return ngettext(
            "the table changed a deadline %(count)s time in this game, the most a game allows",
            "the table changed a deadline %(count)s times in this game, the most a game allows",
            settings.VOTE_CHANGES_PER_GAME,
        ) % {"count": settings.VOTE_CHANGES_PER_GAME}
    return None


# --- proposing and voting ---------------------------------------------------------------------


def propose(game_id: int, user: User, kind: str, amount: int) -> DeadlineVote:
    """The person asks the table to extend the deadline by `amount` hours or pause the
    phase for `amount` days; their own vote is yes. GameError if they may not (a proposal
    past its time is closed all the same: that is no change of the person's)."""
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=game_id)
        seat = _voter(game, user)
        now = timezone.now()
        _close_stale(game, now)
        problem = proposal_problem(game, kind, amount, now)
        if problem is None:
            vote = _open(game, seat, kind, amount, now)
            _count(game, vote, now, by=user)
            if vote.status == Status.OPEN:
                vote_proposed.send(sender=DeadlineVote, game=game, vote=vote)
    if problem is not None:
        raise GameError(problem)
    return vote


def _open(game: Game, seat: Seat, kind: str, amount: int, now: datetime) -> DeadlineVote:
    """A new proposal, with its proposer's yes, noted in the log."""
    vote = DeadlineVote.objects.create(
        game=game,
        phase_number=game.phase_number,
        kind=kind,
        amount=amount,
        proposer=seat,
        created_at=now,
        expires_at=now + timedelta(hours=settings.VOTE_HOURS),
    )
    Ballot.objects.create(vote=vote, seat=seat, yes=True, cast_at=now)
    until = vote.expires_at.isoformat()
    _note(game, "vote_proposed", player=seat.colour, **_what(vote), until=until)
    return vote


def cast(game_id: int, user: User, yes: bool) -> DeadlineVote:
    """The person's vote on the proposal open now. GameError if there is none, they voted
    on it already, they may not vote, or the game is paused (a proposal past its time is
    closed all the same)."""
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=game_id)
        seat = _voter(game, user)
        now = timezone.now()
        _close_stale(game, now)
        vote = open_vote(game, now)
        problem = _ballot_problem(game, vote, seat)
        if vote is not None and problem is None:
            Ballot.objects.create(vote=vote, seat=seat, yes=yes, cast_at=now)
            _note(game, "vote_cast", player=seat.colour, yes=yes, **_what(vote))
            _count(game, vote, now, by=user)
    if vote is None or problem is not None:
        raise GameError(problem)
    return vote


def _ballot_problem(game: Game, vote: DeadlineVote | None, seat: Seat) -> str | None:
    """Why the seat's vote may not be cast on `vote` (the proposal open now) now."""
    if vote is None:
        return _("the table is voting on no proposal now")
    if vote.ballots.filter(seat=seat).exists():
        return _("you have voted on this proposal already")
    if game.paused or game.deadline is None:
        return _("the game is paused: its deadline is set aside until it resumes")
    return None


def _voter(game: Game, user: User) -> Seat:
    """The person's seat, if they vote in the game (a person's seat, not conceded)."""
    seat = voters(game).filter(user=user).first()
    if seat is None:
        if game.seats.filter(user=user, conceded=True).exists():
            raise GameError(_("you conceded this game: the others decide its deadlines"))
        raise GameError(_("you have no seat in this game"))
    return seat


def _note(game: Game, kind: str, **data: Any) -> None:
    """An event in the game's log (the caller holds the game's row lock)."""
    services.note_event(game, kind, **data)


def _what(vote: DeadlineVote) -> dict[str, Any]:
    """What a proposal asks, as the log's events store it."""
    unit = "hours" if vote.kind == Kind.EXTEND else "days"
    return {"proposal": vote.kind, unit: vote.amount}


def _count(game: Game, vote: DeadlineVote, now: datetime, *, by: User) -> None:
    """Close the proposal if the votes decide it: passed (and done), or rejected."""
    result = tally(vote, list(game.seats.all()))
    proposer = vote.proposer.colour
    if result.passed:
        _close(vote, Status.PASSED, now)
        if vote.kind == Kind.EXTEND:
            deadlines.extend_by_vote(game, vote.amount, now, player=proposer, by=by)
        else:
            deadlines.pause_by_vote(game, vote.amount, now, player=proposer, by=by)
    elif result.lost:
        _close(vote, Status.REJECTED, now)
        _note(game, "vote_rejected", player=proposer, **_what(vote))


def _close(vote: DeadlineVote, status: str, now: datetime) -> None:
    vote.status, vote.closed_at = status, now
    vote.save(update_fields=["status", "closed_at"])


# --- proposals past their time or phase ------------------------------------------------------


def expire_votes(now: datetime) -> None:
    """Every sweep: close the open proposals past their time or their phase, each game
    under its row lock (skipped if another holds it: the next sweep looks again). Through
    the partial index `vote_open`: the open proposals only."""
    stale = DeadlineVote.objects.filter(status=Status.OPEN).filter(
        Q(expires_at__lte=now)
        | ~Q(phase_number=F("game__phase_number"))
        | ~Q(game__status=Game.Status.RUNNING)
    )
    deadlines.each(set(stale.values_list("game_id", flat=True)), _expire_in, now)


def _expire_in(game_id: int, now: datetime) -> None:
    with transaction.atomic():
        game = Game.objects.select_for_update(skip_locked=True).filter(pk=game_id).first()
        if game is not None:
            _close_stale(game, now)


def _close_stale(game: Game, now: datetime) -> None:
    """The game's open proposal, if it is past its time or phase, closed as expired and
    noted in the log (the caller holds the game's row lock)."""
    vote = game.deadline_votes.filter(status=Status.OPEN).select_related("proposer").first()
    if vote is None or is_live(vote, game, now):
        return
    _close(vote, Status.EXPIRED, now)
    _note(game, "vote_expired", player=vote.proposer.colour, **_what(vote))
