"""pytest plugin (registered through the ``pytest11`` entry point).

Fixtures:

* ``arcadego_db``: a fresh on-disk database in ``tmp_path``, closed after
  the test. Marked ``@pytest.mark.arcadego_template(tpl)`` (``tpl`` from
  ``arcadego.testing.template``), it starts as a clone of the template: the
  whole schema in about a millisecond.

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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "arcadego_template(template): arcadego_db starts as a clone of an arcadego.testing.template")


@pytest.fixture
def arcadego_db(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[arcadego.Database]:
    """A fresh on-disk arcadego database in ``tmp_path``, closed afterwards;
    a clone of the template of the test's ``arcadego_template`` marker."""
    import arcadego  # here: a pytest run that never uses the fixture never loads the library

    path = tmp_path / "arcadego.db"
    marker = request.node.get_closest_marker("arcadego_template")
    if marker is not None:
        if not marker.args or not callable(marker.args[0]):
            raise TypeError("@pytest.mark.arcadego_template takes a template from arcadego.testing.template()")
        db = marker.args[0](path)
    else:
        db = arcadego.connect(path)
    try:
        yield db
    finally:
        db.close()
