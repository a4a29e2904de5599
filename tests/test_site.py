"""The Django site stands up: `manage.py check` passes and migrations are complete."""

from __future__ import annotations

from django.core.management import call_command


def test_manage_py_check_passes():
    call_command("check", fail_level="WARNING")


def test_no_model_change_lacks_a_migration(db):
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)
