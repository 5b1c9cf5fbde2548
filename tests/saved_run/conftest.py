"""Fixtures of the saved-run tests."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ragaudit.data.saved_run import fast
from ragaudit.data.saved_run.retrieved import RetrievedList


@pytest.fixture(params=["msgspec", "stdlib"])
def each_reader(request, monkeypatch):
    """Run the test once with the msgspec reader tried first (when msgspec is installed) and
    once with the standard-library reader only, so that both paths stay tested."""
    monkeypatch.setattr(fast, "ENABLED", request.param == "msgspec")
    return request.param


def model_shape(run) -> list:
    """Everything that tells two models of a saved run apart: the run's JSON (``1``, ``1.0``
    and ``true`` differ there) and the type of every field and retrieved column."""
    out: list = [json.dumps(run.to_dict()), run.path, type(run.config).__name__]
    for q in run.questions:
        out.extend((f.name, type(getattr(q, f.name)).__name__) for f in dataclasses.fields(q))
        found = q.retrieved
        if isinstance(found, RetrievedList):
            out.append((type(found.chunk_ids), type(found._scores), repr(found._ranks)))
            out.extend(map(type, found._scores))
        out.extend(type(v) for v in q.metrics.values())
        out.extend(type(v) for v in q.judges.values())
    return out
