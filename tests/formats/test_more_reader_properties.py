"""Property tests for the readers that ``test_reader_properties`` does not cover.

The saved-run loader, per-question metric files (``compare``), human verdicts
(``calibrate``), golden sets in every file format, price tables and corpus documents: any
bytes, and any JSON value (also in a saved run's shape), either read or raise ragaudit's one-line
:class:`~ragaudit.exceptions.FormatError` (or the :class:`~ragaudit.exceptions.InputError` of a
well-formed file with a semantic problem), never another exception.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragaudit.data.golden import load_golden
from ragaudit.data.human_grades import read_human_grades
from ragaudit.data.per_question_files import read_per_question_metrics
from ragaudit.data.records import load_saved_run
from ragaudit.exceptions import FormatError, InputError
from ragaudit.llm.prices import PriceTable
from ragaudit.pipeline.corpus import load_corpus

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

ODD = st.sampled_from(
    [float("inf"), float("nan"), 1e308, -1, 0, 2**63, 10**30, "", "x", True, None, "\ufeff"]
)
VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6)
    | ODD,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["id", "qid", "correct", "metrics", "retrieved", "k", "a", "question"]),
            children,
            max_size=3,
        )
    ),
    max_leaves=10,
)
HIT = st.fixed_dictionaries(
    {"chunk_id": st.text(max_size=3) | VALUE, "doc_id": st.text(max_size=3) | VALUE},
    optional={"rank": VALUE, "score": VALUE},
)
ROW = st.fixed_dictionaries(
    {"id": st.sampled_from(["q1", "q2"]) | VALUE, "retrieved": st.lists(HIT, max_size=2) | VALUE},
    optional={
        "answerable": VALUE,
        "metrics": st.dictionaries(
            st.sampled_from(["recall@k", "correct", "ndcg@10", "rouge"]), VALUE, max_size=3
        )
        | VALUE,
        "judges": st.dictionaries(
            st.sampled_from(["abstained", "correct", "judge_errors", "answer_relevance"]),
            VALUE,
            max_size=3,
        )
        | VALUE,
        "generation_error": VALUE,
        "error": VALUE,
        "context_ids": VALUE,
        "gold_docs": VALUE,
    },
)
SAVED_RUN = st.fixed_dictionaries(
    {
        "format": st.just("ragaudit.run") | VALUE,
        "format_version": st.just(1) | VALUE,
        "name": st.just("r") | VALUE,
        "config": st.fixed_dictionaries({"k": st.integers(-1, 3) | VALUE}) | VALUE,
        "rows": st.lists(ROW, max_size=3) | VALUE,
    },
    optional={"summary": VALUE},
)


def _reads_or_fails_cleanly(read, path):
    try:
        read(path)
    except FormatError as exc:
        assert "\n" not in str(exc), str(exc)
        assert str(exc).startswith(str(path)), str(exc)
        assert len(str(exc)) < 500 + len(str(path)), str(exc)
    except InputError as exc:  # a well-formed file with a semantic problem
        assert "\n" not in str(exc), str(exc)


@SETTINGS
@given(document=SAVED_RUN | VALUE)
def test_saved_run_loader_takes_any_json_value(tmp_path, document):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document, allow_nan=True), encoding="utf-8")
    _reads_or_fails_cleanly(load_saved_run, path)
    _reads_or_fails_cleanly(read_per_question_metrics, path)  # compare's reader


@SETTINGS
@given(data=st.binary(max_size=200))
def test_saved_run_loader_takes_any_bytes(tmp_path, data):
    path = tmp_path / "run.json"
    path.write_bytes(data)
    _reads_or_fails_cleanly(load_saved_run, path)
    _reads_or_fails_cleanly(read_per_question_metrics, path)


@SETTINGS
@given(rows=st.lists(VALUE, max_size=4), data=st.binary(max_size=120))
def test_per_question_jsonl_and_human_verdicts_take_any_lines(tmp_path, rows, data):
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r, allow_nan=True) for r in rows), encoding="utf-8")
    _reads_or_fails_cleanly(read_per_question_metrics, path)
    _reads_or_fails_cleanly(read_human_grades, path)
    path.write_bytes(data)
    _reads_or_fails_cleanly(read_per_question_metrics, path)
    _reads_or_fails_cleanly(read_human_grades, path)
    for name in ("human.yaml", "human.json"):
        other = tmp_path / name
        other.write_text(json.dumps(rows[0] if rows else None, allow_nan=True), encoding="utf-8")
        _reads_or_fails_cleanly(read_human_grades, other)


GOLDEN_ROW = st.fixed_dictionaries(
    {"id": VALUE | st.just("q1"), "question": VALUE | st.just("Why?")},
    optional={"answer": VALUE, "sources": VALUE, "keywords": VALUE, "tags": VALUE},
)


@SETTINGS
@given(rows=st.lists(GOLDEN_ROW | VALUE, max_size=3), data=st.binary(max_size=150))
def test_golden_sets_in_every_format_take_any_value(tmp_path, rows, data):
    def load(path):
        return load_golden(path, require_sources=False)

    for name, text in (
        ("g.json", json.dumps(rows, allow_nan=True)),
        ("g.jsonl", "\n".join(json.dumps(r, allow_nan=True) for r in rows)),
        ("g.yaml", json.dumps({"questions": rows}, allow_nan=True)),
    ):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        _reads_or_fails_cleanly(load, path)
    for name in ("g.csv", "g.yaml", "g.jsonl"):
        path = tmp_path / name
        path.write_bytes(data)
        _reads_or_fails_cleanly(load, path)


@SETTINGS
@given(value=VALUE, data=st.binary(max_size=120))
def test_price_tables_take_any_value(tmp_path, value, data):
    path = tmp_path / "prices.yaml"
    path.write_text(json.dumps(value, allow_nan=True), encoding="utf-8")
    _reads_or_fails_cleanly(PriceTable.load, path)
    path.write_bytes(data)
    _reads_or_fails_cleanly(PriceTable.load, path)


@SETTINGS
@given(data=st.binary(max_size=200))
def test_corpus_documents_take_any_bytes(tmp_path, data):
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    (corpus / "doc.md").write_bytes(data)
    try:
        load_corpus(corpus)
    except FormatError as exc:
        assert "\n" not in str(exc) and "doc.md" in str(exc), str(exc)
    except InputError as exc:  # an empty corpus
        assert "\n" not in str(exc), str(exc)
