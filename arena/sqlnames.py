"""Hand-written SQL from the models' own names: tables (``Model._meta.db_table``) and columns
(``field.column``), quoted for the default database, and model instances built from such a
statement's rows the way the ORM builds them.

Invariant: no hand-written statement names a table or a column literally, so a renamed field, a
custom user model or a changed ``db_table`` changes the SQL with it; an instance built here has
the selected columns converted as the ORM converts them and every other field deferred (read on
access), never a default standing in for a value. Imports Django only.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.db import connection
from django.db.models import Field, Model

M = TypeVar("M", bound=Model)


def one_statement() -> bool:
    """True where a worker's per-match writes take one hand-written statement each: on
    PostgreSQL, where each round trip saved is a wait for a busy database process
    (``docs/performance.md``). SQLite runs in-process, with no round trip to save."""
    return connection.vendor == "postgresql"


def run_statement(sql: str, params: dict[str, Any]) -> list[tuple]:
    """Run one of the hand-written per-match statements and return its rows. On PostgreSQL its
    parameters are bound by the server and it is prepared on its first run on a connection, so
    the database plans it once per connection instead of on every match (errors are Django's,
    and it is logged like any query when queries are). Elsewhere, through Django's cursor."""
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall() if cursor.description else []
    import psycopg

    connection.ensure_connection()
    started = time.monotonic()
    with connection.wrap_database_errors:
        raw = connection.connection
        raw.prepare_threshold = 0  # prepares only server-bound cursors: Django's bind client-side
        with psycopg.Cursor(raw) as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall() if cursor.description else []
    if connection.queries_logged:
        connection.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})
    return rows


def table(model: type[Model]) -> str:
    """The model's table, quoted."""
    return connection.ops.quote_name(model._meta.db_table)


def column(model: type[Model], name: str) -> str:
    """The column of field ``name`` (``"pk"`` for the primary key), quoted."""
    field = model._meta.pk if name == "pk" else model._meta.get_field(name)
    return connection.ops.quote_name(field.column)


def fields(model: type[Model], *, leave_out: Sequence[str] = ()) -> list[Field]:
    """The model's concrete fields in their order, without those named in ``leave_out``."""
    return [f for f in model._meta.concrete_fields if f.name not in leave_out]


def selected(alias: str, chosen: Sequence[Field]) -> str:
    """``alias."col", ...`` for these fields, in order."""
    quote = connection.ops.quote_name
    return ", ".join(f"{alias}.{quote(f.column)}" for f in chosen)


def loaded(model: type[M], chosen: Sequence[Field], values: Sequence[Any]) -> M:
    """An instance of ``model`` from ``values`` of the ``chosen`` fields (in ``fields`` order), each
    converted as the ORM converts a column it reads (JSON parsed, and so on); the model's other
    fields are deferred."""
    converted = []
    for field, value in zip(chosen, values, strict=True):
        col, converters = _converters(model, field)
        for convert in converters:
            value = convert(value, col, connection)
        converted.append(value)
    return model.from_db(connection.alias, [f.attname for f in chosen], converted)


@functools.cache
def _converters(model: type[Model], field: Field) -> tuple[Any, tuple[Callable, ...]]:
    """The column expression of ``field`` and the converters the ORM applies to what it reads
    from it (the same for every row: worked out once)."""
    col = field.get_col(model._meta.db_table)
    return col, tuple(connection.ops.get_db_converters(col) + col.get_db_converters(connection))
