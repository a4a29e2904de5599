"""A database of the suite's own for the length of a run, as the test runner makes one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper
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


@contextmanager
def second_database(suffix: str) -> Iterator[BaseDatabaseWrapper]:
    """`bench_<NAME>_<suffix>` beside the suite's database, on the same server: a copy of
    it emptied (the same tables), with a connection of its own to run the site's code on
    (`using`); dropped afterwards. For a benchmark that alternates two sizes of the same
    tables, each in its database, rather than measuring one size after the other."""
    main = connection.settings_dict["NAME"]
    name = f"{main}_{suffix}"
    empty_tables()
    connection.close()  # a template is copied only while nobody is connected to it
    _server(f'DROP DATABASE IF EXISTS "{name}"', f'CREATE DATABASE "{name}" TEMPLATE "{main}"')
    main_wrapper = connections[DEFAULT_DB_ALIAS]
    other = type(main_wrapper)({**main_wrapper.settings_dict, "NAME": name}, DEFAULT_DB_ALIAS)
    try:
        yield other
    finally:
        other.close()
        _server(f'DROP DATABASE IF EXISTS "{name}"')


@contextmanager
def using(wrapper: BaseDatabaseWrapper) -> Iterator[None]:
    """`wrapper` is the default connection meanwhile: the site's code runs on its
    database (its connection stays open from one use to the next)."""
    previous = connections[DEFAULT_DB_ALIAS]
    connections[DEFAULT_DB_ALIAS] = wrapper
    try:
        yield
    finally:
        connections[DEFAULT_DB_ALIAS] = previous


def _server(*statements: str) -> None:
    """Statements on the server, outside any database (CREATE and DROP DATABASE)."""
    with connection._nodb_cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
