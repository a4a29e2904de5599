"""manage.py rebuild_ratings: every rating and its history made again from the finished
games alone (games.ratings.rebuild), replacing what is stored."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from games import people, ratings
from games.models import Rating


class Command(BaseCommand):
    help = "Rebuild every rating and its history from the finished games."

    def handle(self, *args: Any, **options: Any) -> None:
        before = set(Rating.objects.values_list("user_id", flat=True))
        rated = ratings.rebuild()
        people.forget(before | set(Rating.objects.values_list("user_id", flat=True)))
        self.stdout.write(f"Ratings rebuilt from {rated} rated games.")
