"""Plan a golden set from two saved runs: observed disagreement, effect and cluster structure.

:func:`plan_from_runs` reads what two runs already say about a binary metric (how often they
disagree, by how much one wins, and how strongly questions of one cluster move together) and
asks :func:`~ragaudit.stats.sample_size.questions_needed` how many questions a decisive
comparison would need.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.noise import question_clusters, run_metrics
from ragaudit.exceptions import InputError
from ragaudit.stats import pair_runs
from ragaudit.stats.clustered import clustered_paired_difference
from ragaudit.stats.policy import is_binary
from ragaudit.stats.sample_size import SampleSize, questions_needed

__all__ = ["RunPlan", "plan_from_runs"]


@dataclass(frozen=True)
class RunPlan:
    """What two runs imply for the size of the next golden set.

    Attributes
    ----------
    metric : str
    n_observed : int
        Paired questions in the runs.
    disagree : float
        Observed share of questions where the runs differ.
    observed_effect : float
        Observed ``mean(B) - mean(A)``.
    design_effect : float
        Observed (CR1 / naive variance of the paired difference) when clustered, else 1.
    n_clusters : int or None
    plan : SampleSize
        Questions needed for the target effect (default: the observed one).
    """

    metric: str
    n_observed: int
    disagree: float
    observed_effect: float
    design_effect: float
    n_clusters: int | None
    plan: SampleSize


def plan_from_runs(
    run_a: SavedRun,
    run_b: SavedRun,
    metric: str,
    *,
    effect: float | None = None,
    cluster_by: str | None = None,
    design_effect: float | None = None,
    questions: str = "all",
    power: float = 0.8,
    alpha: float = 0.05,
) -> RunPlan:
    """Questions needed to detect ``effect`` (default: the observed one) on a binary metric.

    The discordance is the observed share of questions where the runs differ; with
    ``cluster_by`` the design effect is the observed ratio of the CR1 to the naive variance
    of the paired difference, floored at 1 (Miller 2024, section 5); without it, a given
    ``design_effect`` (for example ``1 + (m - 1) * ICC``) inflates the answer, else 1.

    Examples
    --------
    >>> def run(values):
    ...     rows = [{"id": f"q{i}", "retrieved": [], "metrics": {"c": v}}
    ...             for i, v in enumerate(values)]
    ...     return SavedRun.from_dict({"config": {"k": 1}, "rows": rows})
    >>> a = run([1, 0, 0, 1, 0, 1, 0, 0, 1, 1])
    >>> b = run([1, 1, 0, 1, 1, 1, 0, 0, 1, 0])
    >>> p = plan_from_runs(a, b, "c")
    >>> p.disagree, p.observed_effect, p.plan.n_independent
    (0.3, 0.1, 249)
    """
    paired = pair_runs(run_metrics(run_a, questions), run_metrics(run_b, questions), [metric])
    a, b = paired.a[metric], paired.b[metric]
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    if a.size < 2 or not (is_binary(a) and is_binary(b)):
        raise InputError(
            f"plan --runs: expected a 0/1 metric scored on at least 2 common questions, "
            f"found {metric!r} with {a.size} (try --metric correct)"
        )
    disagree = float(np.mean(a != b))
    observed = float(np.mean(b - a))
    if cluster_by and design_effect is not None:
        raise InputError("plan: pass cluster_by or design_effect, not both")
    deff, n_clusters = (1.0 if design_effect is None else design_effect), None
    if cluster_by:
        clusters = question_clusters(run_a, cluster_by)
        labels = np.array([clusters[q] for q in np.array(paired.ids)[keep]])
        clustered = clustered_paired_difference(a, b, labels)
        deff, n_clusters = max(1.0, clustered.design_effect), clustered.n_clusters
    target = observed if effect is None else effect
    if disagree == 0.0:
        raise InputError(
            f"plan --runs: the runs never disagree on {metric!r}, so no number of questions "
            "tells them apart; pass --disagree and --effect to plan for a different pair"
        )
    if target == 0.0:
        raise InputError(
            "plan --runs: the observed effect is 0; pass --effect to plan for the smallest "
            "difference that matters to you"
        )
    plan = questions_needed(target, disagree, power=power, alpha=alpha, design_effect=deff)
    return RunPlan(metric, int(a.size), disagree, observed, deff, n_clusters, plan)
