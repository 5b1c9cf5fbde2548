"""Report sections for repeated generations: the variance budget, pass@k and pass^k, flaky
questions and the funnel stage they change at (``funnel``, ``report``, ``show``), and the
budget question of ``plan --calls``.

Renders :class:`~ragaudit.diagnose.repeats.RepeatsAnalysis` and
:class:`~ragaudit.stats.repeat_plan.RepeatPlan`; computes nothing.  An unrepeated run has no
analysis and gets none of these sections, so its output is unchanged.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from typing import Any

from ragaudit.diagnose.funnel_result import STAGE_KEYS
from ragaudit.diagnose.repeats import RepeatsAnalysis
from ragaudit.reports.report import Block, Cell, KeyValues, Report, Section, Span, Table, Text
from ragaudit.stats.repeat_plan import RepeatPlan
from ragaudit.stats.repeats import PassKResult
from ragaudit.stats.resampling import ConfidenceInterval

__all__ = [
    "PASS_K_METHOD",
    "question_repeats",
    "repeat_plan_report",
    "repeats_section",
    "show_command",
    "with_repeats",
]

#: The estimators of pass@k and pass^k and their references, said once.
PASS_K_METHOD = (
    "from c of R repeats right, per question: pass@k = 1 - C(R-c, k)/C(R, k) (Chen et al. "
    "2021), pass^k = C(c, k)/C(R, k) (Yao et al. 2024), both unbiased; their mean over "
    "questions, interval over the per-question estimates (the question is the unit)"
)
_PARTS = {
    "questions": "between questions",
    "generations": "between generations of one question",
    "judge": "between judge calls on one answer",
}
_STAGE_WORDS = dict(zip(STAGE_KEYS, ("retrieval", "evidence", "refusal", "generation"),
                        strict=True))  # fmt: skip


def show_command(analysis: RepeatsAnalysis, qid: str) -> str:
    """The ``ragaudit show RUN QID`` command that opens one question (shell-quoted)."""
    return f"ragaudit show {shlex.quote(analysis.path or analysis.name)} {shlex.quote(qid)}"


def _ci(ci: ConfidenceInterval) -> str:
    return f"[{ci.low:.3f}, {ci.high:.3f}]"


def _budget_blocks(analysis: RepeatsAnalysis) -> list[Block]:
    budget = analysis.budget
    if budget is None:
        return [Text(("variance budget: needs at least 2 answerable questions",))]
    rows = tuple(
        (_PARTS[key], f"{budget.components[key]:.4f}", f"{100 * share:.0f}%")
        for key, share in budget.shares.items()
    )
    values = tuple(
        (_PARTS[key], budget.components[key], share) for key, share in budget.shares.items()
    )
    table = Table(("variance", "component", "share of the mean's variance"), rows,
                  values=values)  # fmt: skip
    judge = (
        "" if "judge" in budget.shares
        else "; no judge repeats on every answer, so the generation part holds the judge's "
        "noise too"
    )  # fmt: skip
    return [
        table,
        Text(
            (
                f"{budget.sentence()} (projected from these components).",
                f"method: {budget.method}; components truncated at 0{judge}.",
            ),
            style="note",
        ),
    ]


def _pass_table(analysis: RepeatsAnalysis) -> Table:
    def cells(at: PassKResult, every: PassKResult) -> tuple[str, ...]:
        return (
            str(at.k), f"{at.statistic:.3f}", _ci(at.confidence_interval),
            f"{every.statistic:.3f}", _ci(every.confidence_interval),
            at.method if at.method == every.method else f"{at.method} / {every.method}",
        )  # fmt: skip

    # k = 1: both are the correctness over repeats, whose interval is said once, above
    pairs = zip(analysis.pass_at[1:], analysis.pass_all[1:], strict=True)
    return Table(("k", "pass@k", "interval", "pass^k", "interval", "interval method"),
                 tuple(cells(a, b) for a, b in pairs), "rrrrrl")  # fmt: skip


def _flaky_blocks(analysis: RepeatsAnalysis, max_flaky: int) -> list[Block]:
    n, flaky = analysis.n_questions, analysis.flaky
    head = (
        f"flaky questions: {len(flaky)} of {n} answerable (right on some of the "
        f"{analysis.repeats} repeats and wrong on others), most changeable first"
    )
    if not flaky:
        return [Text((head,))]
    rows = []
    for f in flaky[:max_flaky]:
        qid = analysis.ids[f.index]
        places = "-" if analysis.places is None else ", ".join(analysis.places[f.index])
        command = Cell((Span(show_command(analysis, qid), "code"),))
        rows.append((qid, f"{f.right}/{f.repeats}", _ci(f.confidence_interval),
                     f"{f.disagreement:.2f}", places, command))  # fmt: skip
    more = len(flaky) - len(rows)
    tail = f"; {more} more in --format json" if more > 0 else ""
    return [
        Text((head,)),
        Table(
            ("question", "right", "exact interval", "changes", "place in each repeat", "open it"),
            tuple(rows),
            "lrrrll",
        ),
        Text(
            (
                f"right: repeats judged correct, with its Clopper-Pearson exact interval; "
                f"changes: the chance two repeats disagree, 2r(R-r)/(R(R-1)){tail}.",
            ),
            style="note",
        ),
    ]


def _stage_line(analysis: RepeatsAnalysis) -> str | None:
    stages = analysis.stages
    if stages is None:
        return None
    parts = ", ".join(f"{_STAGE_WORDS[key]} {stages.by_stage[key]}" for key in STAGE_KEYS)
    tied = [_STAGE_WORDS[key] for key in stages.sources]
    most = (
        "" if not tied else f"; the flakiness comes mostly from {tied[0]}" if len(tied) == 1
        else f"; it comes from {' and '.join(tied)} alike"
    )  # fmt: skip
    return (
        f"funnel: {stages.changed} of {stages.n} answerable questions land at a different "
        f"stage in different repeats; the stage their repeats first part at: {parts}{most}"
    )


def _seeds(seeds: tuple[int, ...]) -> str:
    """The repeats' run seeds (one when they share it); each (question, repeat) draws from
    its own seed, recorded in the run (``config.repeat_seed_rule``)."""
    if not seeds:
        return "not recorded"
    shared = f"run seed {seeds[0]} for every repeat" if len(set(seeds)) == 1 else (
        "run seeds " + ", ".join(map(str, seeds)))  # fmt: skip
    return f"{shared}; each (question, repeat) has its own seed, recorded in the run"


def repeats_section(
    analysis: RepeatsAnalysis, *, max_flaky: int = 5, level: int = 2, only: tuple[str, ...] = ()
) -> Section:
    """One section for the repeats of a run: the mean over repeats with its interval, the
    variance budget, pass@k and pass^k, the flaky questions and the stage they change at."""
    mean = analysis.mean
    seeds = _seeds(analysis.seeds)
    undecided = (
        f"; {analysis.undecided} (question, repeat) verdicts undecided, counted as not "
        "correct (as the funnel counts them)" if analysis.undecided else ""
    )  # fmt: skip
    overall = (
        "needs at least 2 questions" if mean is None
        else f"{mean.statistic:.3f} {_ci(mean.confidence_interval)} ({analysis.n_questions} "
        f"questions x {analysis.repeats}; {mean.method})"
    )  # fmt: skip
    label = f"correct, mean of {analysis.repeats} repeats"
    reads = (
        "every repeat of each answerable question (the dashboard's judged rows are these "
        "means over repeats; the funnel, retrieval rows, latency and cost read repeat 0, each "
        "row's own fields)"
    )
    facts = KeyValues(((label, overall), ("seeds", seeds + undecided), ("reads", reads)))
    stage = _stage_line(analysis)
    blocks: list[Block] = [
        facts,
        *_budget_blocks(analysis),
        _pass_table(analysis),
        Text(
            (f"pass@k: at least one of k tries right; pass^k: all k right; {PASS_K_METHOD}.",),
            style="note",
        ),
        *_flaky_blocks(analysis, max_flaky),
        *((Text((stage,)),) if stage else ()),
    ]
    title = (
        f"Repeats ({analysis.name}: {analysis.repeats} generations of each of "
        f"{analysis.n_questions} answerable questions)"
    )
    return Section(title, tuple(blocks), level=level, only=only)


def with_repeats(report: Report, analysis: RepeatsAnalysis | None) -> Report:
    """``report`` with the repeats section and ``"repeats"`` in its JSON; unchanged for an
    unrepeated run (``analysis`` None)."""
    if analysis is None:
        return report
    data: Any = report.data
    if isinstance(data, dict):
        data = {**data, "repeats": analysis.to_dict()}
    scope = f", repeat 0 of {analysis.repeats}"  # the funnel counts one generation
    sections = tuple(
        replace(s, title=s.title[:-1] + scope + ")")
        if s.title.startswith("The funnel (") and s.title.endswith(")") else s
        for s in report.sections
    )
    return replace(report, sections=(*sections, repeats_section(analysis)), data=data)


def question_repeats(analysis: RepeatsAnalysis | None, qid: str) -> KeyValues | None:
    """``show``'s lines for one question of a repeated run: right on r of R with its exact
    interval, and where each repeat landed; None for an unrepeated run or another question."""
    found = None if analysis is None else analysis.question(qid)
    if analysis is None or found is None:
        return None
    right, (low, high), places = found
    interval = _ci(ConfidenceInterval(low, high))
    pairs: list[tuple[str, str | tuple[Span, ...]]] = [
        ("repeats", f"correct on {right} of {analysis.repeats} {interval} (Clopper-Pearson exact)"),
    ]
    if places:
        pairs.append(("place in each repeat", ", ".join(places)))
    return KeyValues(tuple(pairs))


def repeat_plan_report(plan: RepeatPlan) -> Report:
    """``plan --calls``: the questions and repeats that minimise the interval for a budget."""
    best = plan.best
    rows, values = [], []
    for d in plan.designs:
        mark = "<- best" if (d.questions, d.repeats) == (best.questions, best.repeats) else ""
        rows.append(
            (
                str(d.repeats),
                f"{d.questions:,}",
                f"{d.calls:,}",
                f"{d.variance_of_mean**0.5:.4f}",
                f"{d.relative_width:.2f}",
                mark,
            )
        )
        values.append((d.repeats, d.questions, d.calls, d.variance_of_mean ** 0.5,
                       d.relative_width, mark))  # fmt: skip
    parts = ", ".join(f"{_PARTS[k]} {v:.4g}" for k, v in plan.components.items())
    labelled = (
        f" + {best.questions:,} questions at {plan.question_cost:g} each"
        if plan.question_cost else ""
    )  # fmt: skip
    lines = [
        f"best for {plan.calls:,} generations: {best.questions:,} questions x {best.repeats} "
        f"repeat{'s' if best.repeats > 1 else ''} ({best.calls:,} generations{labelled}), "
        f"standard error of the mean {best.variance_of_mean**0.5:.4f}",
    ]
    if plan.current is not None:
        now = plan.current
        lines.append(f"the run's own design, {now.questions:,} x {now.repeats}: standard "
                     f"error {now.variance_of_mean ** 0.5:.4f}")  # fmt: skip
    limits = [f"{plan.questions_available:,} questions available"] if (
        plan.questions_available is not None) else ["questions unlimited"]  # fmt: skip
    if plan.question_cost:
        limits.append(f"one more question costs {plan.question_cost:g} generations")
    notes = (
        f"variance components: {parts} (judge calls per answer: {plan.judge_calls}); "
        + "; ".join(limits)
        + ".",
        f"method: {plan.method}.",
        "width: the interval's width relative to the best design's (the ratio of standard "
        "errors); with free questions more questions always win, repeats pay once the "
        "questions run out or cost more than a generation.",
    )
    table = Table(("repeats", "questions", "generations", "standard error", "width", ""),
                  tuple(rows), "rrrrrl", values=tuple(values))  # fmt: skip
    return Report(
        "ragaudit plan: questions and repeats for a budget of calls",
        (Section("", (Text(tuple(lines)), table, Text(notes, style="note"))),),
        data=plan.to_dict(),
    )
