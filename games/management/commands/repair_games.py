"""`manage.py repair_games`: the games whose stored moves fail to apply, and retrying them.

A game whose phase the engine fails to apply RESOLVE_MAX_ATTEMPTS times in a row is
paused for repair (games.services.note_broken): its operators got an email, and nothing
more is resolved or queued for it. This lists those games (and those still being tried
again), and retries them once their cause is mended: the mark and its count are cleared
and the resolve is queued (with RESOLVE_MAX_ATTEMPTS tries again).

    manage.py repair_games                  # id, name, since, attempts, phase, error
    manage.py repair_games -v 2             # ... with each whole error
    manage.py repair_games --retry 12 15    # those games (each must be paused for repair)
    manage.py repair_games --retry-all      # every game paused for repair
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from games import services
from games.models import Game


class Command(BaseCommand):
    help = "List the games paused for repair (their moves failed to apply), or retry them."

    def add_arguments(self, parser: CommandParser) -> None:
        what = parser.add_mutually_exclusive_group()
        what.add_argument(
            "--retry",
            type=int,
            nargs="+",
            metavar="ID",
            help="retry these games (each must be paused for repair)",
        )
        what.add_argument(
            "--retry-all", action="store_true", help="retry every game paused for repair"
        )

    def handle(
        self,
        *args: Any,
        retry: list[int] | None = None,
        retry_all: bool = False,
        verbosity: int = 1,
        **options: Any,
    ) -> None:
        if retry or retry_all:
            self._retry(retry or list(_paused().values_list("pk", flat=True)))
        else:
            self._list(verbosity)

    def _list(self, verbosity: int) -> None:
        games = list(
            Game.objects.filter(resolve_failures__gt=0).order_by("needs_repair_since", "pk")
        )
        if not games:
            self.stdout.write("No game needs repair.")
            return
        most = settings.RESOLVE_MAX_ATTEMPTS
        for game in games:
            since = (
                f"paused for repair since {game.needs_repair_since:%Y-%m-%d %H:%M:%S %Z}"
                if game.needs_repair_since
                else "being tried again"
            )
            self.stdout.write(
                f"{game.pk}\t{game.name}\t{since}\t"
                f"attempts {game.resolve_failures} of {most}\t"
                f"phase {game.phase_number}\t{_last_line(game.resolve_error)}"
            )
            if verbosity > 1:
                self.stdout.write(game.resolve_error)

    def _retry(self, ids: list[int]) -> None:
        if not ids:
            self.stdout.write("No game needs repair.")
            return
        # Every id checked first: a typo changes nothing, not half of what was asked.
        paused = set(_paused().filter(pk__in=ids).values_list("pk", flat=True))
        wrong = [pk for pk in ids if pk not in paused]
        if wrong:
            raise CommandError(
                f"not paused for repair (see `manage.py repair_games`): "
                f"{', '.join(map(str, wrong))}; nothing was retried"
            )
        for pk in dict.fromkeys(ids):
            try:
                work = services.retry_repair(pk)
            except services.GameError as error:  # retried by someone else meanwhile
                raise CommandError(str(error)) from None
            queued = (
                "its resolve is queued"
                if work.resolve
                else "it waits for moves, none is queued"
                if not work
                else "its tasks are queued"
            )
            self.stdout.write(f"{pk}: retried; {queued}")


def _paused() -> Any:
    return Game.objects.filter(needs_repair_since__isnull=False)


def _last_line(error: str) -> str:
    """The exception's own line, the traceback's last."""
    lines = error.strip().splitlines()
    return lines[-1] if lines else ""
