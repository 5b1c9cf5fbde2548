"""``ragaudit compare``: is the difference between two saved runs real?"""

from __future__ import annotations

import click

from ragaudit.cli._options import format_option, render_json, seed_option
from ragaudit.data.records import load_saved_run
from ragaudit.diagnose.noise import (
    ClusteredComparison,
    JudgeNoiseComparison,
    clustered_comparison,
    judge_noise_comparison,
    repeat_scores,
)
from ragaudit.exceptions import InputError
from ragaudit.reports.noise import as_block, clustered_lines, judge_noise_lines
from ragaudit.stats.compare import (
    Comparison,
    MetricComparison,
    PairwiseMatrix,
    compare_all,
    compare_runs,
)

__all__ = ["command", "noise_sections", "render_comparison", "render_matrix"]


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _ci(low: float, high: float) -> str:
    return f"[{low:+.3f}, {high:+.3f}]"


def _level(confidence: float) -> str:
    return f"{100 * confidence:g}% CI"


def _verdict_rule(alpha: float) -> str:
    return (
        f"verdict: SIGNIFICANT = p < {alpha:g} and the CI excludes 0; borderline = only one "
        f"of those, or p < {2 * alpha:g}; no evidence = neither."
    )


def _header(result: Comparison) -> list[str]:
    lines = [
        f"A = {result.name_a}   B = {result.name_b}   ({result.n_common} paired questions"
        + ("" if result.questions == "all" else f", {result.questions} only")
        + ")",
        f"seed {result.seed} | paired bootstrap: {result.n_resamples} resamples, "
        f"{result.ci_method} interval | permutation p: exact sign flips when n <= "
        f"{result.exact_max_n}, else {result.n_permutations} random flips, (count+1)/(trials+1)",
    ]
    if result.only_a or result.only_b:
        lines.append(
            f"excluded: {len(result.only_a)} question(s) only in A, {len(result.only_b)} only in B"
        )
    return lines


def _binary_block(row: MetricComparison, confidence: float, alpha: float) -> list[str]:
    table = row.mcnemar
    if table is None:
        return []
    lines = [
        f"paired view of {row.metric} (n = {row.n}):",
        f"  {'':14}{'B = 1':>8}{'B = 0':>8}",
        f"  {'A = 1':14}{table.both:>8}{table.a_only:>8}",
        f"  {'A = 0':14}{table.b_only:>8}{table.neither:>8}",
        f"  concordant {table.both + table.neither}/{row.n}: they carry no information about "
        "which run is better",
        f"  A only {table.a_only}, B only {table.b_only}: McNemar exact two-sided p = "
        f"{table.pvalue:.3f}",
        f"  questions that differ: {', '.join(table.discordant_ids) or 'none'}",
        f"  observed discordance {row.discordance:.3f}; exact power at alpha {alpha:g} to detect "
        f"an effect of {row.observed_effect:.3f} (the observed one): {row.power:.3f}; "
        f"of {row.discordance:.3f} (the largest this discordance allows): "
        f"{row.power_at_discordance:.3f}",
        "  interval width vs n (first n questions by id):",
        f"  {'n':>6}{'B - A':>10}{_level(confidence):>22}{'width':>9}",
    ]
    for sub in row.subsamples:
        ci = sub.confidence_interval
        lines.append(
            f"  {sub.n:>6}{sub.statistic:>+10.3f}{_ci(ci.low, ci.high):>22}{sub.width:>9.3f}"
        )
    return lines


