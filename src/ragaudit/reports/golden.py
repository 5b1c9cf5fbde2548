"""The report of ``ragaudit golden check``: one table of findings, problems first."""

from __future__ import annotations

from typing import Any

from ragaudit.pipeline.golden_check import ANSWER_WORDS_FOUND, CHECKS
from ragaudit.pipeline.golden_validity import PARAPHRASE
from ragaudit.reports.report import Report, Section, Table, Text

__all__ = ["finding_sections", "golden_check_report", "golden_validity_sections"]

_RULES = (
    "rules: an unknown key within 0.8 similarity (difflib) of an accepted name is a "
    "misspelling (a problem; `run` refuses it), other unknown keys are metadata (a note); a "
    f"reference answer is found when all its numbers and {ANSWER_WORDS_FOUND:.0%} of its "
    "content words are in its sources plus at most one other document; a keyword is in a "
    "chunk when its words and numbers occur there in a row; paraphrase duplicates have a "
    f"symmetric normalised BM25 similarity >= {PARAPHRASE}; intervals are Clopper-Pearson "
    "exact 95%"
)


def _share(flagged: int, n: int, low: float | None, high: float | None) -> str:
    if not n or low is None or high is None:
        return "-"
    return f"{flagged / n:.1%} [{low:.1%}, {high:.1%}]"


def golden_validity_sections(check: Any, prefix: str = "") -> list[Section]:
    """The validity checks' n, share and method, then the coverage of the documents (each
    section title after ``prefix``: ``report`` puts them under "golden set: ")."""
    out = []
    if check.summaries:
        rows = tuple(
            (s.check, f"{s.n} {s.unit}", str(s.flagged), _share(s.flagged, s.n, s.low, s.high),
             s.method)
            for s in check.summaries
        )  # fmt: skip
        out.append(
            Section(
                f"{prefix}validity checks",
                (
                    Table(
                        ("check", "n", "flagged", "share [95% CI]", "method"), rows, align="lrrrl"
                    ),
                ),
            )
        )
    cov = check.coverage
    if cov is not None and cov.n:
        head = ", ".join(f"{doc} {m}" for doc, m in cov.per_document[:5])
        more = len(cov.per_document) - 5
        lines = [
            f"{cov.n} questions over {len(cov.per_document)} documents (first source, as "
            f"--cluster-by source groups them): {head}" + (f", ... ({more} more)" if more > 0
                                                           else ""),
            f"largest document {cov.largest}: {cov.largest_share:.1%} of the questions "
            f"[{cov.low:.1%}, {cov.high:.1%}] (Clopper-Pearson exact 95%)",
        ]  # fmt: skip
        effects = tuple(
            (f"{icc:g}", f"{deff:.2f}", f"{neff:.1f}") for icc, deff, neff in cov.design_effects
        )
        out.append(
            Section(
                f"{prefix}coverage skew",
                (
                    Text(tuple(lines)),
                    Table(("assumed ICC", "design effect", "effective n"), effects, align="rrr"),
                    Text((
                        f"design effect = 1 + (sum m_g^2 / n - 1) * ICC (Kish) with sum m_g^2 "
                        f"/ n = {cov.weighted_size:.2f}: a rate measured on these {cov.n} "
                        "questions is as precise as one on the effective n independent ones",
                    ), style="note"),
                ),
            )
        )  # fmt: skip
    leak = getattr(check, "closed_book", None)
    if leak is not None:
        out.append(Section(f"{prefix}closed-book leak", (Text(tuple(leak.lines())),)))
    return out


def finding_sections(check: Any, prefix: str = "") -> list[Section]:
    """One table of the problems, one of the notes (titles after ``prefix``)."""
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
                f"{prefix}{len(found)} {label}{plural}",
                (Table(("check", "id", "line", "finding"), rows, align="llrl"),),
            )
        )
    return sections


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
    sections.extend(finding_sections(check))
    sections.extend(golden_validity_sections(check))
    verdict = "clean: no problem found" if check.ok else f"{len(check.problems)} problem(s): exit 1"
    if check.ok:
        sections.insert(0, Section("", (Text((verdict,)),)))
    sections.append(Section("", (Text((_RULES,), style="note"),)))
    return Report(title, tuple(sections), data=check.to_dict())
