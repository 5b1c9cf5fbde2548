"""``evaluate_stream``: score a TREC run larger than memory, a batch of whole questions at a time.

The run is read in chunks of about ``batch_bytes`` of text (:func:`ragaudit.data.formats.
iter_run_chunks`).  The rows of a chunk's last question may continue in the next chunk, so
they are carried over; every other question in the chunk is complete and is ranked, joined
with its labels and scored at once, by the pieces :func:`~ragaudit.metrics.evaluate` uses.
The labels are held in memory as columns (:mod:`ragaudit.metrics._stream_labels`); each
batch's questions are found among them by hashed id, and their scores written into one array
per metric over the labelled questions.  No Python object is made per question of the run, so
peak memory is the labels plus one batch, whatever the size of the run.  The run must list
each question's lines together (as every ranker writes them); a question met again after
another one is an error.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from ragaudit.data.formats import iter_run_chunks
from ragaudit.data.formats.chunked import TextColumns
from ragaudit.data.formats.columns import finish_run_columns, items_view
from ragaudit.data.formats.strings import IntArray, Strings, U64Array
from ragaudit.data.formats.trec import check_policies
from ragaudit.data.qrels import Qrels
from ragaudit.exceptions import InputError, RagauditWarning, UndefinedMetricWarning
from ragaudit.metrics._join import grade_matrix, ideal_grades, judged_grade_matrix
from ragaudit.metrics._stream_labels import Ids, LabelColumns, UnlabelledIds, padded_strings
from ragaudit.metrics.evaluate import (
    Evaluation,
    _metric_specs,
    _score,
    needs_judged,
    scored_depth,
)
from ragaudit.metrics.registry import MetricSpec

__all__ = ["evaluate_stream"]

_BATCH_BYTES = 1 << 24  # 16 MiB: as fast as 32 MiB here, a third less peak memory
_SHOW_IDS = 5


@dataclass(frozen=True)
class _Batch:
    """Rows of whole lines: question ``keys[i]`` (an index into ``names``, whose label codes
    are ``codes``, -1 unlabelled) ranks item ``items[i]`` with score ``values[i]``."""

    names: Strings
    hashes: U64Array
    codes: IntArray
    keys: IntArray
    items: Strings
    values: npt.NDArray[np.float64]


def _again(name: str, qid: str) -> InputError:
    return InputError(
        f"{name}: question {qid!r} appears in two separate places; streaming needs each "
        "question's lines together (sort the run by question, or evaluate it without streaming)"
    )


def _batch(chunk: TextColumns, carry: _Batch | None, labels: LabelColumns, name: str) -> _Batch:
    """The rows of ``carry`` (one question's) followed by those of ``chunk``."""
    names = padded_strings(chunk.names)
    hashes = names.hashes()
    codes = labels.codes(names, hashes)
    keys = chunk.keys
    if carry is None:
        return _Batch(names, hashes, codes, keys, Strings.concat([chunk.items]), chunk.values)
    zeros = np.zeros(len(carry.keys), dtype=keys.dtype)
    head = np.zeros(1, dtype=np.int64)
    same = np.flatnonzero(hashes == carry.hashes[0])
    same = same[names.equal(same, carry.names, head.repeat(len(same)))]
    if len(same) and same[0] == 0:  # the chunk goes on with the carried question
        keys = np.concatenate((zeros, keys))
    elif len(same):
        raise _again(name, names.get(int(same[0])))
    else:
        names = Strings.concat([carry.names, names])
        hashes = np.concatenate((carry.hashes, hashes))
        codes = np.concatenate((carry.codes, codes))
        keys = np.concatenate((zeros, keys + 1))
    items = Strings.concat([carry.items, chunk.items])
    return _Batch(names, hashes, codes, keys, items, np.concatenate((carry.values, chunk.values)))


def _split(batch: _Batch, name: str) -> tuple[_Batch | None, _Batch]:
    """The batch's complete questions (None: there are none) and its last question."""
    keys = batch.keys
    down = np.flatnonzero(keys[1:] < keys[:-1])
    if len(down):
        raise _again(name, batch.names.get(int(keys[down[0] + 1])))
    last = int(keys[-1])
    cut = int(np.searchsorted(keys, last))
    tail_rows = np.arange(cut, len(keys))
    tail = _Batch(
        items_view(batch.names, np.array([last])),
        batch.hashes[last : last + 1],
        batch.codes[last : last + 1],
        np.zeros(len(keys) - cut, dtype=keys.dtype),
        items_view(batch.items, tail_rows),
        batch.values[cut:].copy(),
    )
    if last == 0:
        return None, tail
    names = Strings(batch.names.data, batch.names.offsets[: last + 1])
    items = Strings(batch.items.data, batch.items.offsets[: cut + 1])
    head = _Batch(
        names, batch.hashes[:last], batch.codes[:last], keys[:cut], items, batch.values[:cut]
    )
    return head, tail


class _Scores:
    """Per-question scores of the labelled questions, filled batch by batch."""

    def __init__(
        self,
        labels: LabelColumns,
        specs: dict[str, MetricSpec],
        threshold: int,
        order: str,
        duplicates: str,
        name: str,
    ) -> None:
        self.labels, self.specs, self.threshold = labels, specs, threshold
        self.order, self.duplicates, self.name = order, duplicates, name
        self.per_query = {n: np.zeros(len(labels), dtype=np.float64) for n in specs}
        self.seen = np.zeros(len(labels), dtype=bool)
        self.n_relevant = labels.relevant_counts(threshold)
        self.unlabelled = UnlabelledIds()
        self.tied = [0, 0]

    def add(self, batch: _Batch) -> None:
        """Score the batch's questions (each whole, none met before)."""
        codes = batch.codes
        labelled = codes >= 0
        mine = codes[labelled]
        again = np.flatnonzero(self.seen[mine])
        if len(again):
            raise _again(self.name, self.labels.qids[int(mine[again[0]])])
        first = self.unlabelled.add(batch.names, np.flatnonzero(~labelled))
        if first >= 0:
            raise _again(self.name, batch.names.get(first))
        # finish_run_columns reads the ids only to name a question in an error.
        qids = cast(tuple[str, ...], Ids(batch.names))
        cols = finish_run_columns(
            qids,
            batch.keys,
            batch.items,
            batch.values,
            order=self.order,
            duplicates=self.duplicates,
            name=self.name,
        )
        self.tied[0] += cols.tied_groups
        self.tied[1] += cols.float32_tied_groups
        if not len(mine):
            return
        self.seen[mine] = True
        n_eval = len(mine)
        eval_row = np.full(len(codes), -1, dtype=np.int64)
        eval_row[labelled] = np.arange(n_eval)
        lengths = np.diff(cols.offsets)[labelled]
        depth = scored_depth(self.specs, int(lengths.max(initial=0)))
        labels = self.labels.rows_of(mine)
        join = (cols, eval_row, labels.row, labels.items, labels.grades, None, n_eval, depth)
        judged = n_nonrelevant = None
        if needs_judged(self.specs):
            grades, judged = judged_grade_matrix(*join)
            n_nonrelevant = np.bincount(
                labels.row[labels.grades < self.threshold], minlength=n_eval
            ).astype(np.int64)
        else:
            grades = grade_matrix(*join)
        ideal = ideal_grades(labels.row, labels.grades, n_eval)
        del cols, labels
        per_query, _ = _score(
            self.specs, grades, self.n_relevant[mine], ideal, self.threshold, False,
            judged, lengths.astype(np.int64), n_nonrelevant,
        )  # fmt: skip
        for metric, values in per_query.items():
            self.per_query[metric][mine] = values


def evaluate_stream(
    qrels: Qrels,
    run_path: str | os.PathLike[str],
    metrics: Sequence[str],
    *,
    relevance_threshold: int = 1,
    missing: str = "zero",
    order: str = "score",
    duplicates: str = "error",
    batch_bytes: int = _BATCH_BYTES,
) -> Evaluation:
    """Score a TREC run file batch by batch; the same numbers as :func:`evaluate` (macro).

    Parameters
    ----------
    qrels : Qrels
        The labels (held in memory: they are usually far smaller than the run).
    run_path : path-like
        A TREC run whose questions' lines are grouped (each question's lines together).
    metrics, relevance_threshold, missing
        As :func:`~ragaudit.metrics.evaluate`; averages are macro averages.
    order, duplicates
        As :func:`~ragaudit.data.formats.read_trec_run`.
    batch_bytes : int, default 16 MiB
        Text read per batch; bounds the memory the run takes.

    Returns
    -------
    Evaluation
        Questions in the order of the labels, as :func:`evaluate` returns them.

    Raises
    ------
    InputError
        A question whose lines are not together, or a run sharing no question with the labels.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
    >>> _ = path.write_text("q1 Q0 B 1 2 x\\nq1 Q0 A 2 1 x\\nq2 Q0 C 1 1 x\\n")
    >>> qrels = Qrels({"q1": {"A": 1}, "q2": {"C": 1}})
    >>> ev = evaluate_stream(qrels, path, ["mrr"], batch_bytes=16)
    >>> ev.query_ids, ev.per_query["mrr"].tolist(), ev.means["mrr"]
    (('q1', 'q2'), [0.5, 1.0], 0.75)
    """
    specs = _metric_specs(qrels, metrics, relevance_threshold, missing)
    check_policies(order, duplicates)
    if len(qrels) == 0:
        where = f"{qrels.name}: " if qrels.name else ""
        raise InputError(f"{where}the labels are empty: expected at least one labelled question")
    name = str(run_path)
    labels = LabelColumns(qrels)
    scores = _Scores(labels, specs, int(relevance_threshold), order, duplicates, name)
    carry: _Batch | None = None
    for chunk in iter_run_chunks(run_path, block_bytes=batch_bytes):
        head, carry = _split(_batch(chunk, carry, labels, name), name)
        del chunk
        if head is not None:
            scores.add(head)
        del head
    if carry is not None:
        scores.add(carry)
    if not scores.seen.any():
        raise InputError(f"{name}: the run and the labels share no question id")
    return _result(labels, scores, qrels.unit, missing)


def _named(count: int, first: Sequence[str]) -> str:
    shown = ", ".join(first[:_SHOW_IDS])
    return shown + (f", ... ({count - _SHOW_IDS} more)" if count > _SHOW_IDS else "")


def _result(labels: LabelColumns, scores: _Scores, unit: str, missing: str) -> Evaluation:
    """The :class:`Evaluation`, questions in label order, with the warnings of
    :func:`~ragaudit.metrics.evaluate` (the same texts, in the same order)."""
    unlabelled = scores.unlabelled
    if unlabelled.count:
        warnings.warn(
            f"{unlabelled.count} run question(s) have no labels and are ignored (as trec_eval "
            f"does): {_named(unlabelled.count, unlabelled.first)}",
            RagauditWarning,
            stacklevel=3,
        )
    seen = scores.seen
    absent = np.flatnonzero(~seen)
    if missing == "zero" and len(absent):
        warnings.warn(
            f"{len(absent)} labelled question(s) are missing from the run and score 0: "
            f"{_named(len(absent), Ids(labels.qids, absent[:_SHOW_IDS]))}; pass missing='skip' "
            "(--missing skip) to drop them as trec_eval does without -c",
            RagauditWarning,
            stacklevel=3,
        )
    evaluated = None if missing == "zero" or not len(absent) else seen
    no_relevant = scores.n_relevant == 0
    if evaluated is not None:
        no_relevant &= evaluated
    none = np.flatnonzero(no_relevant)
    if len(none):
        warnings.warn(
            f"{len(none)} question(s) have no relevant item (grade >= {scores.threshold}) and "
            "score 0 on every metric but judged@k, as in trec_eval: "
            f"{_named(len(none), Ids(labels.qids, none[:_SHOW_IDS]))}",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    if evaluated is None:
        query_ids, per_query = labels.qids, scores.per_query
    else:
        query_ids = tuple(labels.qids[i] for i in np.flatnonzero(evaluated).tolist())
        per_query = {metric: values[evaluated] for metric, values in scores.per_query.items()}
    return Evaluation(
        query_ids=query_ids,
        per_query=per_query,
        means={metric: float(np.mean(values)) for metric, values in per_query.items()},
        unit=unit,
        average="macro",
        relevance_threshold=scores.threshold,
        missing=missing,
        specs=scores.specs,
        tied_groups=scores.tied[0],
        float32_tied_groups=scores.tied[1],
    )
