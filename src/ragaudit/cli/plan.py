"""``ragaudit plan``: how many questions a golden set needs (exact McNemar power).

Three modes: the table of minimum detectable effects (default); ``--effect``: the questions
needed for that effect (the reverse direction); ``--runs A B``: plan from two saved runs'
observed disagreement; ``--calls N``: the budget question of repeated runs, how many
questions and repeats of each minimise the interval for N generations (variance components
from a repeated run, ``--from RUN``, or given).  ``--design-effect``,
``--icc/--cluster-size`` or (with ``--runs``) ``--cluster-by`` inflate the answer for
clustered questions.
"""

from __future__ import annotations

from typing import Any

import click

from ragaudit.cli._options import emit, format_option
from ragaudit.exceptions import InputError
from ragaudit.stats.options import PLAN_DISAGREEMENTS, PLAN_SIZES

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command"]


def _numbers(text: str, name: str, kind: type) -> list[Any]:
    values: list[Any] = []
    for part in text.split(","):
        part = part.strip()
        try:
            values.append(kind(part))
        except ValueError:
            raise InputError(
                f"--{name}: expected comma-separated {kind.__name__}s, found {part!r}"
            ) from None
    return values


@click.command("plan")
@click.option(
    "--n",
    "ns",
    default=",".join(map(str, PLAN_SIZES)),
    show_default=True,
    help="Golden-set sizes, comma-separated, each at most 10,000,000 (exact power takes "
    "about a second there; larger sizes are refused).",
)
@click.option(
    "--disagree",
    default=",".join(map(str, PLAN_DISAGREEMENTS)),
    show_default=True,
    help="Discordance rates (share of questions where the systems differ).",
)
@click.option("--power", type=float, default=0.8, show_default=True, help="Target power.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level.")
@click.option(
    "--effect",
    type=float,
    help="Reverse direction: the questions needed to detect this difference in a 0/1 metric "
    "(with one --disagree rate, or with --runs); searched up to 10,000,000 questions, beyond "
    "which the answer is 'not reachable'.",
)
@click.option(
    "--runs",
    nargs=2,
    type=click.Path(dir_okay=False),
    help="Plan from two saved runs: their observed disagreement and effect on --metric.",
)
@click.option("--metric", default="correct", show_default=True, help="0/1 metric for --runs.")
@click.option(
    "--cluster-by",
    metavar="source|tag|FIELD",
    help="With --runs: use the observed design effect of this cluster structure.",
)
@click.option(
    "--design-effect",
    type=float,
    help="Variance inflation from clustered questions (e.g. from compare --cluster-by).",
)
@click.option("--icc", type=float, help="Intra-cluster correlation (with --cluster-size).")
@click.option("--cluster-size", type=float, help="Average questions per cluster (with --icc).")
@click.option(
    "--calls", type=click.IntRange(min=1),
    help="Budget mode: generations to spend (each with its judge call); prints how many "
    "questions and repeats of each give the narrowest interval (with --from RUN or "
    "--between-questions/--within).",
)  # fmt: skip
@click.option(
    "--from", "from_run", type=click.Path(dir_okay=False),
    help="With --calls: a run made with --repeats R >= 2; its variance components of --metric.",
)  # fmt: skip
@click.option("--between-questions", type=float, help="With --calls: variance between questions.")
@click.option(
    "--within", type=float, help="With --calls: variance between generations of one question."
)
@click.option(
    "--judge-variance", type=float, help="With --calls: variance between judge calls on one answer."
)
@click.option(
    "--judge-calls", type=click.IntRange(min=1), help="With --calls: judge calls per answer J."
)
@click.option(
    "--questions-available", type=click.IntRange(min=1),
    help="With --calls: the questions there are (default: unlimited; with --from, the run's).",
)  # fmt: skip
@click.option(
    "--question-cost", type=click.FloatRange(min=0), default=0.0, show_default=True,
    help="With --calls: one more labelled question's cost, in generations.",
)  # fmt: skip
@format_option()
def command(
    ns: str,
    disagree: str,
    power: float,
    alpha: float,
    effect: float | None,
    runs: tuple[str, str] | None,
    metric: str,
    cluster_by: str | None,
    design_effect: float | None,
    icc: float | None,
    cluster_size: float | None,
    calls: int | None,
    from_run: str | None,
    between_questions: float | None,
    within: float | None,
    judge_variance: float | None,
    judge_calls: int | None,
    questions_available: int | None,
    question_cost: float,
    output_format: str,
) -> None:
    """Minimum detectable effect for each golden-set size and disagreement rate, or the
    questions needed for a target --effect (optionally planned from two saved --runs and
    inflated by a design effect for clustered questions).

    Exact power of McNemar's exact two-sided test, minimum effect searched on a 0.01 grid up
    to the disagreement rate (an effect cannot exceed it).
    """
    from ragaudit.data.records import load_saved_runs
    from ragaudit.diagnose.planning import plan_from_runs
    from ragaudit.reports.noise import sample_size_report
    from ragaudit.reports.stats import plan_report
    from ragaudit.stats.power import planning_table
    from ragaudit.stats.sample_size import questions_needed

    if calls is not None:
        given = (between_questions, within, judge_variance)
        budget = _budget(from_run, given, metric)
        from ragaudit.reports.repeats import repeat_plan_report
        from ragaudit.stats.repeat_plan import plan_repeats

        if from_run is not None and questions_available is None:
            questions_available = _run_questions(budget)
        budget_plan = plan_repeats(
            budget, calls, judge_calls=judge_calls, question_cost=question_cost,
            questions_available=questions_available,
        )  # fmt: skip
        emit(repeat_plan_report(budget_plan), output_format)
        return
    if from_run is not None or any(
        v is not None for v in (between_questions, within, judge_variance, judge_calls)
    ):
        raise InputError("--from/--between-questions/--within/--judge-*: apply to --calls N")
    deff = _design_effect(design_effect, icc, cluster_size, cluster_by, runs)
    if runs:
        first, second = load_saved_runs(runs[:2])  # the second read meanwhile when large
        result = plan_from_runs(
            first, second, metric, effect=effect,
            cluster_by=cluster_by, design_effect=deff, power=power, alpha=alpha,
        )  # fmt: skip
        emit(sample_size_report(result.plan, result), output_format)
        return
    if effect is not None:
        rates = _numbers(disagree, "disagree", float)
        if len(rates) != 1:
            raise InputError(f"--effect: expected one --disagree rate, found {len(rates)}")
        plan = questions_needed(
            effect, rates[0], power=power, alpha=alpha, design_effect=deff or 1.0
        )
        emit(sample_size_report(plan), output_format)
        return
    if deff is not None:
        raise InputError("--design-effect/--icc: apply to --effect or --runs, not the table")
    sizes = _numbers(ns, "n", int)
    rates = _numbers(disagree, "disagree", float)
    rows = planning_table(sizes, rates, power=power, alpha=alpha)
    emit(plan_report(rows, power, alpha), output_format)


