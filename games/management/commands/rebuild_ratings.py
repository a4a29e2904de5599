"""manage.py rebuild_ratings: every rating and its history made again from the finished
games alone (games.ratings.rebuild), replacing what is stored."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from games import ratings


class Command(BaseCommand):
    help = "Rebuild every rating and its history from the finished games."

    def handle(self, *args: Any, **options: Any) -> None:
        rated = ratings.rebuild()
        self.stdout.write(f"Ratings rebuilt from {rated} rated games.")
