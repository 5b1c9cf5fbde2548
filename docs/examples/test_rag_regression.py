"""Fail the build only when the RAG pipeline got *significantly* worse than the baseline.

Copy this file into your tests (for example ``tests/test_rag_regression.py``).  Before pytest
runs, produce the candidate run of this commit with your golden set, for example::

    ragaudit run --corpus corpus --golden golden.yaml --k 3 --name candidate --out results

and keep the baseline in the repository (``ragaudit baseline update RUN --to ci/baseline.json``).
Paths are relative to the directory pytest runs from.
"""

from ragaudit.testing import assert_not_worse

BASELINE = "ci/baseline.json"
CANDIDATE = "results/candidate.json"


def test_not_worse_than_the_committed_baseline():
    # Paired tests question by question; a drop without evidence passes, a significant one
    # fails with the comparison table and the ids of the questions that got worse.
    assert_not_worse(BASELINE, CANDIDATE, metrics=["correct", "recall@k"], alpha=0.05)
