"""Property tests: any bytes, any JSON value and any YAML text either read or raise FormatError.

Hypothesis feeds every reader arbitrary input; the only acceptable failure is ragaudit's own
:class:`~ragaudit.exceptions.FormatError` (one line naming the file), or the
:class:`~ragaudit.exceptions.InputError` a well-formed file with a repeated item raises.  The
TREC reader is also checked against a plain ``str.split`` + ``float()`` reading of the same
text, and its fast path against its exact slow path.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragaudit.data.formats.trec as trec
from ragaudit.data.formats import (
    read_chunk_map,
    read_jsonl_qrels,
    read_jsonl_run,
    read_labels,
    read_trec_qrels,
    read_trec_run,
)
from ragaudit.data.golden import parse_golden
from ragaudit.exceptions import FormatError, InputError

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# Bytes that look like TREC lines often enough to reach past the first check.
TOKEN = st.one_of(
    st.sampled_from(
        [b"q1", b"q2", b"Q0", b"d1", b"d2", b"1", b"0", b"2.5", b"-1", b"nan", b"1e400"]
    ),
    st.binary(min_size=1, max_size=6).filter(lambda b: not any(c in b for c in b" \t\n\r\x0b\x0c")),
)
SEP = st.sampled_from([b" ", b"\t", b"  ", b" \t"])
LINE = st.builds(
    lambda tokens, sep, end: sep.join(tokens) + end,
    st.lists(TOKEN, min_size=0, max_size=7),
    SEP,
    st.sampled_from([b"\n", b"\r\n", b"\r", b""]),
)
TREC_BYTES = st.one_of(st.binary(max_size=300), st.lists(LINE, max_size=12).map(b"".join))

JSON_VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "qid",
                    "docid",
                    "grade",
                    "score",
                    "id",
                    "ranking",
                    "doc_id",
                    "relevance",
                    "q1",
                    "a",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


def _reads_or_format_error(read, path):
    try:
        read(path)
    except FormatError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path))
    except InputError as exc:  # a well-formed file that repeats an item
        assert "appears more than once" in str(exc)


@SETTINGS
@given(data=TREC_BYTES)
def test_trec_readers_take_any_bytes(tmp_path, data):
    path = tmp_path / "any.txt"
    path.write_bytes(data)
    _reads_or_format_error(read_trec_run, path)
    _reads_or_format_error(read_trec_qrels, path)
    _reads_or_format_error(read_chunk_map, path)
    _reads_or_format_error(read_labels, path)


def _reference(data: bytes) -> dict[str, list[tuple[str, float]]] | None:
    """str.split + float() with trec_eval's ranking; None where the reader must refuse."""
    rows: dict[str, dict[str, float]] = {}
    for line in data.split(b"\n"):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 6:
            return None
        try:
            qid, item = fields[0].decode(), fields[2].decode()
            score = float(fields[4].decode())
        except (UnicodeDecodeError, ValueError):
            return None
        if not math.isfinite(score) or item in rows.get(qid, {}):
            return None
        rows.setdefault(qid, {})[item] = score
    key = lambda pair: (np.float32(pair[1]), pair[0].encode())  # noqa: E731
    return {q: sorted(r.items(), key=key, reverse=True) for q, r in rows.items()}


@SETTINGS
@given(lines=st.lists(LINE, max_size=12))
def test_trec_run_reads_like_split_and_float(tmp_path, lines):
    data = b"".join(lines).replace(b"\r", b"")  # \r alone ends a line for no reader here
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    expected = _reference(data)
    if expected is None or any(b"\x00" in line for line in lines):
        _reads_or_format_error(read_trec_run, path)
        return
    run = read_trec_run(path)
    assert {q: list(zip(run[q], run.scores(q) or [], strict=True)) for q in run} == expected


@SETTINGS
@given(lines=st.lists(LINE, max_size=12), block=st.sampled_from([16, 64, 1 << 20]))
def test_fast_path_equals_exact_scan(tmp_path, lines, block, monkeypatch):
    path = tmp_path / "run.txt"
    path.write_bytes(b"".join(lines))

    def outcome():
        try:
            cols = trec.read_run_columns(path, block_bytes=block, duplicates="first")
        except FormatError as exc:
            return str(exc)
        return cols.qids, cols.items.decode(cols.row_order), cols.scores.tolist()

    fast = outcome()
    with monkeypatch.context() as patch:
        patch.setattr(trec, "fast_columns", lambda *args, **kwargs: None)
        assert outcome() == fast


@SETTINGS
@given(value=JSON_VALUE)
def test_json_readers_take_any_json_value(tmp_path, value):
    text = json.dumps(value, allow_nan=True)
    for name in ("any.json", "any.jsonl"):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        _reads_or_format_error(read_jsonl_qrels, path)
        _reads_or_format_error(read_jsonl_run, path)
        _reads_or_format_error(read_labels, path)
    _reads_or_format_error(read_chunk_map, tmp_path / "any.json")


@SETTINGS
@given(value=JSON_VALUE, raw=st.text(max_size=200))
def test_yaml_readers_take_any_value_or_text(tmp_path, value, raw):
    import yaml

    for text in (yaml.safe_dump(value), raw):
        path = tmp_path / "labels.yaml"
        path.write_text(text, encoding="utf-8")
        _reads_or_format_error(read_labels, path)
        try:
            parse_golden(text, path="g.yaml")
        except FormatError as exc:
            assert "\n" not in str(exc) and str(exc).startswith("g.yaml")


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_deep_nesting_is_a_format_error(tmp_path, depth):
    path = tmp_path / "deep.json"
    path.write_text("[" * depth + "]" * depth)
    with pytest.raises(FormatError, match="nested too deeply"):
        read_jsonl_run(path)
