"""The report of ``ragaudit evaluate`` with several runs: one row per run, one column per metric.

Each cell is the run's value, exactly as ``evaluate`` prints it for that run alone, followed by
markers for the differences that survive the paired test and Holm's correction:

* ``--pairs first`` (default): ``▲`` / ``▼`` = significantly higher / lower than the first run;
* ``--pairs all``: ``▲b,c`` = significantly higher than the runs lettered ``b`` and ``c``.

A legend under the table names the test, the correction and its family, alpha and the seed;
a second table lists every comparison with its interval and raw and adjusted p-values.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragaudit.reports.metrics import evaluate_report
from ragaudit.reports.report import Report, Section, Table, Text
from ragaudit.stats.verdicts import format_pvalue

if TYPE_CHECKING:
    from ragaudit.metrics import Evaluation
    from ragaudit.stats.pairwise import PairwiseMatrix

__all__ = ["HIGHER", "LOWER", "multirun_report", "run_letters"]

HIGHER, LOWER = "▲", "▼"


def run_letters(n: int) -> list[str]:
    """Short labels of ``n`` runs: ``a`` ... ``z``, then ``r27``, ``r28`` ...

    >>> run_letters(3)
    ['a', 'b', 'c']
    """
    letters = string.ascii_lowercase
    return [letters[i] if i < len(letters) else f"r{i + 1}" for i in range(n)]


def _markers(matrix: PairwiseMatrix, letters: Sequence[str]) -> list[str]:
    """The marker suffix of each run's cell for one metric."""
    significant = set(matrix.distinguishable)
    out: list[list[str]] = [[] for _ in matrix.runs]
    for i, j, row in matrix.pairs:
        if (matrix.runs[i], matrix.runs[j]) not in significant:
            continue
        if matrix.compared == "first":  # only run j is marked, against run a
            out[j].append(HIGHER if row.statistic > 0 else LOWER)
        else:
            winner, loser = (j, i) if row.statistic > 0 else (i, j)
            out[winner].append(letters[loser])
    if matrix.compared == "first":
        return ["".join(marks) for marks in out]
    return [HIGHER + ",".join(sorted(h, key=letters.index)) if h else "" for h in out]


def _cell(value: float, marker: str) -> str:
    return f"{value:.4f} {marker}" if marker else f"{value:.4f}"


def _legend(matrices: Sequence[PairwiseMatrix], first: str) -> tuple[str, ...]:
    m = matrices[0]
    n_tests = len(m.pairs)
    level = f"{100 * m.confidence:g}%"
    if m.compared == "first":
        what = (
            f"{HIGHER} / {LOWER} = significantly higher / lower than run a ({first}); "
            f"Holm correction over the {n_tests} comparison(s) with run a of each metric"
        )
    else:
        what = (
            f"{HIGHER}x = significantly higher than run x; Holm correction over the "
            f"{n_tests} pair(s) of runs of each metric"
        )
    return (
        what + ".",
        f"Significant = Holm-adjusted p < {m.alpha:g} (alpha) and the {level} interval of the "
        "difference excludes 0.",
        "Test: two-sided paired permutation test on per-question values (exact whenever "
        "affordable; for 0/1 metrics it equals McNemar's exact test); interval: McNemar's exact "
        "test inverted for 0/1 metrics, the sign-flip test inverted otherwise (it excludes 0 "
        f"exactly when the unadjusted p < {m.alpha:g}); seed {m.seed}.",
    )


