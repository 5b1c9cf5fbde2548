"""Lining a run up with its labels: which questions are evaluated, and the warnings that name
the questions and ids that do not line up (run questions without labels, labelled questions
missing from the run, and a run whose ids share nothing with the labels' ids)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragaudit._text import shown_id
from ragaudit.data.formats.strings import IntArray
from ragaudit.data.qrels import Qrels
from ragaudit.data.runs import Run
from ragaudit.exceptions import InputError, RagauditWarning

__all__ = ["line_up", "name_ids", "warn_if_no_overlap"]

_SHOW_IDS = 5


def name_ids(ids: Sequence[str]) -> str:
    """The first few ids (an invisible character shown escaped) and how many more.

    >>> name_ids(["q1", "q2"]), name_ids([f"q{i}" for i in range(7)])
    ('q1, q2', 'q0, q1, q2, q3, q4, ... (2 more)')
    """
    shown = ", ".join(map(shown_id, ids[:_SHOW_IDS]))  # an invisible character shown escaped
    return shown + (f", ... ({len(ids) - _SHOW_IDS} more)" if len(ids) > _SHOW_IDS else "")


def line_up(qrels: Qrels, run_ids: Sequence[str], missing: str) -> tuple[list[str], IntArray]:
    """Questions to evaluate and each run question's row among them (-1: not evaluated).

    Warns about run questions without labels and labelled questions missing from the run.
    """
    labelled = set(qrels)
    in_run = set(run_ids)
    if not labelled & in_run:
        raise InputError(
            f"the run and the labels share no question id (run: {name_ids(sorted(in_run))}; "
            f"labels: {name_ids(sorted(labelled))}); check that they describe the same "
            "questions"
        )
    unlabelled = [qid for qid in run_ids if qid not in labelled]
    if unlabelled:
        warnings.warn(
            f"{len(unlabelled)} run question(s) have no labels and are ignored (as trec_eval "
            f"does): {name_ids(unlabelled)}",
            RagauditWarning,
            stacklevel=3,
        )
    absent = [qid for qid in qrels if qid not in in_run]
    if missing == "skip":
        eval_ids = [qid for qid in qrels if qid in in_run]
    else:
        eval_ids = list(qrels)
        if absent:
            warnings.warn(
                f"{len(absent)} labelled question(s) are missing from the run and score 0: "
                f"{name_ids(absent)}; pass missing='skip' (--missing skip) to drop them "
                "as trec_eval does without -c",
                RagauditWarning,
                stacklevel=3,
            )
    eval_index = {qid: i for i, qid in enumerate(eval_ids)}
    eval_row_of_run_q = np.array([eval_index.get(qid, -1) for qid in run_ids], dtype=np.int64)
    return eval_ids, eval_row_of_run_q


_SAMPLE = 1000


def _extends(longer: Sequence[str], shorter: set[str]) -> tuple[str, str] | None:
    """A pair ``(a, b)`` with ``a`` in ``longer`` starting with ``b`` in ``shorter``."""
    for a in longer:
        for end in range(len(a) - 1, 0, -1):
            if a[:end] in shorter:
                return a, a[:end]
    return None


def warn_if_no_overlap(
    qrels: Qrels, run: Run, cols: Any, label_items: Any, label_hash: Any
) -> None:
    """Warn when no retrieved item is labelled at all and the ids show a unit mix-up: every
    score is 0 because the run and the labels name different things (chunk ids ``doc#3``
    against document ids ``doc``), not because the retriever is bad.  Called only when
    nothing relevant was retrieved; the evidence is an id of one side that extends an id of
    the other (checked on the first :data:`_SAMPLE` ids of each)."""
    hashes = label_items.hashes() if label_hash is None else label_hash
    if cols.n_rows == 0 or np.isin(cols.item_hash, hashes).any():
        return  # some retrieved items are labelled (not relevant): a bad run, honestly scored
    ranked_ids = cols.items.decode(cols.row_order[:_SAMPLE])
    label_ids = label_items.decode(np.arange(min(len(label_items), _SAMPLE)))
    pair = _extends(ranked_ids, set(label_ids)) or _extends(label_ids, set(ranked_ids))
    if pair is None:
        return  # unrelated ids: nothing points at a unit mix-up
    ranked, labelled = pair if pair[0] in ranked_ids else pair[::-1]
    run_name = f" ({run.name})" if run.name else ""
    qrels_name = f" ({qrels.name})" if qrels.name else ""
    warnings.warn(
        f"no retrieved item is labelled: the run{run_name} ranks ids such as {ranked!r} and "
        f"the labels{qrels_name} name ids such as {labelled!r}, and not one is shared, so "
        "every score is 0; is one at chunk level and the other at document level? Lift "
        "chunk ids to documents (--chunk-map, Run.to_docs) or label chunks",
        RagauditWarning,
        stacklevel=3,
    )
