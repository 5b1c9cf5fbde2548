"""The audit's typed result: :class:`Audit` of :class:`RunAudit` (one per run) and
:class:`PairView` (each later run against the first).

Frozen, and computed once by :func:`ragaudit.diagnose.audit.build_audit`; every output
(``ragaudit report`` in each format, the terminal audit ``demo`` prints, a notebook's inline
view) renders this object, and :meth:`Audit.to_dict` is the JSON every one of them prints.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragaudit._frames import records_frame
from ragaudit._present import Presentable, short_repr
from ragaudit.diagnose.calibration import Calibration
from ragaudit.diagnose.drilldown import QuestionView
from ragaudit.diagnose.funnel import FunnelResult
from ragaudit.diagnose.funnel_compare import FunnelComparison
from ragaudit.diagnose.funnel_result import listed
from ragaudit.diagnose.label_bias import BiasResult
from ragaudit.diagnose.noise import ClusteredComparison
from ragaudit.diagnose.repeats import RepeatsAnalysis
from ragaudit.diagnose.unjudged import RunJudged
from ragaudit.stats.compare import Comparison

__all__ = [
    "AVERAGING",
    "INTERVAL_METHODS",
    "JUDGED_NOTE",
    "MDE_ASSUMPTIONS",
    "MDE_DISCORDANCE",
    "REPEATED_NOTE",
    "Audit",
    "DashboardRow",
    "PairView",
    "RunAudit",
]


#: The sentence printed under every dashboard: which interval each kind of row gets.
INTERVAL_METHODS = (
    "intervals: Clopper-Pearson exact for rates (count/n), betting (Waudby-Smith-Ramdas) for "
    "fractional means, order statistics (distribution-free; unbounded above below n=72) for "
    "p95 latency, hull of Hall's t, two-part lognormal and symmetric Edgeworth t for "
    "$/question (unbounded above with fewer than 2 paid questions)"
)

#: The sentence printed under every dashboard: what each number averages.
AVERAGING = "averaging: macro, a mean over the n questions beside each number (a rate: count/n)"

#: The sentence under a dashboard that holds a repeated run (diagnose.dashboard_repeats).
REPEATED_NOTE = (
    "repeated runs: a row marked 'mean of R repeats' averages every (question, repeat) cell, "
    "n = questions, its interval Korn-Graubard beta on the cluster-robust variance with "
    "questions as clusters (the repeats section's number), 'decided a/b cells' counts "
    "(question, repeat) cells, its MDE a shift of the per-question means over repeats; the "
    "retrieval rows, p95 latency, $/question and the funnel read repeat 0 (one generation)"
)

#: Discordance assumed for the minimum detectable effect (the chapter's planning table).
MDE_DISCORDANCE = 0.2

#: The caveat of every judged dashboard number (correctness, faithfulness, abstention).
JUDGED_NOTE = (
    "judged numbers (correctness, faithfulness, wrong abstention) estimate the judge's rate, "
    "not the true rate: `ragaudit calibrate RUN --human LABELS` estimates the true rate"
)

#: What the dashboard's MDE column assumes (stats.mde.run_mde), printed under every dashboard.
MDE_ASSUMPTIONS = (
    f"MDE (power 0.8, alpha 0.05): for a rate (count/n), exact McNemar assuming "
    f"{MDE_DISCORDANCE:.0%} of questions differ between the two runs (the observed share is "
    "only known once there are two: compare prints it); for a mean score, a shift of every "
    "question by it, with differences as spread as two draws of this run's scores (t power)"
)


@dataclass(frozen=True)
class DashboardRow:
    """One dashboard number.

    Attributes
    ----------
    key : str
        Stable identifier (``recall_doc``, ``recall_chunk``, ``ndcg``, ``correct``,
        ``faithfulness``, ``over_refusal``, ``answered_unanswerable``, ``latency_p95``,
        ``cost_per_question``, ``precision``); the HTML carries it as ``data-metric``.
    label : str
        What the reader sees.
    value : float or None
        None when the run cannot measure it (``note`` says why).
    ci_low, ci_high : float or None
        95% interval.
    n : int
        Questions behind the number.
    count : int or None
        Successes, for 0/1 numbers.
    interval : str
        How the interval was computed.
    mde : float or None
        Minimum detectable effect at ``n`` (None: not detectable at this n).
    source : str
        The command and JSON field it equals.
    note : str
        What the number guards against, or why it is missing.
    mde_assumption : str
        What ``mde`` assumes (:func:`ragaudit.stats.mde.run_mde`); "" where no MDE applies.
    unit : {"", "ms", "usd"}
        ``""`` a share or mean score; ``"ms"`` milliseconds (p95 latency); ``"usd"`` dollars.
    varies : bool
        The number is not reproducible (wall-clock latency): it changes from run to run.
    decided : tuple of (int, int) or None
        For a number resting on a judge (correctness, faithfulness, over-refusal): how many
        of the answerable questions the judge decided, of how many (undecided answers are
        the funnel's "unjudged" row); None for the others.  On a repeated run, (question,
        repeat) cells decided of ``questions x R`` (``decided_unit`` "cells").
    decided_unit : str
        ``""`` questions; ``"cells"`` (question, repeat) cells of a repeated run.
    """

    key: str
    label: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    count: int | None
    interval: str
    mde: float | None
    source: str
    note: str
    unit: str = ""
    varies: bool = False
    mde_assumption: str = ""
    decided: tuple[int, int] | None = None
    decided_unit: str = ""

    @property
    def size(self) -> str:
        """``count/n`` for a 0/1 number (``43/54``), else ``n=54``."""
        return f"n={self.n}" if self.count is None else f"{self.count}/{self.n}"

    @property
    def decided_text(self) -> str:
        """``decided 52/54`` beside a judged number, else ``""``."""
        if self.decided is None:
            return ""
        unit = f" {self.decided_unit}" if self.decided_unit else ""
        return f"decided {self.decided[0]}/{self.decided[1]}{unit}"


@dataclass(frozen=True)
class RunAudit:
    """Everything the audit shows about one run."""

    name: str
    k: int
    config: tuple[tuple[str, str], ...]
    dashboard: tuple[DashboardRow, ...]
    funnel: FunnelResult
    bias: BiasResult | None
    failures: tuple[QuestionView, ...]
    answered: int
    n_answerable: int
    notes: tuple[str, ...] = ()
    generation_errors: tuple[str, ...] = ()  # ids of the questions with no answer
    judge_errors: Mapping[str, int] = field(default_factory=dict)  # failures per judge

    @property
    def funnel_scope(self) -> str:
        """``""``, or ``", repeat 0 of R"`` for a repeated run: the funnel counts one
        generation per question (its stage counts are per generation)."""
        return "" if self.repeats is None else f", repeat 0 of {self.repeats.repeats}"

    @property
    def errors(self) -> str:
        """The generation and judge errors in one sentence ("" when there are none)."""
        if not self.generation_errors and not self.judge_errors:
            return ""
        failed = self.generation_errors
        return (
            f"errors: {len(failed)} generation errors"
            + (f" (no answer: {listed(list(failed))})" if failed else "")
            + "; judge errors: "
            + (", ".join(f"{j} {n}" for j, n in self.judge_errors.items()) or "none")
            + "; such questions are left out of the numbers they have no verdict for"
        )

    clustered: ClusteredComparison | None = None
    calibration: Calibration | None = None
    #: Failing questions per stage beyond the drill-down limit: counted, not opened.
    failures_left_out: Mapping[str, int] = field(default_factory=dict)
    max_drilldowns: int | None = None
    #: judged@k of the run's top k (document level, and chunk level with chunk labels).
    judged: RunJudged | None = None
    #: The run's repeated generations (None for an unrepeated run: nothing shown, no JSON key).
    repeats: RepeatsAnalysis | None = None
    #: The judges audit the saved run carries (``judges audit --save``), as stored.
    judge_audit: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the run's dashboard, funnel, label bias, clustering, calibration, the
        judges audit it carries (and its repeats, for a repeated run)."""
        repeats = {} if self.repeats is None else {"repeats": self.repeats.to_dict()}
        return {
            "name": self.name,
            "k": self.k,
            "config": dict(self.config),
            "dashboard": [
                {
                    "key": row.key,
                    "label": row.label,
                    "value": row.value,
                    "ci_low": _finite(row.ci_low),
                    # JSON has no infinity: an interval unbounded above (p95 at n < 72) is
                    # null with "unbounded_above" true
                    "ci_high": _finite(row.ci_high),
                    "unbounded_above": row.ci_high is not None and math.isinf(row.ci_high),
                    "n": row.n,
                    "count": row.count,
                    "unit": row.unit,
                    "varies": row.varies,
                    "interval": row.interval,
                    "mde": row.mde,
                    "mde_assumption": row.mde_assumption,
                    # a judged number: how many answerable questions the judge decided, of how many
                    "decided": None
                    if row.decided is None
                    else {"n": row.decided[0], "of": row.decided[1],
                          **({"unit": row.decided_unit} if row.decided_unit else {})},
                    "source": row.source,
                    "note": row.note,
                }
                for row in self.dashboard
            ],
            "answered": self.answered,
            "n_answerable": self.n_answerable,
            "generation_errors": list(self.generation_errors),
            "judge_errors": dict(self.judge_errors),
            "funnel": self.funnel.to_dict(),
            "label_bias": None if self.bias is None else self.bias.to_dict(),
            "clustered": None if self.clustered is None else self.clustered.to_dict(),
            "calibration": None if self.calibration is None else self.calibration.to_dict(),
            "judged": None if self.judged is None else self.judged.to_dict(),
            "judge_audit": None if self.judge_audit is None else dict(self.judge_audit),
            **repeats,
        }