def render_comparison(result: Comparison, output_format: str) -> str:
    """Render a :class:`~ragaudit.stats.Comparison` as ``table``, ``markdown`` or ``json``."""
    if output_format == "json":
        return render_json(result.to_dict())
    level = _level(result.confidence)
    header = ("metric", "n", "mean A", "mean B", "B - A", level, "p", "verdict")
    rows = [
        (
            row.metric,
            str(row.n),
            f"{row.mean_a:.3f}",
            f"{row.mean_b:.3f}",
            f"{row.statistic:+.3f}",
            _ci(row.confidence_interval.low, row.confidence_interval.high),
            _p(row.pvalue),
            row.verdict,
        )
        for row in result.metrics
    ]
    binary = [row for row in result.metrics if row.mcnemar is not None]
    if output_format == "markdown":
        lines = [f"**{line}**" if i == 0 else line for i, line in enumerate(_header(result))]
        lines = [line + "  " for line in lines]
        lines += [
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join(["---"] + ["---:"] * 6 + ["---"]) + "|",
        ]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        for row in binary:
            lines += ["", "```", *_binary_block(row, result.confidence, result.alpha), "```"]
        lines += ["", _verdict_rule(result.alpha)]
        return "\n".join(lines) + "\n"
    width = max([len(header[0])] + [len(r[0]) for r in rows])
    ci_width = max(len(level), *(len(r[5]) for r in rows)) if rows else len(level)
    formats = (
        f"{{:<{width}}}",
        "{:>5}",
        "{:>8}",
        "{:>8}",
        "{:>8}",
        f"{{:>{ci_width + 2}}}",
        "{:>8}",
        "   {}",
    )
    lines = [*_header(result), ""]
    for cells in [header, *rows]:
        lines.append("".join(f.format(c) for f, c in zip(formats, cells, strict=True)).rstrip())
    for row in binary:
        lines += ["", *_binary_block(row, result.confidence, result.alpha)]
    lines += ["", _verdict_rule(result.alpha)]
    return "\n".join(lines) + "\n"


