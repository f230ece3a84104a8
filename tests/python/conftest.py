"""Shared fixtures of the arcadego pytest suites.

The ``arcadego_db`` fixture comes from the package's own pytest plugin
(entry point pytest11); ``pytester`` is used to test that plugin.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import arcadego

pytest_plugins = ["pytester"]


@pytest.fixture
def mem_db() -> Iterator[arcadego.Database]:
    """An in-memory database with auto_create on."""
    db = arcadego.connect(None, auto_create=True)
    try:
        yield db
    finally:
        db.close()


@pytest.fixture
def schema_db(arcadego_db: arcadego.Database) -> arcadego.Database:
    """An on-disk database with type A (k INT64, x DOUBLE, s STRING, b BOOLEAN)."""
    with arcadego_db.transaction() as tx:
        tx.create_type("A")
        tx.create_property("A", "k", "INT64")
        tx.create_property("A", "x", "DOUBLE")
        tx.create_property("A", "s", "STRING")
        tx.create_property("A", "b", "BOOLEAN")
        tx.create_index("A", ["k"])
    return arcadego_db


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when anything was skipped: a skip is not a pass (a
    dependency missing from the venv would otherwise skip whole modules)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped and session.exitstatus == 0:
        print(f"\n{len(skipped)} skipped tests are not allowed: every suite of make test must run")
        session.exitstatus = 1