def _design_effect(
    design_effect: float | None,
    icc: float | None,
    cluster_size: float | None,
    cluster_by: str | None,
    runs: tuple[str, str] | None,
) -> float | None:
    given = [x is not None for x in (design_effect, icc, cluster_by)]
    if sum(given) > 1:
        raise InputError("plan: pass one of --design-effect, --icc/--cluster-size, --cluster-by")
    if cluster_by is not None and not runs:
        raise InputError("--cluster-by: needs --runs A B (the observed cluster structure)")
    if (icc is None) != (cluster_size is None):
        raise InputError("--icc and --cluster-size: expected both, found one")
    if icc is not None and cluster_size is not None:
        from ragaudit.stats.sample_size import design_effect_from_icc

        return design_effect_from_icc(cluster_size, icc)
    return design_effect


def _budget(from_run: str | None, given: tuple[float | None, ...], metric: str) -> Any:
    """The variance budget of ``--from RUN``, or the components given on the command line."""
    between, within, judge = given
    if from_run is not None:
        if between is not None or within is not None or judge is not None:
            raise InputError("--calls: pass --from RUN or the variance components, not both")
        from ragaudit.data.records import load_saved_run
        from ragaudit.diagnose.repeats import run_budget

        return run_budget(load_saved_run(from_run), metric)
    if between is None or within is None:
        raise InputError(
            "--calls: expected --from RUN (a run made with --repeats R >= 2) or both "
            "--between-questions and --within"
        )
    components = {"questions": between, "generations": within}
    return components if judge is None else {**components, "judge": judge}


def _run_questions(budget: Any) -> int:
    """The questions the run holds: more cannot be asked without writing them."""
    return int(budget.n_questions)
