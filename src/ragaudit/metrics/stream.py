"""``evaluate_stream``: score a TREC run larger than memory, a batch of whole questions at a time.

The run is read in chunks of about ``batch_bytes`` of text (:func:`ragaudit.data.formats.
iter_run_chunks`).  The rows of a chunk's last question may continue in the next chunk, so
they are carried over; every other question in the chunk is complete and is scored at once by
:func:`~ragaudit.metrics.evaluate`.  Peak memory is the labels plus one batch, whatever the
size of the run.  The run must list each question's lines together (as every ranker writes
them); a question met again after another one is an error.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ragaudit.data.formats import iter_run_chunks
from ragaudit.data.formats._chunks import TextColumns
from ragaudit.data.formats._strings import _Strings
from ragaudit.data.formats.columns import (
    QrelsColumns,
    _ColumnarQrels,
    _ColumnarRun,
    finish_run_columns,
    items_view,
)
from ragaudit.data.qrels import Qrels
from ragaudit.exceptions import InputError, RagauditWarning
from ragaudit.metrics.evaluate import Evaluation, evaluate

__all__ = ["evaluate_stream"]

_BATCH_BYTES = 1 << 25


def _join(carry: TextColumns | None, chunk: TextColumns) -> TextColumns:
    """The rows of ``carry`` followed by those of ``chunk``, with one set of codes."""
    if carry is None:
        return chunk
    index = {name: i for i, name in enumerate(carry.key_names)}
    to_joint = np.array(
        [index.setdefault(name, len(index)) for name in chunk.key_names], dtype=np.int64
    )
    return TextColumns(
        list(index),
        np.concatenate((carry.keys, to_joint[chunk.keys])),
        _Strings.concat([carry.items, chunk.items]),
        np.concatenate((carry.values, chunk.values)),
    )


def _rows(columns: TextColumns, rows: npt.NDArray[np.bool_]) -> TextColumns:
    positions = np.flatnonzero(rows)
    items = items_view(columns.items, positions)
    return TextColumns(columns.key_names, columns.keys[positions], items, columns.values[positions])


class _LabelIndex:
    """The labels of any set of questions, in time proportional to their number of labels."""

    def __init__(self, qrels: Qrels) -> None:
        self.qrels = qrels
        self.known = set(qrels)  # iterating ids builds no per-label objects
        columns = getattr(qrels, "columns", None)
        self.columns = columns if isinstance(columns, QrelsColumns) else None
        if self.columns is not None:
            self.code = {qid: i for i, qid in enumerate(self.columns.qids)}
            self.order = np.argsort(self.columns.q, kind="stable")
            self.starts = np.zeros(len(self.columns.qids) + 1, dtype=np.int64)
            counts = np.bincount(self.columns.q, minlength=len(self.columns.qids))
            np.cumsum(counts, out=self.starts[1:])

    def subset(self, qids: Sequence[str]) -> Qrels:
        wanted = [qid for qid in qids if qid in self.known]
        if self.columns is None:
            return Qrels({qid: self.qrels[qid] for qid in wanted}, unit=self.qrels.unit)
        cols = self.columns
        codes = np.array([self.code[qid] for qid in wanted], dtype=np.int64)
        lengths = self.starts[codes + 1] - self.starts[codes]
        local = np.zeros(len(codes) + 1, dtype=np.int64)
        np.cumsum(lengths, out=local[1:])
        rows = self.order[
            np.repeat(self.starts[codes] - local[:-1], lengths) + np.arange(local[-1])
        ]
        subset = QrelsColumns(
            tuple(wanted),
            np.repeat(np.arange(len(codes)), lengths),
            items_view(cols.items, rows),
            None if cols.stored_hash is None else cols.stored_hash[rows],
            cols.grades[rows],
        )
        return _ColumnarQrels(subset, unit=self.qrels.unit, name=self.qrels.name)


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
    batch_bytes : int, default 32 MiB
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
    if missing not in ("zero", "skip"):
        raise InputError(f"missing: expected 'zero' or 'skip', found {missing!r}")
    name = str(run_path)
    parts: list[Evaluation] = []
    done: set[str] = set()
    tied = [0, 0]
    unlabelled = [0]
    labels = _LabelIndex(qrels)
    caught: list[warnings.WarningMessage] = []

    def score(batch: TextColumns) -> None:
        qids = tuple(batch.key_names)
        again = done.intersection(qids)
        if again:
            raise InputError(
                f"{name}: question {sorted(again)[0]!r} appears in two separate places; "
                "streaming needs each question's lines together (sort the run by question, "
                "or evaluate it without streaming)"
            )
        done.update(qids)
        columns = finish_run_columns(
            qids,
            batch.keys,
            batch.items,
            batch.values,
            order=order,
            duplicates=duplicates,
            name=name,
        )
        tied[0] += columns.tied_groups
        tied[1] += columns.float32_tied_groups
        unlabelled[0] += sum(1 for qid in qids if qid not in labels.known)
        if not any(qid in labels.known for qid in qids):
            return
        run = _ColumnarRun(columns, unit=qrels.unit, order=order, name=name)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            parts.append(
                evaluate(
                    labels.subset(qids),
                    run,
                    metrics,
                    relevance_threshold=relevance_threshold,
                    missing="skip",
                )
            )
        caught.extend(seen)

    carry: TextColumns | None = None
    for chunk in iter_run_chunks(run_path, block_bytes=batch_bytes):
        joint = _join(carry, chunk)
        if np.any(joint.keys[1:] < joint.keys[:-1]):
            bad = joint.key_names[int(joint.keys[1:][joint.keys[1:] < joint.keys[:-1]][0])]
            raise InputError(
                f"{name}: question {bad!r} appears in two separate places; streaming needs "
                "each question's lines together (sort the run by question, or evaluate it "
                "without streaming)"
            )
        last = int(joint.keys[-1])
        tail = joint.keys == last
        if not tail.all():
            head = _rows(joint, ~tail)
            head = TextColumns(head.key_names[:last], head.keys, head.items, head.values)
            score(head)
        carry = _rows(joint, tail)
        carry = TextColumns([joint.key_names[last]], np.zeros(len(carry.keys), np.int64),
                            carry.items, carry.values)  # fmt: skip
    if carry is not None:
        score(carry)
    if not parts:
        raise InputError(f"{name}: the run and the labels share no question id")
    caught = [m for m in caught if "have no labels and are ignored" not in str(m.message)]
    if unlabelled[0]:
        warnings.warn(
            f"{unlabelled[0]} run question(s) have no labels and are ignored (as trec_eval does)",
            RagauditWarning,
            stacklevel=2,
        )
    return _combine(qrels, parts, done, missing, tied, caught)


def _combine(
    qrels: Qrels,
    parts: list[Evaluation],
    in_run: set[str],
    missing: str,
    tied: list[int],
    caught: list[warnings.WarningMessage],
) -> Evaluation:
    """One :class:`Evaluation` from the batches', questions in label order."""
    first = parts[0]
    names = list(first.per_query)
    position = {qid: i for i, qid in enumerate(qrels)}
    ids = [qid for part in parts for qid in part.query_ids]
    values = {n: np.concatenate([part.per_query[n] for part in parts]) for n in names}
    absent = [qid for qid in qrels if qid not in in_run]  # iterates ids only
    if missing == "zero" and absent:
        ids += absent
        values = {n: np.concatenate((v, np.zeros(len(absent)))) for n, v in values.items()}
        caught.append(
            warnings.WarningMessage(
                f"{len(absent)} labelled question(s) are missing from the run and score 0",
                RagauditWarning,
                __file__,
                0,
            )
        )
    order = np.argsort([position[qid] for qid in ids], kind="stable")
    per_query = {n: v[order] for n, v in values.items()}
    kinds: dict[tuple[type, str], int] = {}
    for message in caught:
        text = str(message.message).split(":")[0]
        kinds[(message.category, text)] = kinds.get((message.category, text), 0) + 1
    for (category, text), count in kinds.items():
        more = f" (in {count} batches)" if count > 1 else ""
        warnings.warn(text + more, category, stacklevel=3)
    return Evaluation(
        query_ids=tuple(ids[i] for i in order.tolist()),
        per_query=per_query,
        means={n: float(np.mean(v)) for n, v in per_query.items()},
        unit=first.unit,
        average="macro",
        relevance_threshold=first.relevance_threshold,
        missing=missing,
        specs=first.specs,
        tied_groups=tied[0],
        float32_tied_groups=tied[1],
    )
