"""The drill-down of single questions in a terminal (``ragaudit show``).

The same :class:`~ragaudit.diagnose.drilldown.QuestionView` the report page opens per question:
the question, the reference answer, the model's answer, the retrieved chunks in rank order
with the evidence marked, the judges' verdicts and reasons, and the stage it died at.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from ragaudit.diagnose.drilldown import QuestionView
from ragaudit.diagnose.repeats import RepeatsAnalysis
from ragaudit.reports.repeats import question_repeats
from ragaudit.reports.report import KeyValues, Report, Section, Table, Text

__all__ = ["excerpt", "grading_report", "show_report", "show_sections"]

#: Characters of chunk text shown per retrieved chunk (whitespace collapsed).
EXCERPT = 240


def excerpt(text: str, keywords: tuple[str, ...] = (), size: int = EXCERPT) -> str:
    """``size`` characters of ``text`` (whitespace collapsed), around the first evidence keyword
    when the text is longer; ``...`` marks what was cut.

    Examples
    --------
    >>> excerpt("a b  c", ())
    'a b c'
    >>> text = "Founded long ago in the north. The carry-over limit is 8 days since 2025, not 5."
    >>> excerpt(text, ("8 days",), size=30)
    '... limit is 8 days since 2025, n ...'
    >>> excerpt("abcdefgh", (), size=4)
    'abcd ...'
    """
    flat = " ".join(text.split())
    if len(flat) <= size:
        return flat
    lower = flat.lower()
    found = [i for i in (lower.find(k.lower()) for k in keywords if k.strip()) if i >= 0]
    start = max(0, min(found) - size // 3) if found else 0
    end = min(len(flat), start + size)
    start = max(0, end - size)
    cut = flat[start:end].strip()
    return ("... " if start else "") + cut + (" ..." if end < len(flat) else "")


def _mark(flag: bool | None) -> str:
    return "-" if flag is None else ("yes" if flag else "no")


def _evidence(view: QuestionView) -> tuple[Table | Text, ...]:
    """The retrieved chunks in rank order, and their text when known."""
    chunks = Table(
        ("rank", "chunk", "document", "gold doc", "answer chunk"),
        tuple(
            (str(c.rank), c.chunk_id, c.doc_id, _mark(c.gold_doc), _mark(c.answer_chunk))
            for c in view.chunks
        ),
        align="rllll",
    )
    texts = [
        line
        for c in view.chunks
        if c.text is not None
        for line in textwrap.wrap(
            f"[{c.rank}] " + excerpt(c.text, view.keywords),
            width=96,
            subsequent_indent="    ",
        )
    ]
    return (chunks, *((Text(tuple(texts)),) if texts else ()))


def _judges(view: QuestionView) -> Table | Text:
    if view.judges:
        return Table(("judge", "verdict"), view.judges, align="ll")
    return Text(("no verdicts",))


def _question_section(view: QuestionView, repeats: RepeatsAnalysis | None = None) -> Section:
    facts = KeyValues(
        (
            ("stage", view.stage),
            ("question", view.question or "-"),
            ("reference answer", view.reference_answer or "-"),
            ("answer", view.answer or "(no answer)"),
            ("keywords", ", ".join(view.keywords) or "-"),
        )
    )
    # the id goes in the parenthesis, which the terminal renderer does not upper-case
    again = question_repeats(repeats, view.qid)  # a repeated run: r of R, each repeat's place
    blocks = (facts, *((again,) if again else ()), *_evidence(view), _judges(view))
    return Section(f"Question ({view.qid}, {view.stage})", blocks)


def grading_report(view: QuestionView, *, show_judge: bool = False, note: str = "") -> Report:
    """One answer as a person grading it sees it (``ragaudit labels verdicts``).

    The question, the reference answer, the model's answer and the evidence, like
    :func:`show_report`, but without the funnel stage and, unless ``show_judge``, without the
    judges' verdicts: both give away what the judge decided, which biases the person.

    Examples
    --------
    >>> from ragaudit.diagnose.drilldown import ChunkView
    >>> from ragaudit.reports.renderer import render
    >>> view = QuestionView("q1", "ok", "How long?", "Ten days.", "Ten days.", ("ten days",),
    ...                     (ChunkView(1, "D#0", "D", True, None, "Ten days of leave."),),
    ...                     (("correct", "true"),))
    >>> print(render(grading_report(view), "table"), end="")
    ANSWER TO GRADE (q1)
      question          How long?
      reference answer  Ten days.
      answer            Ten days.
      keywords          ten days
    <BLANKLINE>
      rank  chunk  document  gold doc  answer chunk
         1  D#0    D         yes       -
    <BLANKLINE>
      [1] Ten days of leave.
    """
    facts = KeyValues(
        (
            ("question", view.question or "-"),
            ("reference answer", view.reference_answer or "-"),
            ("answer", view.answer or "(no answer)"),
            ("keywords", ", ".join(view.keywords) or "-"),
            *((("note", note),) if note else ()),
        )
    )
    blocks = (facts, *_evidence(view), *((_judges(view),) if show_judge else ()))
    return Report("", (Section(f"Answer to grade ({view.qid})", blocks),))


def show_report(
    run_name: str,
    k: int,
    views: Sequence[QuestionView],
    note: str = "",
    repeats: RepeatsAnalysis | None = None,
) -> Report:
    """One section per question; the JSON form is the list of question views (with, for a
    repeated run, each question's ``repeats``: right of R and each repeat's place).

    Examples
    --------
    >>> from ragaudit.diagnose.drilldown import ChunkView
    >>> from ragaudit.reports.renderer import render
    >>> view = QuestionView("q1", "3-refusal", "How long?", "Ten days.", "", ("ten days",),
    ...                     (ChunkView(1, "D#0", "D", True, True, "Ten days of leave."),),
    ...                     (("abstained", "true"),))
    >>> print(render(show_report("k3", 3, [view]), "table"), end="")
    ragaudit show: k3 (k=3, 1 question)
    <BLANKLINE>
    QUESTION (q1, 3-refusal)
      stage             3-refusal
      question          How long?
      reference answer  Ten days.
      answer            (no answer)
      keywords          ten days
    <BLANKLINE>
      rank  chunk  document  gold doc  answer chunk
         1  D#0    D         yes       yes
    <BLANKLINE>
      [1] Ten days of leave.
    <BLANKLINE>
      judge      verdict
      abstained  true
    """
    head, sections = show_sections(run_name, k, views, note, repeats)
    data = {"run": run_name, "k": k, "questions": [_question_data(v, repeats) for v in views]}
    return replace(head, sections=(*head.sections, *sections), data=data)


def _question_data(view: QuestionView, repeats: RepeatsAnalysis | None) -> dict[str, Any]:
    data = view.to_dict()
    found = None if repeats is None else repeats.question(view.qid)
    if repeats is not None and found is not None:
        right, (low, high), places = found
        data["repeats"] = {"right": right, "repeats": repeats.repeats, "ci_low": low,
                           "ci_high": high, "places": list(places)}  # fmt: skip
    return data


def show_sections(
    run_name: str,
    k: int,
    views: Sequence[QuestionView],
    note: str = "",
    repeats: RepeatsAnalysis | None = None,
) -> tuple[Report, Iterator[Section]]:
    """:func:`show_report` as its head (title, notes, no data) and its question sections, made
    one at a time as they are read: ``show`` streams them to the terminal
    (:func:`~ragaudit.reports.renderer.render_stream`)."""
    plural = "" if len(views) == 1 else "s"
    title = f"ragaudit show: {run_name} (k={k}, {len(views)} question{plural})"
    empty = () if views else (Section("", (Text(("no question matches",)),)),)
    head = Report(title, empty, notes=(note,) if note else ())
    return head, map(partial(_question_section, repeats=repeats), views)
