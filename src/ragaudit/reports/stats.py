"""Reports of the statistics commands: ``compare``, ``compare --all``, ``plan``, ``agreement``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragaudit.reports.confounding import confounding_lines
from ragaudit.reports.id_lists import ALL_IDS_HINT, SHOWN_IDS, cut_ids
from ragaudit.reports.judged import (
    JUDGED_ROW_NOTE,
    judged_comparison_row,
    judged_notes,
    judged_run_lines,
    with_judged_runs,
)
from ragaudit.reports.noise import with_noise_sections
from ragaudit.reports.report import KeyValues, Report, Section, Table, Text
from ragaudit.reports.verdict_sentence import FULL_HINT, verdict_sentence, zero_width_words
from ragaudit.stats.options import short_method
from ragaudit.stats.verdicts import (
    format_pvalue,
    judged_rate_note,
    no_change_sentence,
    verdict_rule,
)

if TYPE_CHECKING:  # only annotations: `plan` must not load the comparison machinery
    from ragaudit.data.per_question import PerQuestionMetrics
    from ragaudit.stats.agreement import AgreementResult
    from ragaudit.stats.compare import Comparison, MetricComparison
    from ragaudit.stats.mcnemar import McNemarResult
    from ragaudit.stats.pairwise import PairwiseMatrix
    from ragaudit.stats.power import PlanningRow

__all__ = [
    "agreement_report",
    "baseline_report",
    "comparison_methods",
    "comparison_report",
    "fmt_p",
    "matrix_report",
    "method_labels",
    "plan_report",
]


fmt_p = format_pvalue  # the one display rule for p-values (ragaudit.stats.verdicts)

# The CSV columns of a row's interval and p-value, with the methods that produced them.
_CSV_INTERVAL_AND_P = ("ci_low", "ci_high", "ci_method", "p", "p_method")


def _interval_and_p(row: MetricComparison) -> tuple[float, float, str, float, str]:
    """A row's values for the ``_CSV_INTERVAL_AND_P`` columns."""
    ci = row.confidence_interval
    return ci.low, ci.high, row.ci_method, row.pvalue, row.p_method


def method_labels(row: MetricComparison) -> tuple[str, str]:
    """Short names of a row's interval and p-value methods, for a table's method columns."""
    return short_method(row.ci_method), short_method(row.p_method)


def _ci(low: float, high: float) -> str:
    return f"[{low:+.3f}, {high:+.3f}]"


def _level(confidence: float) -> str:
    return f"{100 * confidence:g}% CI"


def _verdict_rule(alpha: float) -> str:
    return verdict_rule(alpha)


def comparison_methods(result: Comparison) -> str:
    """The methods line of a paired comparison: seed, interval methods, p-value method.

    ``ragaudit compare`` prints it under its header and the audit page under its comparison
    table, so both describe the methods in the same words.

    Examples
    --------
    >>> from ragaudit.data.per_question import PerQuestionMetrics
    >>> from ragaudit.stats.compare import compare_runs
    >>> a = PerQuestionMetrics("a", {f"q{i}": {"correct": float(i % 2)} for i in range(4)})
    >>> b = PerQuestionMetrics("b", {f"q{i}": {"correct": 1.0} for i in range(4)})
    >>> line = comparison_methods(compare_runs(a, b, ["correct"], seed=1, n_resamples=100))
    >>> line.split(" | ")[0], line.split(" | ")[1][:37]
    ('seed 1', 'interval: McNemar exact inverted for ')
    """
    bootstrap = f"{'BCa' if result.ci_method == 'bca' else 'percentile'} bootstrap"
    inverted = (
        "the sign-flip test inverted (exact, or the same random flips for every shift; widened "
        "to betting when too few differ, or when at least half are unchanged and no change "
        "exceeds 0.25)"
    )
    if result.ci_method in ("auto", "score"):
        interval = f"McNemar exact inverted for 0/1 metrics, {inverted} otherwise"
    elif result.ci_method == "betting":
        interval = (
            "McNemar exact inverted for 0/1 metrics, betting (Waudby-Smith-Ramdas; valid for any "
            f"distribution) for other scores in [0, 1], {inverted} otherwise"
        )
    else:
        interval = f"{bootstrap} ({result.n_resamples} resamples) for every metric"
    if result.clustered:
        return (
            f"seed {result.seed} | clustered: every verdict is the cluster sign-flip test (whole "
            "clusters flip together, Canay, Romano & Shaikh 2017; exact over all patterns, else "
            f"{result.n_permutations} random flips) | interval: that test inverted, united with "
            "CR2 t on Bell-McCaffrey df (widened to cluster betting when fewer than 6 clusters "
            "differ) | 'too few differing' counts the clusters that differ, not the questions"
        )
    return (
        f"seed {result.seed} | interval: {interval} | p: exact sign-flip distribution (lattice "
        f"convolution, or all patterns of <= {result.exact_max_n} non-zero differences), else "
        f"{result.n_permutations} random flips, (count+1)/(trials+1)"
    )


