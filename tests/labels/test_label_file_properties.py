"""Property tests of the chunk-label reader: any bytes, any YAML value under a valid header,
either load or raise ragaudit's one-line FormatError (never another exception)."""

from __future__ import annotations

import json

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragaudit.exceptions import FormatError
from ragaudit.labels.format import load_chunk_labels

SETTINGS = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([float("inf"), float("nan"), 1e300, -1, 2**63, "8", True])
    | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)
FIELD = st.sampled_from(
    [
        "question",
        "doc_sources",
        "n_candidate_chunks",
        "answer_chunks",
        "supporting_chunks",
        "labeller",
        "complete",
        "graded",
    ]
)
ENTRY = st.dictionaries(FIELD, VALUE, max_size=5) | VALUE
CHUNKING = (
    st.fixed_dictionaries(
        {
            "chunker": VALUE | st.just("fixed"),
            "chunk_size": VALUE | st.integers(0, 900),
            "chunk_overlap": VALUE | st.integers(0, 100),
        },
        optional={"corpus_sha256": VALUE},
    )
    | VALUE
)
DOCUMENT = st.fixed_dictionaries(
    {"format": st.just("ragaudit.chunk_labels"), "version": st.just(1) | VALUE},
    optional={
        "chunking": CHUNKING,
        "labeller": VALUE,
        "questions": st.dictionaries(st.text(max_size=4), ENTRY, max_size=3) | VALUE,
    },
)


def _loads_or_format_error(path):
    try:
        load_chunk_labels(path)
    except FormatError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path))
        assert len(str(exc)) < 600 + len(str(path))


@SETTINGS
@given(document=DOCUMENT)
def test_any_value_under_a_valid_header(tmp_path, document):
    path = tmp_path / "labels.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    _loads_or_format_error(path)
    path.write_text(json.dumps(document, allow_nan=True), encoding="utf-8")  # YAML reads JSON
    _loads_or_format_error(path)


@SETTINGS
@given(data=st.binary(max_size=300))
def test_any_bytes(tmp_path, data):
    path = tmp_path / "labels.yaml"
    path.write_bytes(b"format: ragaudit.chunk_labels\nversion: 1\n" + data)
    _loads_or_format_error(path)
    path.write_bytes(data)
    _loads_or_format_error(path)
