"""Report sections for the noise analyses: clustered intervals, judge noise, calibration.

Pure functions from result objects to lines of text, wrapped as monospace
:class:`~ragaudit.reports.report.Text` blocks of a :class:`~ragaudit.reports.report.Report`
(so every output format shows them); JSON output uses the objects' ``to_dict``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ragaudit.diagnose.calibration import Calibration
from ragaudit.diagnose.judge_noise import JudgeNoiseComparison
from ragaudit.diagnose.noise import (
    DEFF_THRESHOLD,
    METHODS,
    PAIRED_METHODS,
    ClusteredComparison,
    clustering_summary,
    describe_clustering,
    few_clusters_caveat,
)
from ragaudit.diagnose.planning import RunPlan
from ragaudit.reports.report import Report, Section, Table, Text
from ragaudit.stats.cluster_betting import METHOD as CLUSTER_BETTING
from ragaudit.stats.judge_noise import JudgeNoiseResult
from ragaudit.stats.power import MAX_N
from ragaudit.stats.resampling import ConfidenceInterval
from ragaudit.stats.sample_size import SampleSize

__all__ = [
    "calibration_lines",
    "calibration_report",
    "calibration_summary",
    "clustered_section",
    "judge_noise_lines",
    "noise_section",
    "sample_size_report",
    "with_noise_sections",
]


def _ci(ci: ConfidenceInterval, signed: bool = True) -> str:
    spec = "+.3f" if signed else ".3f"
    return f"[{ci.low:{spec}}, {ci.high:{spec}}]"


def with_noise_sections(
    report: Report,
    parts: dict[str, ClusteredComparison | JudgeNoiseComparison],
    confidence: float,
) -> Report:
    """``report`` with a section per clustered / judge-noise analysis, and their JSON."""
    if not parts:
        return report
    sections = list(report.sections)
    for part in parts.values():
        if isinstance(part, ClusteredComparison):
            sections.append(clustered_section(part, confidence))
        else:
            lines = judge_noise_lines(part, confidence)
            sections.append(
                Section(f"Judge noise: {part.metric}", (Text(tuple(lines), monospace=True),))
            )
    data: Any = report.data
    if isinstance(data, dict):
        data = {**data, **{key: part.to_dict() for key, part in parts.items()}}
    return replace(report, sections=tuple(sections), data=data)


#: Short names of the interval methods, for the clustered table's method column.
_SHORT = {
    "Clopper-Pearson exact": "Clopper-Pearson",
    "betting (Waudby-Smith-Ramdas)": "betting",
    "McNemar exact inverted": "McNemar exact",
    CLUSTER_BETTING: "cluster betting",
}


def clustered_section(result: ClusteredComparison, confidence: float) -> Section:
    """The clustered-interval table of ``compare``/``funnel``/``report --cluster-by``.

    For a mean (``funnel``/``report``) the naive column is the interval the dashboard prints
    for the same number, by the same function; the clustered column bets over whole clusters
    (:mod:`ragaudit.stats.cluster_betting`) and is never narrower.  For ``compare``'s paired
    differences only the design effect (:func:`_paired_clustered_section`).
    """
    if result.paired:
        return _paired_clustered_section(result)
    level = f"{100 * confidence:g}%"
    head = Text(
        (
            f"{level} intervals. {METHODS}. Cluster betting: Waudby-Smith & Ramdas (2024) "
            "over clusters, valid for any correlation within a cluster when the clusters are "
            "an independent sample; it costs width (one draw per cluster).",
        )
    )
    title = f"Clustered by {result.by}"
    if not result.rows:
        return Section(title, (head, Text(("no metric has questions in at least 2 clusters",))))
    spec = ".3f"
    rows, values = [], []
    for row in result.rows:
        r, naive, clustered = row.result, row.naive, row.clustered
        if naive is None or clustered is None:  # a mean always has both (see _analyse)
            continue
        deff = row.design_effect
        methods = (
            f"{_SHORT.get(naive.method, naive.method)} / "
            f"{_SHORT.get(clustered.method, clustered.method)}"
        )
        rows.append(
            (
                row.metric, str(r.n), str(r.n_clusters), f"{r.statistic:{spec}}",
                _ci(naive.confidence_interval, result.paired),
                _ci(clustered.confidence_interval, result.paired),
                methods,
                "n/a" if deff is None else f"{deff:.2f}",
                f"{row.effective_n:.0f}",
            )
        )  # fmt: skip
        values.append(
            (
                row.metric, r.n, r.n_clusters, r.statistic,
                naive.confidence_interval.low, naive.confidence_interval.high, naive.method,
                clustered.confidence_interval.low, clustered.confidence_interval.high,
                clustered.method, deff, row.effective_n,
            )
        )  # fmt: skip
    table = Table(
        ("metric", "n", "G", "B - A" if result.paired else "mean", f"naive {level}",
         f"clustered {level}", "method (naive / clustered)", "deff", "n / deff"),
        tuple(rows),
        "lrrrrrlrr",
        only=("table", "markdown", "html"),
    )  # fmt: skip
    csv_table = Table(
        ("metric", "n", "clusters", "statistic", "naive_low", "naive_high", "naive_method",
         "clustered_low", "clustered_high", "clustered_method", "design_effect",
         "effective_n"),
        tuple(tuple("" if v is None else str(v) for v in row) for row in values),
        values=tuple(values),
        only=("csv",),
    )  # fmt: skip
    return Section(title, (head, table, csv_table, Text(_notes(result))))


def _paired_clustered_section(result: ClusteredComparison) -> Section:
    """``compare --cluster-by``'s block: the design effect of each ``B - A``, no interval.

    One number, one interval (issue 32): the clustered interval of ``B - A`` is compare's own
    row, the cluster sign-flip test inverted beside its verdict; a second one here (the
    cluster betting interval, or the naive one) would disagree with it.
    """
    title = f"Clustered by {result.by}"
    head = Text((f"{PAIRED_METHODS}.",))
    if not result.rows:
        return Section(title, (head, Text(("no metric has questions in at least 2 clusters",))))
    rows, values = [], []
    for row in result.rows:
        r, deff = row.result, row.design_effect
        rows.append(
            (
                row.metric, str(r.n), str(r.n_clusters), f"{r.statistic:+.3f}",
                "n/a" if deff is None else f"{deff:.2f}", f"{row.effective_n:.0f}",
            )
        )  # fmt: skip
        values.append((row.metric, r.n, r.n_clusters, r.statistic, deff, row.effective_n))
    table = Table(
        ("metric", "n", "G", "B - A", "deff", "n / deff"),
        tuple(rows),
        "lrrrrr",
        only=("table", "markdown", "html"),
    )
    csv_table = Table(
        ("metric", "n", "clusters", "statistic", "design_effect", "effective_n"),
        tuple(tuple("" if v is None else str(v) for v in row) for row in values),
        values=tuple(values),
        only=("csv",),
    )
    return Section(title, (head, table, csv_table, Text(_notes(result))))


def _notes(result: ClusteredComparison) -> tuple[str, ...]:
    """The design-effect notes under a clustered table."""
    notes = [
        clustering_summary(row, result.by, paired=result.paired)
        for row in result.rows
        if row.correlated or row.design_effect is None or row.design_effect < 1
    ]
    if not any(row.correlated for row in result.rows):
        notes.append(
            f"no design effect above {DEFF_THRESHOLD:g}: no sign that questions of one "
            f"{result.by} succeed or fail together"
        )
    caveat = few_clusters_caveat(min(row.result.n_clusters for row in result.rows))
    if caveat is not None:
        notes.append(f"note: {caveat}; the clustered interval does not depend on it")
    notes.append(
        "deff = design effect (CR1 / naive variance, estimated from the clusters; below 1 it "
        "is counted as 1); n / deff = the independent questions the n are worth; the clustered "
        "interval does not use deff, so it stays valid when deff is misestimated from few "
        "clusters"
    )
    return tuple(notes)


def _share_line(name: str, result: JudgeNoiseResult) -> str:
    halve = result.repeats_to_halve_judge_share
    share_text = (
        f"{halve} repeats would halve its share" if halve is not None else "its share cannot halve"
    )
    return (
        f"  {name:<8}{result.statistic:>+8.3f}{result.n_questions:>5}{result.n_repeats:>4}"
        f"{100 * result.between_share:>11.1f}%{100 * result.judge_share:>9.1f}%"
        f"{_ci(result.confidence_interval):>20}{_ci(result.sampling_only_interval):>20}"
        f"   {result.repeats_to_halve_judge_variance} repeats halve the judge variance; "
        f"{share_text}; {result.method}"
    )


def judge_noise_lines(result: JudgeNoiseComparison, confidence: float) -> list[str]:
    """The judge-noise table of ``compare --judge-repeats``."""
    level = f"{100 * confidence:g}%"
    lines = [
        f"judge noise in {result.metric}: variance of the judged mean = between-question "
        "sigma_b^2/n + judge sigma_w^2/(nR) (one-way random effects; Miller 2024, section 3)",
        f"  {'':<8}{'mean':>8}{'n':>5}{'R':>4}{'questions':>12}{'judge':>10}"
        f"{f'{level} CI (both)':>20}{'questions only':>20}",
    ]
    for name, part in (("A", result.a), ("B", result.b), ("B - A", result.difference)):
        if part is None:
            lines.append(f"  {name:<8}no usable repeats")
        else:
            lines.append(_share_line(name, part))
    if result.dropped:
        lines.append(
            f"  {result.dropped} question(s) left out: a repeat failed or was missing in a run"
        )
    return lines


def calibration_lines(result: Calibration) -> list[str]:
    """The agreement table and the three intervals of ``ragaudit calibrate``."""
    (tp, fn), (fp, tn) = result.confusion
    level = f"{100 * result.human_only.confidence:g}%"

    def rate(value: float) -> str:
        return "n/a" if value != value else f"{value:.3f}"

    lines = [
        f"{result.run}: judged {result.metric!r} against human verdicts on "
        f"{result.n_labeled} question(s); {result.n_unlabeled} judged question(s) have no "
        "human verdict",
        result.sampling,
        "",
        f"  {'':16}{'judge 1':>9}{'judge 0':>9}",
        f"  {'human 1':16}{tp:>9}{fn:>9}",
        f"  {'human 0':16}{fp:>9}{tn:>9}",
        f"  Cohen's kappa {result.kappa:.3f} | true positive rate {rate(result.tpr)} | false "
        f"positive rate {rate(result.fpr)}",
        "",
        f"  {'interval for the true rate':<30}{'estimate':>9}{f'{level} CI':>18}   what it is",
    ]
    parts = [result.ppi, result.ppi_small, result.human_only, result.judge_only]
    names = ["PPI++ (calibrated)", "PPI, small-sample limits", "human labels only", "judge only"]
    for name, part in zip(names, parts, strict=True):
        if part is None:
            lines.append(f"  {name:<30}{'-':>9}{'-':>18}   every judged question has a human label")
            continue
        ci = part.confidence_interval
        lines.append(f"  {name:<30}{part.statistic:>9.3f}{_ci(ci, False):>18}   {part.label}")
    lines.append(
        "  PPI++: Angelopoulos et al. (2023, Science) with power tuning (Angelopoulos, Duchi & "
        "Zrnic 2024); valid however biased the judge is"
    )
    if result.n_labeled < 100:
        lines.append(
            f"  caution: with {result.n_labeled} human labels PPI++ is a normal approximation "
            "that can undercover (0.54-0.86 in simulations with 16 labels and rates 0.8-0.95, "
            "where it sees few disagreements); the small-sample row (Wilson + Tango combined "
            "by MOVER, Zou & Donner 2008) covered at least 0.95 there"
        )
    return lines


def calibration_summary(result: Calibration) -> str:
    """One line: the calibrated rate, what the judge alone says, and how well they agree.

    The line ``report`` and the audit text print; :func:`calibration_lines` has the detail.
    """
    level = f"{100 * result.judge_only.confidence:g}%"

    def shown(part: Any) -> str:
        ci = part.confidence_interval
        return f"{part.statistic:.3f} {_ci(ci, False)}"

    calibrated = (
        f"{result.metric} calibrated (PPI++) {shown(result.ppi)}"
        if result.ppi is not None
        else f"every judged question has a human verdict: {result.metric} from the human "
        f"labels {shown(result.human_only)}"
    )
    small = (
        ""
        if result.ppi_small is None
        else f", with small-sample limits {_ci(result.ppi_small.confidence_interval, False)}"
    )
    return (
        f"against {result.n_labeled} human verdict(s): {calibrated}{small}; judge only "
        f"{shown(result.judge_only)} (assumes the judge is always right); human labels only "
        f"{shown(result.human_only)}; {level} intervals; Cohen's kappa judge vs humans "
        f"{result.kappa:.3f}"
    )


def noise_section(
    run: str,
    clustered: ClusteredComparison | None,
    calibration: Calibration | None,
    confidence: float = 0.95,
) -> Section | None:
    """The report page's "where the noise comes from" section for one run (None if empty):
    the clustering line and table (``--cluster-by``), the calibration line and table
    (``--human``)."""
    blocks: list[Any] = []
    if clustered is not None:
        blocks.append(Text((describe_clustering(clustered),)))
        blocks.extend(clustered_section(clustered, confidence).blocks)
    if calibration is not None:
        blocks.append(Text((calibration_summary(calibration),)))
        blocks.append(Text(tuple(calibration_lines(calibration)), monospace=True))
    if not blocks:
        return None
    return Section(f"Where the noise comes from: {run}", tuple(blocks))


def calibration_report(result: Calibration) -> Report:
    """The report of ``ragaudit calibrate``."""
    section = Section("", (Text(tuple(calibration_lines(result)), monospace=True),))
    return Report("", (section,), data=result.to_dict())


def sample_size_report(plan: SampleSize, source: RunPlan | None = None) -> Report:
    """``ragaudit plan --effect`` / ``--runs``: the questions needed."""
    lines = []
    data: dict[str, Any] = {
        "effect": plan.effect,
        "disagree": plan.disagree,
        "power": plan.target_power,
        "alpha": plan.alpha,
        "design_effect": plan.design_effect,
        "n_independent": plan.n_independent,
        "n": plan.n,
        "achieved_power": None if plan.n is None else plan.power,
    }
    if source is not None:
        lines.append(
            f"from the runs: {source.n_observed} paired questions on {source.metric!r}; they "
            f"disagree on {100 * source.disagree:.1f}%, observed effect B - A "
            f"{source.observed_effect:+.3f}"
            + (
                f"; {source.n_clusters} clusters, observed design effect {source.design_effect:.2f}"
                if source.n_clusters is not None
                else ""
            )
        )
        data.update(
            metric=source.metric,
            n_observed=source.n_observed,
            observed_effect=source.observed_effect,
            n_clusters=source.n_clusters,
        )
    lines.append(
        f"to detect an effect of {plan.effect:.3g} when the systems disagree on "
        f"{100 * plan.disagree:.3g}% of questions ({100 * plan.target_power:g}% power, alpha "
        f"{plan.alpha:g}, McNemar exact test, exact power):"
    )
    if plan.n is None or plan.n_independent is None:
        lines.append(
            f"  not reachable with fewer than {MAX_N:,} questions (the largest size planned)"
        )
    else:
        lines.append(f"  {plan.n_independent} independent questions (exact power {plan.power:.3f})")
        if plan.design_effect != 1.0:
            lines.append(
                f"  {plan.n} questions with design effect {plan.design_effect:.2f} "
                "(clustered questions carry less information; Miller 2024, section 5)"
            )
    section = Section("", (Text(tuple(lines)),))
    return Report("", (section,), data=data)
