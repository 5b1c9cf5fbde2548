"""Fixtures of the saved-run tests."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ragaudit.data import records
from ragaudit.data.saved_run.load import read_json_run
from ragaudit.data.saved_run.parquet import read_parquet_run, write_parquet_run
from ragaudit.data.saved_run.retrieved import RetrievedList


def through_parquet(path):
    """The run of the JSON file ``path`` written as Parquet beside it and read back (None
    when the JSON reader doubts it: the file is then read whole, for the message)."""
    run = read_json_run(path)
    if run is None:
        return None
    target = f"{path}.parquet"
    write_parquet_run(target, run)
    return read_parquet_run(target).replace(path=str(path))


@pytest.fixture(params=["json", "parquet"])
def each_format(request, monkeypatch):
    """Run the test once reading saved runs from JSON and once from Parquet: every valid JSON
    run the test loads is converted to Parquet and read from there, so that both readers
    give the test the same model."""
    if request.param == "parquet":
        monkeypatch.setattr(records, "read_json_run", through_parquet)
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
