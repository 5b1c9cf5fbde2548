"""A saved run as the inputs other tools and :func:`ragaudit.evaluate` take: its ranking as a
:class:`~ragaudit.data.runs.Run`, its labels as :class:`~ragaudit.data.qrels.Qrels`.

:class:`RunConversions` gives :class:`~ragaudit.data.saved_run.SavedRun` its ``to_run()`` and
``to_qrels()``; ``ragaudit export --to trec-run`` writes ``to_run()``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragaudit.data.qrels import Qrels, check_unit

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ragaudit.data.runs import Run
    from ragaudit.data.saved_run.model import QuestionResult

__all__ = ["RunConversions"]


class RunConversions:
    """Mixin of :class:`~ragaudit.data.saved_run.SavedRun`: ``to_run()`` and ``to_qrels()``."""

    __slots__ = ()
    questions: Sequence[QuestionResult]
    name: str
    path: str | None

    def to_run(self, unit: str = "chunk", k: int | None = None) -> Run:
        """The run's ranking: chunk ids as retrieved, or (``unit="doc"``) each document once,
        at the rank of its first chunk.

        Scores are the run's; a question whose chunks have no score (an imported run) keeps
        its order (``order="given"``).  ``k`` keeps the first ``k`` chunks of each question;
        questions that retrieved nothing are left out.

        Examples
        --------
        >>> from ragaudit.data.saved_run import SavedRun
        >>> run = SavedRun.from_dict({"config": {"k": 3}, "rows": [{"id": "q1", "retrieved": [
        ...     {"chunk_id": "a#1", "doc_id": "a"}, {"chunk_id": "b#0", "doc_id": "b"},
        ...     {"chunk_id": "a#0", "doc_id": "a"}]}]})
        >>> run.to_run()["q1"], run.to_run(unit="doc")["q1"], run.to_run(k=1)["q1"]
        (['a#1', 'b#0', 'a#0'], ['a', 'b'], ['a#1'])
        """
        # imported here: ragaudit.data.runs brings the file readers, which the modules that
        # take a SavedRun (stats) must not load; to_run itself reads no file
        from ragaudit.data.runs import Run

        check_unit(unit)
        rankings: dict[str, Any] = {}
        docs: dict[str, str] = {}
        for q in self.questions:
            ranked = q.ranked[:k] if k is not None else q.ranked
            if not ranked:
                continue
            docs.update({r.chunk_id: r.doc_id for r in ranked})
            if all(r.score is not None for r in ranked):
                rankings[q.id] = [(r.chunk_id, float(r.score or 0.0)) for r in ranked]
            else:
                rankings[q.id] = [r.chunk_id for r in ranked]
        name = self.path or self.name
        run = Run(rankings, unit="chunk", order="given", duplicates="first", name=name)
        return run.to_docs(docs) if unit == "doc" else run

    def to_qrels(self) -> Qrels:
        """Document labels: every gold document of an answerable question gets grade 1 (what
        ``ragaudit export --to trec-qrels`` writes for the golden set the run was made from).

        >>> from ragaudit.data.saved_run import SavedRun
        >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": [
        ...     {"id": "q1", "gold_docs": ["a", "b"], "retrieved": []},
        ...     {"id": "q2", "answerable": False, "retrieved": []}]})
        >>> run.to_qrels().to_dict()
        {'q1': {'a': 1, 'b': 1}}
        """
        return Qrels(
            {
                q.id: dict.fromkeys(q.gold_docs, 1)
                for q in self.questions
                if q.answerable and q.gold_docs
            },
            unit="doc",
            name=self.path or self.name,
        )