def _header(result: Comparison) -> tuple[str, ...]:
    lines = [
        f"A = {result.name_a}   B = {result.name_b}   ({result.n_common} paired questions"
        + ("" if result.questions == "all" else f", {result.questions} only")
        + ")",
        comparison_methods(result),
    ]
    if result.only_a or result.only_b:
        lines.append(
            f"excluded: {len(result.only_a)} question(s) only in A, {len(result.only_b)} only in B"
        )
    return tuple(lines)


def _binary_block(
    row: MetricComparison,
    table: McNemarResult,
    confidence: float,
    alpha: float,
    max_ids: int | None = SHOWN_IDS,
) -> Text:
    lines = [
        f"paired view of {row.metric} (n = {row.n}):",
        f"  {'':14}{'B = 1':>8}{'B = 0':>8}",
        f"  {'A = 1':14}{table.both:>8}{table.a_only:>8}",
        f"  {'A = 0':14}{table.b_only:>8}{table.neither:>8}",
        f"  concordant {table.both + table.neither}/{row.n}: they carry no information about "
        "which run is better",
        f"  A only {table.a_only}, B only {table.b_only}: McNemar exact two-sided p = "
        f"{fmt_p(table.pvalue)}",
        "  questions that differ: "
        + (cut_ids(table.discordant_ids, max_ids, hint=ALL_IDS_HINT) or "none"),
        f"  observed discordance {row.discordance:.3f}; {_mde_text(row)}",
        "  interval width vs n (first n questions by id):",
        f"  {'n':>6}{'B - A':>10}{_level(confidence):>22}{'width':>9}",
    ]
    for sub in row.subsamples:
        ci = sub.confidence_interval
        lines.append(
            f"  {sub.n:>6}{sub.statistic:>+10.3f}{_ci(ci.low, ci.high):>22}{sub.width:>9.3f}"
        )
    return Text(tuple(lines), monospace=True)


def _mde_text(row: MetricComparison) -> str:
    """The row's MDE and what it assumes, in one phrase."""
    if row.mde is None:
        return f"MDE (80% power): none detectable, {row.mde_assumption}"
    return f"MDE (80% power) {row.mde:.3f}, {row.mde_assumption}"


def _ruled_out(result: Comparison) -> Text:
    """Per row: what the interval rules out (no change found) and the MDE, with assumptions."""
    lines = [
        f"what each comparison rules out ({100 * result.confidence:g}% CI) and the smallest "
        f"change its verdict detects with 80% power (MDE, alpha {result.alpha:g}):"
    ]
    for row in result.metrics:
        ci = row.confidence_interval
        found = (
            f"{row.verdict}, {row.statistic:+.3f} {_ci(ci.low, ci.high)}"
            if row.verdict == "SIGNIFICANT"
            else no_change_sentence(ci.low, ci.high, result.confidence)
        )
        lines.append(f"  {row.metric}: {found}; {_mde_text(row)}{zero_width_words(row)}")
    return Text(tuple(lines))