def _comparisons(matrices: Sequence[PairwiseMatrix]) -> tuple[Table, Table, list[dict[str, Any]]]:
    values: list[tuple[Any, ...]] = []
    for matrix in matrices:
        significant = set(matrix.distinguishable)
        for (i, j, row), adjusted in zip(matrix.pairs, matrix.adjusted_pvalues, strict=True):
            ci = row.confidence_interval
            values.append(
                (
                    matrix.metric,
                    matrix.runs[i],
                    matrix.runs[j],
                    row.n,
                    row.statistic,
                    ci.low,
                    ci.high,
                    row.ci_method,
                    row.pvalue,
                    row.p_method,
                    adjusted,
                    (matrix.runs[i], matrix.runs[j]) in significant,
                )
            )
    level = f"{100 * matrices[0].confidence:g}% CI"
    shown = Table(
        ("metric", "run A", "run B", "n", "B - A", level, "p", "p (Holm)", "significant"),
        tuple(
            (
                metric,
                a,
                b,
                str(n),
                f"{d:+.4f}",
                f"[{lo:+.4f}, {hi:+.4f}]",
                format_pvalue(p),
                format_pvalue(q),
                "yes" if sig else "no",
            )
            for metric, a, b, n, d, lo, hi, _cm, p, _pm, q, sig in values
        ),
        align="lllrrrrrl",
        only=("table", "markdown", "html", "latex"),
    )
    keys = (
        "metric",
        "run_a",
        "run_b",
        "n",
        "diff",
        "ci_low",
        "ci_high",
        "ci_method",
        "p_value",
        "p_method",
        "p_holm",
        "significant",
    )
    csv = Table(keys, tuple(tuple(str(c) for c in v) for v in values), values=tuple(values),
                only=("csv",))  # fmt: skip
    return shown, csv, [dict(zip(keys, v, strict=True)) for v in values]


def multirun_report(
    evaluations: Sequence[Evaluation],
    matrices: Sequence[PairwiseMatrix],
    paths: Sequence[str],
    per_query: bool = False,
) -> Report:
    """One table of several runs (rows) by metrics (columns), with significance markers.

    ``evaluations[r]`` is run *r* scored alone (its values are printed unchanged);
    ``matrices`` holds one :class:`~ragaudit.stats.pairwise.PairwiseMatrix` per metric, in
    column order, over the same runs in the same order.
    """
    names = list(matrices[0].runs)
    letters = run_letters(len(names))
    metrics = [m.metric for m in matrices]
    markers = [_markers(m, letters) for m in matrices]
    first = evaluations[0]
    header = Text(
        (
            f"unit={first.unit} average={first.average} "
            f"relevance_threshold={first.relevance_threshold} missing={first.missing} "
            f"runs={len(names)}",
        )
    )
    rows = tuple(
        (
            letters[r],
            names[r],
            str(ev.n_queries),
            *(_cell(ev.means[metric], markers[c][r]) for c, metric in enumerate(metrics)),
        )
        for r, ev in enumerate(evaluations)
    )
    main = Table(
        ("", "run", "n", *metrics),
        rows,
        align="llr" + "r" * len(metrics),
        only=("table", "markdown", "html", "latex"),
    )
    csv_values = tuple(
        (letters[r], names[r], ev.n_queries, *(ev.means[m] for m in metrics))
        for r, ev in enumerate(evaluations)
    )
    csv_main = Table(
        ("id", "run", "n", *metrics),
        tuple(tuple(str(c) for c in v) for v in csv_values),
        values=csv_values,
        only=("csv",),
    )
    shown, csv, comparisons = _comparisons(matrices)
    sections = [
        Section("", (header, main, csv_main, Text(_legend(matrices, names[0])))),
        Section("Paired comparisons", (shown, csv)),
    ]
    if per_query:
        for name, ev in zip(names, evaluations, strict=True):
            table = evaluate_report(ev, per_query=True).sections[-1].blocks
            sections.append(Section(f"Per question: {name}", table))
    m = matrices[0]
    data = {
        "pairs": m.compared,
        "test": "paired permutation (two-sided)",
        "correction": "holm",
        "correction_family": "the comparisons of each metric",
        "alpha": m.alpha,
        "confidence": m.confidence,
        "seed": m.seed,
        "resamples": m.n_resamples,
        "permutations": m.n_permutations,
        "runs": [
            {"id": letters[r], "name": names[r], "path": paths[r], **ev.to_dict(per_query)}
            for r, ev in enumerate(evaluations)
        ],
        "comparisons": comparisons,
    }
    return Report("", tuple(sections), data=data)
