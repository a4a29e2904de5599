"""Rows of the outbox's models written and read as SQL (issue 25).

New rows of one model in one INSERT (`insert`); a row's columns named (`columns`) and
its values read back into an instance (`read`), for the statements notify and the
outbox write by hand.

`insert` does what `QuerySet.bulk_create` does for the rows a phase's emails make (the
emails, their reply tokens, their magic links), without the ORM's building of the
statement, which cost the notify task more CPU than the INSERT itself. Each value goes through its
field as bulk_create sends it (`pre_save`: a default made now, `auto_now_add`; then
`get_db_prep_save`: a JSON field's adapter, a datetime's zone), and each row gets its
id back (RETURNING). Like bulk_create: no signal is sent, no `save()` is called.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from functools import reduce
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import Field, Model


def insert(rows: Sequence[Model]) -> None:
    """Store `rows` (new instances of one model, without ids) in one INSERT, and give
    each its id. On a database that cannot return the ids of a multi-row INSERT: one
    bulk_create."""
    if not rows:
        return
    model = type(rows[0])
    assert all(type(row) is model and row._state.adding for row in rows), "new rows of one model"
    if not connection.features.can_return_rows_from_bulk_insert:
        model._default_manager.bulk_create(rows)
        return
    fields = _fields(model)
    values = [
        [field.get_db_prep_save(field.pre_save(row, True), connection) for field in fields]
        for row in rows
    ]
    one = f"({', '.join(['%s'] * len(fields))})"
    pk = model._meta.pk
    assert pk is not None
    quote = connection.ops.quote_name
    columns = ", ".join(quote(str(f.column)) for f in fields)
    sql = (
        f"INSERT INTO {quote(model._meta.db_table)} ({columns}) "
        f"VALUES {', '.join([one] * len(rows))} RETURNING {quote(str(pk.column))}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [value for row in values for value in row])
        ids = [found for (found,) in cursor.fetchall()]
    for row, found in zip(rows, ids, strict=True):  # PostgreSQL returns them in order
        setattr(row, pk.attname, found)
        row._state.adding, row._state.db = False, connection.alias


@functools.lru_cache(maxsize=8)  # one entry a model written here (three)
def _fields(model: type[Model]) -> list[Field[Any, Any]]:
    """The columns an INSERT of `model` names: every concrete field but an id the
    database makes (as bulk_create leaves it out)."""
    return [f for f in model._meta.concrete_fields if not (f.primary_key and f.db_returning)]


def columns(model: type[Model], alias: str = "") -> str:
    """Every concrete column of `model`, in field order, of the table named `alias`
    (unnamed: as a RETURNING clause lists them, which SQLite will not have qualified)."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(f'{prefix}"{f.column}"' for f in model._meta.concrete_fields)


def read(model: type[Model], values: Sequence[Any], fields: Sequence[Any] = ()) -> Any:
    """An instance of `model` from its columns' values (`columns`' order, or that of
    `fields`, the others then deferred: read if ever asked for) as the cursor gave them
    (None: no row was joined), converted as the ORM converts them (a JSON field's text)."""
    names, pk_at, converting = _reading(model, tuple(fields or model._meta.concrete_fields))
    assert len(values) == len(names), "a value for each column"
    if values[pk_at] is None:
        return None
    converted = list(values)
    for at, field, converters in converting:  # most columns need none: left as they came
        converted[at] = reduce(
            lambda value, convert: convert(value, field, connection), converters, values[at]
        )
    return model.from_db(DEFAULT_DB_ALIAS, names, converted)


@functools.lru_cache(maxsize=32)  # one entry a (model, columns) read here
def _reading(
    model: type[Model], fields: tuple[Any, ...]
) -> tuple[list[str], int, list[tuple[int, Any, list[Callable[..., Any]]]]]:
    """What `read` works out once per model and columns (issue 25: it read every seat,
    game and email of a phase told): the attribute names, where the id is, and the
    columns that have converters, with them."""
    converting = [(at, f, _converters(f)) for at, f in enumerate(fields) if _converters(f)]
    return [f.attname for f in fields], fields.index(model._meta.pk), converting


def _converters(field: Any) -> list[Callable[..., Any]]:
    """The field's converters from the database's values, as the ORM applies them (the
    backend's, then the field's own): worked out once per field, as they depend only on
    the backend."""
    found = _CONVERTERS.get(field)
    if found is None:
        column = field.get_col(field.model._meta.db_table)
        found = [*connection.ops.get_db_converters(column), *field.get_db_converters(connection)]
        _CONVERTERS[field] = found
    return found


_CONVERTERS: dict[Any, list[Callable[..., Any]]] = {}