def render_matrix(result: PairwiseMatrix, output_format: str) -> str:
    """Render a :class:`~ragaudit.stats.PairwiseMatrix` (``compare --all``)."""
    if output_format == "json":
        return render_json(result.to_dict())
    level = _level(result.confidence)
    header = ("run A", "run B", "n", "B - A", level, "p", "p (Holm)")
    rows = [
        (
            result.runs[i],
            result.runs[j],
            str(row.n),
            f"{row.statistic:+.3f}",
            _ci(row.confidence_interval.low, row.confidence_interval.high),
            _p(row.pvalue),
            _p(adjusted),
        )
        for (i, j, row), adjusted in zip(result.pairs, result.adjusted_pvalues, strict=True)
    ]
    distinguishable = set(result.distinguishable)
    title = (
        f"{result.metric}: {len(result.runs)} runs, {len(result.pairs)} pairs | seed "
        f"{result.seed} | {result.n_resamples} bootstrap resamples | {result.n_permutations} "
        f"permutations | Holm-Bonferroni over all pairs, alpha {result.alpha:g}"
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
    if output_format == "markdown":
        lines = [f"**{title}**", "", "| " + " | ".join(header) + " |", "|---|---|" + "---:|" * 5]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        lines += [
            "",
            "| column - row | " + " | ".join(names) + " |",
            "|---|" + "---:|" * len(names),
        ]
        for i, name in enumerate(names):
            lines.append(
                f"| {name} | " + " | ".join(cell.get((i, j), ".") for j in range(len(names))) + " |"
            )
        lines += ["", summary]
        return "\n".join(lines) + "\n"
    name_width = max(len(n) for n in [*names, "run A"])
    column_width = max(10, *(len(n) + 2 for n in names))
    lines = [title, ""]
    formats = (
        f"{{:<{name_width + 2}}}",
        f"{{:<{name_width + 2}}}",
        "{:>5}",
        "{:>9}",
        "{:>20}",
        "{:>9}",
        "{:>10}",
    )
    for cells in [header, *rows]:
        lines.append("".join(f.format(c) for f, c in zip(formats, cells, strict=True)).rstrip())
    lines += [
        "",
        f"{'column - row':<{name_width + 2}}" + "".join(f"{n:>{column_width}}" for n in names),
    ]
    for i, name in enumerate(names):
        lines.append(
            f"{name:<{name_width + 2}}"
            + "".join(f"{cell.get((i, j), '.'):>{column_width}}" for j in range(len(names)))
        )
    lines += ["", summary]
    return "\n".join(lines) + "\n"


@click.command("compare")
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "--all",
    "all_dir",
    type=click.Path(file_okay=False),
    help="Compare every pair of saved runs in this directory (needs one --metric).",
)
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    help="Metric to compare (repeatable); default every metric in both runs.",
)
@click.option(
    "--resamples", type=int, default=10_000, show_default=True, help="Bootstrap resamples."
)
@click.option(
    "--permutations",
    type=int,
    default=10_000,
    show_default=True,
    help="Random sign flips when the permutation test is not exact.",
)
@click.option(
    "--exact-max-n",
    type=int,
    default=20,
    show_default=True,
    help="Enumerate all 2^n sign patterns up to this many questions.",
)
@seed_option()
@click.option(
    "--confidence",
    type=float,
    default=0.95,
    show_default=True,
    help="Confidence level of the interval; alpha = 1 - confidence.",
)
@click.option(
    "--ci",
    "ci_method",
    type=click.Choice(["percentile", "bca"]),
    default="percentile",
    show_default=True,
    help="Bootstrap interval method.",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Compare runs that share fewer than half of their questions.",
)
@click.option(
    "--questions",
    type=click.Choice(["all", "answerable", "unanswerable"]),
    default="all",
    show_default=True,
    help="Which questions of saved runs to compare.",
)
@click.option(
    "--fail-if-worse",
    "gates",
    multiple=True,
    metavar="METRIC",
    help="Exit with code 1 when run B is SIGNIFICANTLY worse than A on METRIC (repeatable): "
    "a regression gate for CI.",
)
@click.option(
    "--cluster-by",
    metavar="source|tag|FIELD",
    help="Questions sharing a gold source, a first tag or a row FIELD are correlated: add "
    "CR1 cluster-robust and cluster-bootstrap intervals, the number of clusters and the "
    "design effect (saved runs only).",
)
@click.option(
    "--judge-repeats",
    "judge_repeats",
    is_flag=True,
    help="Split the variance of judged metrics into question sampling and judge noise, from "
    "the per-repeat verdicts of `ragaudit judge --judge-repeats R` (saved runs only).",
)
@format_option("table", "json", "markdown")
def command(
    runs: tuple[str, ...],
    all_dir: str | None,
    metrics: tuple[str, ...],
    resamples: int,
    permutations: int,
    exact_max_n: int,
    seed: int,
    confidence: float,
    ci_method: str,
    allow_partial: bool,
    questions: str,
    gates: tuple[str, ...],
    cluster_by: str | None,
    judge_repeats: bool,
    output_format: str,
) -> None:
    """Paired comparison of RUN_A and RUN_B (diff = B - A), question by question.

    Each run is a saved run, a JSON {question_id: {metric: value}} file or JSONL lines
    {"id": question_id, metric: value}.  For every metric: paired bootstrap CI, paired
    permutation p-value and a verdict; for 0/1 metrics also McNemar's exact test, the ids of
    the questions that differ and the power the comparison had.
    """
    if (cluster_by or judge_repeats) and all_dir is not None:
        raise InputError("compare: --cluster-by and --judge-repeats need two runs, not --all")
    if gates and all_dir is not None:
        raise InputError("compare: --fail-if-worse needs two runs, not --all")
    if all_dir is not None:
        if runs:
            raise InputError("compare: pass either --all DIR or two runs, not both")
        if len(metrics) != 1:
            raise InputError(f"compare --all: expected exactly one --metric, found {len(metrics)}")
        matrix = compare_all(
            all_dir,
            metrics[0],
            n_resamples=resamples,
            n_permutations=permutations,
            confidence=confidence,
            method=ci_method,
            seed=seed,
            exact_max_n=exact_max_n,
            allow_partial=allow_partial,
        )
        click.echo(render_matrix(matrix, output_format), nl=False)
        return
    if len(runs) != 2:
        raise InputError(f"compare: expected two runs RUN_A RUN_B, found {len(runs)}")
    result = compare_runs(
        runs[0],
        runs[1],
        list(metrics) or None,
        n_resamples=resamples,
        n_permutations=permutations,
        confidence=confidence,
        method=ci_method,
        seed=seed,
        exact_max_n=exact_max_n,
        allow_partial=allow_partial,
        questions=questions,
    )
    extra = noise_sections(
        runs[0], runs[1], result, cluster_by=cluster_by, judge_repeats=judge_repeats,
        metrics=metrics, questions=questions, allow_partial=allow_partial,
    )  # fmt: skip
    if output_format == "json":
        click.echo(render_json({**result.to_dict(), **{k: v.to_dict() for k, v in extra.items()}}))
    else:
        text = render_comparison(result, output_format)
        for part in extra.values():
            if isinstance(part, ClusteredComparison):
                lines = clustered_lines(part, result.confidence)
            else:
                lines = judge_noise_lines(part, result.confidence)
            text += as_block(lines, output_format)
        click.echo(text, nl=False)
    if gates:
        _apply_gates(result, gates)


