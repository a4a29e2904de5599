"""`manage.py declare_queues`: every Celery queue declared once, before workers start
(lowenherz_site.celery.declare_queues says why; `dev.py run` calls it)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from lowenherz_site.celery import declare_queues


class Command(BaseCommand):
    help = "Declare every Celery queue once, before the workers start."

    def handle(self, *args: Any, **options: Any) -> None:
        declare_queues()
