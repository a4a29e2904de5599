"""A database of the suite's own for the length of a run, as the test runner makes one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from django.test.utils import setup_test_environment, teardown_test_environment


@contextmanager
def bench_database() -> Iterator[None]:
    """`bench_<NAME>` made fresh (migrated), and dropped afterwards."""
    setup_test_environment(debug=False)
    old_name = connection.settings_dict["NAME"]
    # Not the test runner's test_<NAME>: the suite runs beside the tests (tests/test_bench.py)
    # and would drop their database.
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"bench_{old_name}"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        teardown_test_environment()


def empty_tables() -> None:
    """Every table of the site emptied between benchmarks (faster than a new database)."""
    from django.apps import apps

    tables = [m._meta.db_table for m in apps.get_models() if m._meta.managed]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
        else:
            for table in tables:
                cursor.execute(f"DELETE FROM {table}")