def _finite(value: float | None) -> float | None:
    return None if value is None or math.isinf(value) else value


@dataclass(frozen=True)
class PairView:
    """Run ``b`` compared with run ``a`` (diff = b - a), with Holm-adjusted p-values.

    ``comparison.config_differences`` lists what differs between the two runs' configurations;
    ``funnels`` compares their funnels stage by stage.  ``discordant`` opens the questions
    whose correctness changed (the first ``report --max-drilldowns`` of them);
    ``discordant_ids`` names them all.
    """

    a: int
    b: int
    comparison: Comparison
    holm: tuple[float, ...]
    discordant: tuple[tuple[QuestionView, QuestionView], ...]
    funnels: FunnelComparison | None = None
    discordant_ids: tuple[str, ...] = ()

    @property
    def n_discordant(self) -> int:
        """Questions whose correctness changed, opened or not."""
        return max(len(self.discordant_ids), len(self.discordant))

    def to_dict(self) -> dict[str, Any]:
        """The comparison's JSON with the Holm-adjusted p-values, the discordant ids and the
        funnels compared."""
        return {
            **self.comparison.to_dict(),
            "p_holm": list(self.holm),
            "discordant_ids": list(self.discordant_ids) or [qa.qid for qa, _ in self.discordant],
            **({} if self.funnels is None else {"funnels": self.funnels.to_dict()}),
        }


