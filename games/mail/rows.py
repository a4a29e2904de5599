"""New rows of one model in one INSERT, as SQL (issue 25).

What `QuerySet.bulk_create` does for the rows a phase's emails make (the emails, their
reply tokens, their magic links), without the ORM's building of the statement, which
cost the notify task more CPU than the INSERT itself. Each value goes through its
field as bulk_create sends it (`pre_save`: a default made now, `auto_now_add`; then
`get_db_prep_save`: a JSON field's adapter, a datetime's zone), and each row gets its
id back (RETURNING). Like bulk_create: no signal is sent, no `save()` is called.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from django.db import connection
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
