"""Fixtures of the saved-run tests."""

from __future__ import annotations

import pytest

from ragaudit.data.saved_run import fast


@pytest.fixture(params=["msgspec", "stdlib"])
def each_reader(request, monkeypatch):
    """Run the test once with the msgspec reader tried first (when msgspec is installed) and
    once with the standard-library reader only, so that both paths stay tested."""
    monkeypatch.setattr(fast, "ENABLED", request.param == "msgspec")
    return request.param
