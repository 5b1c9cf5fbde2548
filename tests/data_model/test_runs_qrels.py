import pytest

from ragaudit.data import Qrels, Run
from ragaudit.exceptions import InputError


def test_scores_sort_descending_with_trec_tie_break():
    # trec_eval breaks score ties by document id in descending string order.
    run = Run({"q": [("a", 1.0), ("c", 1.0), ("b", 2.0), ("d", 1.0)]})
    assert run["q"] == ["b", "d", "c", "a"]
    assert run.tied_groups == 1


def test_given_order_is_kept():
    run = Run({"q": [("a", 1.0), ("b", 2.0)]}, order="given")
    assert run["q"] == ["a", "b"]


def test_duplicate_is_an_error_naming_question_and_item():
    with pytest.raises(InputError, match=r"question 'q7': item 'x' appears more than once"):
        Run({"q7": ["x", "y", "x"]})
    assert Run({"q7": ["x", "y", "x"]}, duplicates="first")["q7"] == ["x", "y"]


def test_chunk_run_lifts_to_unique_documents_in_first_occurrence_order():
    run = Run({"q": ["c3", "c1", "c2", "c4"]}, unit="chunk")
    lifted = run.to_docs({"c1": "A", "c2": "B", "c3": "B", "c4": "A"})
    assert lifted["q"] == ["B", "A"]
    assert lifted.unit == "doc"
    with pytest.raises(InputError, match="not in the chunk->document map"):
        run.to_docs({"c1": "A"})


def test_qrels_reject_negative_and_fractional_grades():
    with pytest.raises(InputError, match="expected a grade >= 0, found -1"):
        Qrels({"q": {"a": -1}})
    with pytest.raises(InputError, match="expected an integer grade"):
        Qrels({"q": {"a": 1.5}})
    assert Qrels({"q": {"a": 2.0}})["q"]["a"] == 2