def comparison_report(
    result: Comparison, max_ids: int | None = SHOWN_IDS, *, full: bool = True
) -> Report:
    """The paired comparison of two runs (``ragaudit compare A B``); the questions that
    differ on a 0/1 metric are cut to the first ``max_ids`` with the rest counted (None:
    every id, ``--all-ids``; the JSON payload holds every id).

    ``full=False`` (what ``compare`` prints without ``--full``) keeps the first screen: who
    is A and B with the seed, what differs between their configurations, the table, the
    verdict sentence (:func:`verdict_sentence`) and the judge caveat; the JSON payload is the
    same either way.
    """
    values: tuple[tuple[Any, ...], ...] = tuple(
        (
            row.metric,
            row.n,
            row.mean_a,
            row.mean_b,
            row.statistic,
            *_interval_and_p(row),
            row.verdict,
        )
        for row in result.metrics
    )
    rows: tuple[tuple[str, ...], ...] = tuple(
        (
            m,
            str(n),
            f"{a:.3f}",
            f"{b:.3f}",
            f"{d:+.3f}",
            _ci(lo, hi),
            short_method(cm),
            fmt_p(p),
            short_method(pm),
            v,
        )
        for m, n, a, b, d, lo, hi, cm, p, pm, v in values
    )
    # saved runs: judged@k of both at their common depth, beside the tested rows
    judged_cells, judged_values = judged_comparison_row(result.judged)
    if judged_cells:
        rows, values = (*rows, judged_cells), (*values, judged_values)
    level = _level(result.confidence)
    table = Table(
        (
            "metric",
            "n",
            "mean A",
            "mean B",
            "B - A",
            level,
            "CI method",
            "p",
            "p method",
            "verdict",
        ),
        rows,
        align="lrrrrrlrll",
        only=("table", "markdown", "html"),
    )
    csv_table = Table(
        ("metric", "n", "mean_a", "mean_b", "diff", *_CSV_INTERVAL_AND_P, "verdict"),
        tuple(tuple(str(c) for c in v) for v in values),
        values=values,
        only=("csv",),
    )
    header = _header(result)
    if not full:  # the seed stays on the first line; the methods line is --full's
        header = (f"{header[0]}   seed {result.seed}", *header[2:])
    sections = [Section("", (Text(header),)), Section("", (table, csv_table))]
    differs = confounding_lines(result.config_differences)
    if differs:
        sections.insert(1, Section("", (Text(differs),)))
    if not full:
        sections.append(Section("", (Text((verdict_sentence(result),)),)))
        note = judged_rate_note(row.metric for row in result.metrics)
        if note is not None:
            sections.append(Section("", (Text((note,)),)))
        if result.judged is not None and result.judged.warnings():  # stderr has them too
            sections.append(Section("", (judged_notes(result.judged.warnings()),)))
        sections.append(Section("", (Text((FULL_HINT,)),)))
        compact = Report("", tuple(sections), data=result.to_dict())
        return with_noise_sections(compact, dict(result.noise), result.confidence)
    for row in result.metrics:
        if row.mcnemar is not None:
            block = _binary_block(row, row.mcnemar, result.confidence, result.alpha, max_ids)
            sections.append(Section("", (block,)))
    sections.append(Section("", (_ruled_out(result),)))
    skewed = tuple(note for row in result.metrics if (note := row.skew_warning) is not None)
    if skewed:  # the sign-flip test's symmetry assumption (issue 32)
        sections.append(Section("", (Text(skewed),)))
    note = judged_rate_note(row.metric for row in result.metrics)
    if note is not None:
        sections.append(Section("", (Text((note,)),)))
    if judged_cells:  # each run at its own k too (the row is at their common depth)
        lines = (JUDGED_ROW_NOTE, *judged_run_lines(result.judged))
        sections.append(Section("", (Text(lines),)))
    if result.judged is not None and result.judged.warnings():
        sections.append(Section("", (judged_notes(result.judged.warnings()),)))
    sections.append(Section("", (Text((_verdict_rule(result.alpha),)),)))
    report = Report("", tuple(sections), data=result.to_dict())
    # compare --cluster-by / --judge-repeats: their tables follow the comparison
    return with_noise_sections(report, dict(result.noise), result.confidence)