def noise_sections(
    path_a: str,
    path_b: str,
    result: Comparison,
    *,
    cluster_by: str | None,
    judge_repeats: bool,
    metrics: tuple[str, ...] = (),
    questions: str = "all",
    allow_partial: bool = False,
) -> dict[str, ClusteredComparison | JudgeNoiseComparison]:
    """The clustered and judge-noise analyses of two saved runs, keyed for JSON output."""
    out: dict[str, ClusteredComparison | JudgeNoiseComparison] = {}
    if not cluster_by and not judge_repeats:
        return out
    run_a, run_b = load_saved_run(path_a), load_saved_run(path_b)
    if cluster_by:
        out["clustered"] = clustered_comparison(
            run_a, run_b, cluster_by, [row.metric for row in result.metrics],
            questions=questions, confidence=result.confidence, n_resamples=result.n_resamples,
            seed=result.seed, allow_partial=allow_partial,
        )  # fmt: skip
    if judge_repeats:
        judged = (
            [
                row.metric
                for row in result.metrics
                if repeat_scores(run_a, row.metric) or repeat_scores(run_b, row.metric)
            ]
            or [m for m in metrics]
            or ["correct"]
        )
        for metric in judged:
            key = "judge_noise" if len(judged) == 1 else f"judge_noise_{metric}"
            out[key] = judge_noise_comparison(run_a, run_b, metric, confidence=result.confidence)
    return out


def _apply_gates(result: Comparison, gates: tuple[str, ...]) -> None:
    """Exit 1 when B is significantly worse than A on a gated metric (diagnostic on stderr).

    Only a SIGNIFICANT verdict with a negative difference fails the gate: "no evidence" of a
    change is not a regression, and a borderline one is reported but does not fail.
    """
    by_name = {row.metric: row for row in result.metrics}
    missing = [g for g in gates if g not in by_name]
    if missing:
        raise InputError(
            f"--fail-if-worse: {', '.join(missing)} not compared; compared metrics: "
            f"{', '.join(by_name) or 'none'}"
        )
    failed = [
        by_name[g]
        for g in gates
        if by_name[g].verdict == "SIGNIFICANT" and by_name[g].statistic < 0
    ]
    for row in failed:
        low, high = row.confidence_interval.low, row.confidence_interval.high
        click.echo(
            f"ragaudit: gate failed: {row.metric} is worse in B by {row.statistic:+.3f} "
            f"(CI [{low:+.3f}, {high:+.3f}], p {_p(row.pvalue)})",
            err=True,
        )
    if failed:
        raise SystemExit(1)
