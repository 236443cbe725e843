"""The API tests' worker: one per test module, on the Original stand-in (a module may override it)."""

from __future__ import annotations

import pytest

from tests.api_support import started_worker


@pytest.fixture(scope="module")
def worker(bundles):
    worker = started_worker(bundles["original"])
    yield worker
    assert worker.shutdown()
