import json
import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from ragaudit.exceptions import FormatError, InputError, RagauditWarning
from ragaudit.labels.format import read_label_file as read_labels  # stats reads no files
from ragaudit.stats import cohen_kappa, label_agreement

DATA = __import__("pathlib").Path(__file__).parent.parent / "data" / "stats"


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_matches_sklearn(seed, weights):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, 80)
    b = np.where(rng.random(80) < 0.6, a, rng.integers(0, 4, 80))
    labels = list(range(min(a.min(), b.min()), max(a.max(), b.max()) + 1))
    expected = cohen_kappa_score(a, b, weights=weights, labels=labels)
    assert cohen_kappa(a, b, weights=weights) == pytest.approx(expected, abs=1e-12)


def test_weighted_kappa_uses_grade_values_when_a_grade_is_unused():
    # Nobody used grade 1: 0 vs 2 is still two steps apart (sklearn with labels=[0, 1, 2]).
    a, b = [0, 0, 2, 2, 2], [0, 2, 2, 0, 2]
    expected = cohen_kappa_score(a, b, weights="quadratic", labels=[0, 1, 2])
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(expected)


def test_kappa_by_hand():
    # p_o = 0.8, p_e = 0.6*0.6 + 0.4*0.4 = 0.52 -> (0.8 - 0.52) / 0.48
    a = [1, 1, 1, 0, 0, 1, 1, 0, 0, 1]
    b = [1, 1, 1, 0, 0, 1, 0, 1, 0, 1]
    assert cohen_kappa(a, b) == pytest.approx((0.8 - 0.52) / 0.48)


def test_single_class_labeller_warns_and_gives_zero():
    with pytest.warns(RagauditWarning, match=r"labeller A used a single grade \(1\)"):
        assert cohen_kappa([1, 1, 1, 1], [1, 0, 1, 1]) == 0.0
    with pytest.warns(RagauditWarning, match="single grade"):
        assert cohen_kappa([2, 2, 2], [2, 2, 2], weights="quadratic") == 0.0


def test_kappa_bad_input():
    with pytest.raises(InputError, match="weights: expected None, 'linear' or 'quadratic'"):
        cohen_kappa([1], [1], weights="cubic")
    with pytest.raises(InputError, match="labels_a: expected integer grades"):
        cohen_kappa([0.5, 1], [1, 1])
    with pytest.raises(InputError, match="expected at least one item labelled by both"):
        cohen_kappa([], [])


def test_label_agreement_on_fixture_files():
    qrels_a, implicit_a = read_labels(DATA / "labels_a.qrels")
    qrels_b, implicit_b = read_labels(DATA / "labels_b.jsonl")
    assert not implicit_a and not implicit_b
    result = label_agreement(qrels_a, qrels_b)
    assert (result.n_items, result.n_questions, result.only_a, result.only_b) == (30, 10, 1, 0)
    grades_a = [qrels_a[q][i] for q in sorted(qrels_b) for i in sorted(qrels_b[q])]
    grades_b = [qrels_b[q][i] for q in sorted(qrels_b) for i in sorted(qrels_b[q])]
    assert result.kappa == pytest.approx(cohen_kappa_score(grades_a, grades_b))
    assert result.weighted_kappa == pytest.approx(
        cohen_kappa_score(grades_a, grades_b, weights="quadratic")
    )
    assert result.raw_agreement == pytest.approx(np.mean(np.equal(grades_a, grades_b)))
    assert sum(map(sum, result.confusion)) == 30
    binary = label_agreement(qrels_a, qrels_b, threshold=1)
    assert binary.categories == (0, 1)
    assert binary.kappa == pytest.approx(
        cohen_kappa_score(np.array(grades_a) >= 1, np.array(grades_b) >= 1)
    )


def test_yaml_json_and_implicit_zero(tmp_path):
    (tmp_path / "a.yaml").write_text("q1: {c1: 2, c2: 0}\nq2: {c3: 1}\n")
    (tmp_path / "b.json").write_text(json.dumps({"labels": {"q1": {"c1": 2, "c2": 1}}}))
    qrels_a, _ = read_labels(tmp_path / "a.yaml")
    qrels_b, _ = read_labels(tmp_path / "b.json")
    result = label_agreement(qrels_a, qrels_b)
    assert (result.n_items, result.raw_agreement, result.only_a) == (2, 0.5, 1)
    # Chunk-label semantics: absent = grade 0 within a question both labelled.
    implicit = label_agreement({"q1": {"c1": 2}}, {"q1": {"c1": 2, "c2": 1}}, implicit_zero=True)
    assert implicit.n_items == 2 and implicit.confusion == ((0, 1, 0), (0, 0, 0), (0, 0, 1))


def test_chunk_label_files_are_read_with_implicit_zeros(tmp_path):
    format_module = pytest.importorskip("ragaudit.labels.format")
    labels = format_module.ChunkLabels(
        format_module.Chunking("fixed", 800, 100),
        "heuristic",
        {"q1": format_module.QuestionLabels("Q?", ["D"], 3, ["c2"], ["c1"], "heuristic")},
    )
    format_module.save_chunk_labels(labels, tmp_path / "labels.yaml")
    qrels, implicit = read_labels(tmp_path / "labels.yaml")
    assert implicit and qrels.to_dict() == {"q1": {"c1": 1, "c2": 2}}


def test_label_files_errors(tmp_path):
    (tmp_path / "bad.qrels").write_text("q1 0 d1 2\nq1 0 d2\n")
    with pytest.raises(
        FormatError, match=r"bad.qrels:2: expected 4 whitespace-separated fields .*, found 3"
    ):
        read_labels(tmp_path / "bad.qrels")
    (tmp_path / "bad2.qrels").write_text("q1 0 d1 high\n")
    with pytest.raises(
        FormatError, match=r"bad2.qrels:1: grade: expected an integer, found 'high'"
    ):
        read_labels(tmp_path / "bad2.qrels")
    (tmp_path / "bad.jsonl").write_text('{"qid": "q1", "item": "d"}\n')
    with pytest.raises(FormatError, match=r"bad.jsonl:1: grade: expected a key 'grade' \(or "):
        read_labels(tmp_path / "bad.jsonl")
    with pytest.raises(
        FormatError, match=r"missing.qrels: expected an existing file, found nothing at this path"
    ):
        read_labels(tmp_path / "missing.qrels")
    with pytest.raises(InputError, match="no \\(question, item\\) pair in common"):
        label_agreement({"q1": {"a": 1}}, {"q2": {"a": 1}})


def test_no_warning_for_normal_labels():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cohen_kappa([0, 1, 2], [0, 1, 1])
