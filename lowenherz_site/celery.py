"""The Celery app, configured from Django settings (namespace CELERY)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lowenherz_site.settings")

app = Celery("lowenherz_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
