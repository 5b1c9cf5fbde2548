"""The report of ``ragaudit golden check``: one table of findings, problems first."""

from __future__ import annotations

from typing import Any

from ragaudit.pipeline.golden_check import ANSWER_WORDS_FOUND, CHECKS, NEAR_DUPLICATE
from ragaudit.reports.report import Report, Section, Table, Text

__all__ = ["golden_check_report"]

_RULES = (
    "rules: an unknown key within 0.8 similarity (difflib) of an accepted name is a "
    "misspelling (a problem; `run` refuses it), other unknown keys are metadata (a note); a "
    f"reference answer is found when all its numbers and {ANSWER_WORDS_FOUND:.0%} of its "
    "content words are in its sources plus at most one other document; a keyword is in a "
    "chunk when its words and numbers occur there in a row; near-duplicate questions share a "
    f"Jaccard similarity of content words >= {NEAR_DUPLICATE}"
)


def golden_check_report(check: Any) -> Report:
    """The findings of a :class:`~ragaudit.pipeline.golden_check.GoldenCheck`.

    Examples
    --------
    >>> from ragaudit.pipeline.golden_check import Finding, GoldenCheck
    >>> from ragaudit.reports.renderer import render
    >>> check = GoldenCheck("g.yaml", "corpus", 2, 2, 1, 1,
    ...     (Finding("source not in corpus", "q2", 4, "'leav' names no document"),))
    >>> print("\\n".join(render(golden_check_report(check), "table").splitlines()[:5]))
    ragaudit golden check: g.yaml (2 questions, 2 answerable; corpus: 1 documents, 1 chunks)
    <BLANKLINE>
    1 PROBLEM
      check                 id  line  finding
      source not in corpus  q2     4  'leav' names no document
    """
    title = (
        f"ragaudit golden check: {check.path} ({check.n_questions} questions, "
        f"{check.n_answerable} answerable; corpus: {check.n_documents} documents, "
        f"{check.n_chunks} chunks)"
    )
    sections = []
    for problem, label in ((True, "problem"), (False, "note")):
        found = [f for f in check.findings if f.problem is problem]
        if not found:
            continue
        found.sort(key=lambda f: CHECKS.index(f.check))
        rows = tuple(
            (f.check, f.qid or "-", "-" if f.line is None else str(f.line), f.detail) for f in found
        )
        plural = "" if len(found) == 1 else "s"
        sections.append(
            Section(
                f"{len(found)} {label}{plural}",
                (Table(("check", "id", "line", "finding"), rows, align="llrl"),),
            )
        )
    verdict = "clean: no problem found" if check.ok else f"{len(check.problems)} problem(s): exit 1"
    if check.ok:
        sections.insert(0, Section("", (Text((verdict,)),)))
    sections.append(Section("", (Text((_RULES,), style="note"),)))
    return Report(title, tuple(sections), data=check.to_dict())