@dataclass(frozen=True, repr=False)
class Audit(Presentable):
    """The whole audit: one :class:`RunAudit` per run, pairs against the first run.

    ``print(audit)`` shows each run's dashboard in one line and the comparison's summary;
    ``audit.to_report()`` is what ``ragaudit report`` renders, ``audit.to_dict()`` its JSON
    (``ragaudit report --format json``), ``audit.to_pandas()`` the dashboards as a table, and
    a notebook shows the audit inline.
    """

    runs: tuple[RunAudit, ...]
    pairs: tuple[PairView, ...]
    seed: int
    version: str
    n_resamples: int
    summary: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())
    #: The golden questions the first run carries checked against the corpus (``report
    #: --corpus``): a :class:`~ragaudit.pipeline.golden_check.GoldenCheck`, or None.
    golden_check: Any = None

    def dashboard_label(self, i: int) -> str:
        """Label of dashboard row ``i``: ``recall@3`` when every run has k=3, else ``recall@k``."""
        label = self.runs[0].dashboard[i].label
        if len({run.k for run in self.runs}) > 1:
            label = label.replace(f"@{self.runs[0].k}", "@k")
        return label

    def to_dict(self) -> dict[str, Any]:
        """Every number of the audit, JSON-ready (what ``report --format json`` prints)."""
        return {
            "seed": self.seed,
            "resamples": self.n_resamples,
            "version": self.version,
            "runs": [run.to_dict() for run in self.runs],
            "comparisons": [pair.to_dict() for pair in self.pairs],
            "summary": list(self.summary),
            "notes": list(self.notes),
            "golden_check": None if self.golden_check is None else self.golden_check.to_dict(),
        }

    def to_pandas(self) -> Any:
        """The dashboards: one row per (run, number), with interval, n and MDE (needs the
        ``pandas`` extra)."""
        return records_frame(
            [
                {"run": run["name"], **entry}
                for run in self.to_dict()["runs"]
                for entry in run["dashboard"]
            ]
        )

    def __repr__(self) -> str:
        def number(row: DashboardRow) -> str:
            return f"{row.key} {'n/a' if row.value is None else format(row.value, '.3f')}"

        # wall-clock numbers (p95 latency) are left out: a repr is the same on every call
        lines = [
            f"{run.name} (k={run.k}): "
            + ", ".join(number(row) for row in run.dashboard if not row.varies)
            for run in self.runs
        ]
        return short_repr(
            f"Audit(runs={[run.name for run in self.runs]}, seed={self.seed})",
            [*lines, *self.summary],
        )