def matrix_report(result: PairwiseMatrix) -> Report:
    """Every pair of runs on one metric, Holm-adjusted (``ragaudit compare --all``)."""
    values = tuple(
        (
            result.runs[i],
            result.runs[j],
            row.n,
            row.statistic,
            *_interval_and_p(row),
            adjusted,
        )
        for (i, j, row), adjusted in zip(result.pairs, result.adjusted_pvalues, strict=True)
    )
    pairs = Table(
        (
            "run A",
            "run B",
            "n",
            "B - A",
            _level(result.confidence),
            "CI method",
            "p",
            "p method",
            "p (Holm)",
        ),
        tuple(
            (
                a,
                b,
                str(n),
                f"{d:+.3f}",
                _ci(lo, hi),
                short_method(cm),
                fmt_p(p),
                short_method(pm),
                fmt_p(q),
            )
            for a, b, n, d, lo, hi, cm, p, pm, q in values
        ),
        align="llrrrlrlr",
        only=("table", "markdown", "html"),
    )
    csv_pairs = Table(
        ("run_a", "run_b", "n", "diff", *_CSV_INTERVAL_AND_P, "p_holm"),
        tuple(tuple(str(c) for c in v) for v in values),
        values=values,
        only=("csv",),
    )
    distinguishable = set(result.distinguishable)
    title = (
        f"{result.metric}: {len(result.runs)} runs, {len(result.pairs)} pairs | seed "
        f"{result.seed} | {result.n_resamples} bootstrap resamples | {result.n_permutations} "
        f"permutations | Holm-Bonferroni over "
        f"{'all pairs' if result.compared == 'all' else 'the comparisons with the first run'}"
        f", alpha {result.alpha:g}"
    )
    found = [f"{a} vs {b}" for a, b in result.distinguishable]
    summary = f"distinguishable (Holm-adjusted p < {result.alpha:g} and CI excludes 0): " + (
        "; ".join(found) if found else "none"
    )
    # Matrix cell (row i, column j): mean difference column - row; '*' marks distinguishable.
    cell: dict[tuple[int, int], str] = {}
    for i, j, row in result.pairs:
        mark = "*" if (result.runs[i], result.runs[j]) in distinguishable else ""
        cell[(i, j)] = f"{row.statistic:+.3f}{mark}"
        cell[(j, i)] = f"{-row.statistic:+.3f}{mark}"
    names = result.runs
    matrix = Table(
        ("column - row", *names),
        tuple(
            (name, *(cell.get((i, j), ".") for j in range(len(names))))
            for i, name in enumerate(names)
        ),
    )
    report = Report(
        "",
        (
            Section("", (Text((title,)),)),
            Section("", (pairs, csv_pairs)),
            Section("", (matrix,)),
            Section("", (Text((summary,)),)),
        ),
        data=result.to_dict(),
    )
    # saved runs on a retrieval metric: each run's judged@k (the pairs' gaps are in the JSON)
    return with_judged_runs(report, result.judged, pair_lines=False)


