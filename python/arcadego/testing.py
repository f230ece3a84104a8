"""Test helpers: databases with a schema, fresh for every test.

``template(schema)`` builds a database once (on first use, in a temporary
directory that goes away when the process ends) and returns a factory that
clones it: a fresh on-disk database holding the whole schema costs a copy
of its log, about a millisecond, instead of running the DDL again.

Example (conftest.py)::

    import arcadego.testing

    SCHEMA = arcadego.testing.template('''
        CREATE DOCUMENT TYPE Sensor; CREATE PROPERTY Sensor.temperature DOUBLE;
        CREATE INDEX ON Sensor (temperature) NOTUNIQUE
    ''')

    @pytest.fixture
    def db(tmp_path):
        with SCHEMA(tmp_path / "db") as database:
            yield database

or, with the plugin's fixture, mark a test with
``@pytest.mark.arcadego_template(SCHEMA)`` and use ``arcadego_db``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from typing import TYPE_CHECKING, Any, Callable, Union

if TYPE_CHECKING:  # pragma: no cover
    from ._database import Database

PathLike = Union[str, "os.PathLike[str]"]


class Template:
    """A database built once by ``schema`` (a DDL script, or a callable
    given the open database), cloned by each call."""

    def __init__(self, schema: str | Callable[[Database], Any], **connect_args: Any) -> None:
        if not isinstance(schema, str) and not callable(schema):
            raise TypeError("template() takes a DDL script or a callable that builds the schema")
        self._schema = schema
        self._connect_args = connect_args
        self._db: Database | None = None
        self._dir: str | None = None
        self._lock = threading.Lock()

    def _built(self) -> Database:
        with self._lock:
            if self._db is None:
                from . import connect  # the library loads on first use only

                self._dir = tempfile.mkdtemp(prefix="arcadego-template-")
                db = connect(os.path.join(self._dir, "template"), **self._connect_args)
                try:
                    if isinstance(self._schema, str):
                        with db.transaction() as tx:
                            tx.execute(self._schema)
                    else:
                        self._schema(db)
                except BaseException:
                    db.close()
                    shutil.rmtree(self._dir, ignore_errors=True)
                    self._dir = None
                    raise
                self._db = db
                atexit.register(self.close)
            return self._db

    def __call__(self, path: PathLike, **connect_args: Any) -> Database:
        """A fresh database at ``path`` (which must not exist or be empty)
        holding the template's schema and data, open."""
        from . import connect

        self._built().clone(path)
        return connect(path, **{**self._connect_args, **connect_args})

    def close(self) -> None:
        """Close the template's database and delete its directory."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None


def template(schema: str | Callable[[Database], Any], **connect_args: Any) -> Template:
    """A factory of fresh databases holding the schema that ``schema`` (a
    DDL script run in one transaction, or a callable given the open
    database) builds, built once on first use. ``connect_args`` are passed
    to every ``connect`` (the template's and the clones')."""
    return Template(schema, **connect_args)


__all__ = ["Template", "template"]
