"""Sessions on nbgrader's SQLite gradebook (one transaction, ``BEGIN IMMEDIATE``), created at alembic's head
on first use, and the bulk SQL helpers recording uses."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from autograder.gradebook.coursedir import COURSE_ID

SQLITE_BUSY_TIMEOUT_S = 30.0


_initialised: set[str] = set()
_engines: dict = {}  # (url, write) -> Engine, kept for the process's life (its statement cache)
os.register_at_fork(after_in_child=_engines.clear)  # never share pooled SQLite connections across fork


def alembic_head() -> str:
    """nbgrader's current alembic revision, read in-process (``nbgrader.api.get_alembic_version`` shells
    out to the ``alembic`` command, which costs seconds per Gradebook on a fresh database)."""
    import nbgrader
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(nbgrader.__file__).parent / "alembic"))
    return ScriptDirectory.from_config(cfg).get_current_head()


def _init_db(gb_url: str) -> None:
    """What ``Gradebook(gb_url, COURSE_ID)`` does on a new database (tables, alembic version, course row),
    in one transaction, once per database file and process."""
    path = gb_url.removeprefix("sqlite:///")
    if gb_url in _initialised and os.path.exists(path):
        return
    from nbgrader.api import Base, Course
    from sqlalchemy import create_engine, inspect, text

    engine = create_engine(gb_url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})
    try:
        with engine.begin() as conn:
            fresh = len(inspect(conn).get_table_names()) == 0
            Base.metadata.create_all(bind=conn)
            if fresh:
                conn.execute(
                    text("CREATE TABLE IF NOT EXISTS alembic_version (version_num VARCHAR(32) NOT NULL)")
                )
                conn.execute(
                    text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": alembic_head()}
                )
            if (
                conn.execute(Course.__table__.select().where(Course.__table__.c.id == COURSE_ID)).first()
                is None
            ):
                conn.execute(Course.__table__.insert().values(id=COURSE_ID))
    finally:
        engine.dispose()
    _initialised.add(gb_url)


@contextmanager
def session(gb_url: str, write: bool = True) -> Iterator:
    """A SQLAlchemy session over the gradebook whose whole life is ONE SQLite transaction.

    ``write=True`` starts it with ``BEGIN IMMEDIATE``: the write lock is taken before the first read, so a
    formgrader save cannot slip in between our read of a manual comment and our write. Committed on normal
    exit, rolled back on an exception; a process killed inside it leaves the previous state (SQLite's
    journal is rolled back by the next connection)."""
    from sqlalchemy import create_engine, event
    from sqlalchemy.orm import Session

    _init_db(gb_url)
    engine = _engines.get((gb_url, write))
    if engine is None:  # one engine per database and mode: SQLAlchemy's statement cache lives in it
        engine = create_engine(gb_url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})

        @event.listens_for(engine, "connect")
        def _no_driver_transactions(dbapi_conn, _record):  # let us emit BEGIN ourselves
            dbapi_conn.isolation_level = None

        @event.listens_for(engine, "begin")
        def _begin(conn):
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        _engines[(gb_url, write)] = engine

    db = Session(engine, autoflush=True, expire_on_commit=False)
    try:
        yield db
        if write:
            _before_commit()
            db.commit()
        else:
            db.rollback()
    except BaseException:
        db.rollback()
        raise
    finally:
        db.close()


def _before_commit() -> None:
    """Test hook: called inside the transaction, just before COMMIT."""


_id_rng = random.Random(os.urandom(32))
os.register_at_fork(after_in_child=lambda: _id_rng.seed(os.urandom(32)))


def _new_id() -> str:
    """A random 128-bit row id in nbgrader's format (uuid4().hex's 32 hex digits). One os.urandom per
    process instead of one per row: under load each urandom call took ~0.7 ms, ~10 ms per student."""
    return f"{_id_rng.getrandbits(128):032x}"


def _tables():
    from nbgrader.api import Base

    return Base.metadata.tables


def _chunks(values: list, size: int = 500) -> Iterator[list]:
    """IN-lists of at most ``size`` values (SQLite caps the number of bound parameters)."""
    for i in range(0, len(values), size):
        yield values[i : i + size]


def _select_in(conn, columns: list, column, values, *where) -> list:
    """``SELECT columns WHERE column IN values AND where...``, chunked; [] for no values."""
    from sqlalchemy import select

    rows: list = []
    for part in _chunks(sorted(set(values))):
        rows += conn.execute(select(*columns).where(column.in_(part), *where)).mappings().all()
    return rows


def _insert_many(conn, table, rows: list[dict]) -> None:
    if rows:
        conn.execute(table.insert(), rows)


def _update_many(conn, table, columns: tuple[str, ...], rows: list[dict]) -> None:
    """``UPDATE table SET columns WHERE id = :row_id`` for every row, as one executemany."""
    from sqlalchemy import bindparam

    if rows:
        stmt = (
            table.update()
            .where(table.c.id == bindparam("row_id"))
            .values({c: bindparam(f"new_{c}") for c in columns})
        )
        conn.execute(stmt, [{"row_id": r["id"], **{f"new_{c}": r[c] for c in columns}} for r in rows])
