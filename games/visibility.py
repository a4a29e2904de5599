"""Who may see a game. An invite-only game is seen only by its players and the people
invited to it: those who opened its invite link (this browser's session remembers it) and
those an invitation email went to. To everyone else it does not exist (404), on every
URL that names it (its page, JSON, live updates, history, table actions, the mute and
invitation pages, the archive) and in every list: game ids are sequential, so an answer
that differed from a missing game's would tell that one exists.

The one home of the rule, for the site's pages (games.views) and the pages behind the
links in emails (games.mail.views) alike.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404

from games.models import Game, OutgoingEmail, Seat

INVITED = "invited_games"  # session key: the invite-only games whose link was opened here
INVITES_REMEMBERED = 50


def invited_in_session(request: HttpRequest) -> list[int]:
    ids = request.session.get(INVITED, [])
    return [i for i in ids if isinstance(i, int)] if isinstance(ids, list) else []


def remember_invite(request: HttpRequest, game: Game) -> None:
    """The invite link was opened: this browser may see the game from now on."""
    ids = invited_in_session(request)
    if game.pk not in ids:
        request.session[INVITED] = [*ids, game.pk][-INVITES_REMEMBERED:]


def visible_games(request: HttpRequest, games: QuerySet[Game]) -> QuerySet[Game]:
    """`games` but the invite-only ones the requesting person neither plays in nor was
    invited to (by the link, in this session, or by an email to their address)."""
    allowed = Q(invite_only=False) | Q(pk__in=invited_in_session(request))
    user = request.user
    if user.is_authenticated:
        allowed |= Q(pk__in=Seat.objects.filter(user=user).values("game_id"))
        if user.email:
            allowed |= Q(
                pk__in=OutgoingEmail.objects.filter(
                    kind="invitation", to__iexact=user.email, game__isnull=False
                ).values("game_id")
            )
    return games.filter(allowed)


def visible_sql(request: HttpRequest, games: str) -> tuple[str, list[int | str]]:
    """`visible_games`' rule as an SQL condition on the games' table named `games` (an
    alias), and its parameters: for a query written by hand where building it in the ORM
    costs more than running it (games.views.people). The rule stays `visible_games`'s:
    tests/site/test_visibility_sql.py proves the two agree."""
    allowed, params = [f"NOT {games}.invite_only"], list[int | str]()
    invited = invited_in_session(request)
    if invited:
        allowed.append(f"{games}.id IN ({', '.join(['%s'] * len(invited))})")
        params += invited
    user = request.user
    if user.is_authenticated:
        allowed.append(
            f"{games}.id IN (SELECT game_id FROM {Seat._meta.db_table} WHERE user_id = %s)"
        )
        params.append(user.pk)
        if user.email:
            allowed.append(_INVITED_BY_EMAIL.format(games=games))
            params.append(user.email)
    return f"({' OR '.join(allowed)})", params


# `iexact` as the ORM writes it on PostgreSQL; SQLite's UPPER, like the LIKE the ORM
# writes there, changes ASCII letters only.
_INVITED_BY_EMAIL = f"""{{games}}.id IN (SELECT game_id FROM {OutgoingEmail._meta.db_table}
WHERE kind = 'invitation' AND game_id IS NOT NULL AND UPPER("to") = UPPER(%s))"""


def visible_game(request: HttpRequest, games: QuerySet[Game], **lookup: object) -> Game:
    """The game, if the requesting person may see it; else 404, as if it did not exist.
    Only an invite-only game asks who may see it (an open page polls this)."""
    game = get_object_or_404(games, **lookup)
    if game.invite_only and not visible_games(request, Game.objects.filter(pk=game.pk)).exists():
        raise Http404
    return game
