"""pytest plugin (registered through the ``pytest11`` entry point).

Fixtures:

* ``arcadego_db``: a fresh on-disk database in ``tmp_path``, closed after
  the test.

Example::

    def test_insert(arcadego_db):
        arcadego_db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
        arcadego_db.insert("A", {"time": [1], "k": [7]})
        assert arcadego_db.scan("A").to_pylist()[0]["k"] == 7
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # pragma: no cover
    import arcadego


@pytest.fixture
def arcadego_db(tmp_path: Path) -> Iterator[arcadego.Database]:
    """A fresh on-disk arcadego database in ``tmp_path``, closed afterwards."""
    import arcadego  # here: a pytest run that never uses the fixture never loads the library

    db = arcadego.connect(tmp_path / "arcadego.db")
    try:
        yield db
    finally:
        db.close()