def plan_report(rows: list[PlanningRow], power: float, alpha: float) -> Report:
    """The planning table: minimum detectable effect by golden-set size and disagreement."""
    ns = list(dict.fromkeys(r.n for r in rows))
    rates = list(dict.fromkeys(r.disagree for r in rows))
    mde = {(r.n, r.disagree): r.mde for r in rows}
    table = Table(
        ("n questions", *(f"disagree {100 * d:g}%" for d in rates)),
        tuple(
            (str(n), *("-" if mde[(n, d)] is None else f"{mde[(n, d)]:.2f}" for d in rates))
            for n in ns
        ),
        align="r" * (len(rates) + 1),
        values=tuple((n, *(mde[(n, d)] for d in rates)) for n in ns),
    )
    head = Text(
        (
            f"minimum detectable effect on a binary metric ({100 * power:g}% power, alpha "
            f"{alpha:g}, McNemar exact test, exact power - no simulation)",
            "by how often the two systems disagree at all; '-' = not detectable",
        )
    )
    data = [{"n": r.n, "disagree": r.disagree, "mde": r.mde} for r in rows]
    return Report("", (Section("", (head, table)),), data=data)


def agreement_report(result: AgreementResult, name_a: str, name_b: str) -> Report:
    """Agreement of two labellers: raw agreement, kappa, weighted kappa, confusion matrix."""
    data = {
        "labels_a": name_a,
        "labels_b": name_b,
        "n_items": result.n_items,
        "n_questions": result.n_questions,
        "only_a": result.only_a,
        "only_b": result.only_b,
        "raw_agreement": result.raw_agreement,
        "kappa": result.kappa,
        "weighted_kappa_quadratic": result.weighted_kappa,
        "categories": list(result.categories),
        "confusion": [list(row) for row in result.confusion],
    }
    head = Text(
        (
            f"A = {name_a}   B = {name_b}",
            f"items labelled by both: {result.n_items} across {result.n_questions} questions "
            f"(excluded: {result.only_a} only in A, {result.only_b} only in B)",
        )
    )
    scores = KeyValues(
        (
            ("raw agreement", f"{result.raw_agreement:.3f}"),
            ("Cohen's kappa", f"{result.kappa:.3f}"),
            ("quadratic-weighted kappa", f"{result.weighted_kappa:.3f}"),
        )
    )
    confusion = Table(
        ("grade A \\ grade B", *(str(c) for c in result.categories)),
        tuple(
            (str(g), *(str(x) for x in row))
            for g, row in zip(result.categories, result.confusion, strict=True)
        ),
        align="r" * (len(result.categories) + 1),
    )
    return Report(
        "",
        (Section("", (head,)), Section("", (scores,)), Section("", (confusion,))),
        data=data,
    )


def baseline_report(
    target: str,
    source: str,
    new: PerQuestionMetrics,
    old: PerQuestionMetrics | None,
    unchanged: bool,
) -> Report:
    """What ``ragaudit baseline update`` wrote: the file, its source and the means it moved.

    >>> from ragaudit.data.per_question import PerQuestionMetrics
    >>> from ragaudit.reports.renderer import render_text
    >>> new = PerQuestionMetrics("k3", {"q1": {"hit": 1.0}, "q2": {"hit": 0.0}})
    >>> print(render_text(baseline_report("b.json", "k3.json", new, None, False)), end="")
    baseline b.json <- k3.json (2 questions; no previous baseline)
    metric  before    now
    hit          -  0.500
    """
    before = old.means() if old is not None else {}
    after = new.means()
    names = list(dict.fromkeys([*after, *before]))
    values = tuple((m, before.get(m), after.get(m)) for m in names)
    state = (
        "unchanged: the same bytes"
        if unchanged
        else "replaces the previous baseline"
        if old is not None
        else "no previous baseline"
    )
    head = Text((f"baseline {target} <- {source} ({len(new.values)} questions; {state})",))
    table = Table(
        ("metric", "before", "now"),
        tuple(
            (m, "-" if b is None else f"{b:.3f}", "-" if a is None else f"{a:.3f}")
            for m, b, a in values
        ),
        values=values,
    )
    data = {
        "baseline": target,
        "source": source,
        "questions": len(new.values),
        "unchanged": unchanged,
        "previous": old is not None,
        "means": {m: {"before": b, "now": a} for m, b, a in values},
    }
    return Report("", (Section("", (head, table)),), data=data)
