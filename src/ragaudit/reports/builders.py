"""The hook through which result objects render themselves: result type -> report builder.

The result objects (:class:`~ragaudit.diagnose.audit_result.Audit`,
:class:`~ragaudit.stats.compare.Comparison`, :class:`~ragaudit.diagnose.funnel.FunnelResult`,
:class:`~ragaudit.diagnose.label_bias.BiasResult`, :class:`~ragaudit.metrics.Evaluation`)
sit below ``reports`` in the import layers; their ``to_report()`` and ``_repr_html_()``
(:class:`ragaudit._present.Presentable`) import this module by name when called.  The table
lives here, beside the builders, so a result type gets the same report the CLI prints.
"""

from __future__ import annotations

from typing import Any

from ragaudit.reports.renderer import render_html_fragment
from ragaudit.reports.report import Report

__all__ = ["html_fragment", "report_for"]


def report_for(result: Any) -> Report:
    """The report the CLI prints for ``result`` (the command named beside each type).

    Examples
    --------
    >>> from ragaudit.data import Qrels, Run
    >>> from ragaudit.metrics import evaluate
    >>> ev = evaluate(Qrels({"q1": {"A": 1}}), Run({"q1": ["A"]}), ["mrr"])
    >>> report_for(ev).data == ev.to_dict()
    True
    """
    from ragaudit.diagnose.audit_result import Audit
    from ragaudit.diagnose.funnel_result import FunnelResult
    from ragaudit.diagnose.label_bias import BiasResult
    from ragaudit.metrics import Evaluation
    from ragaudit.stats.compare import Comparison

    if isinstance(result, Audit):  # ragaudit report
        from ragaudit.reports.audit_page import audit_report

        return audit_report(result, detail=True)
    if isinstance(result, Comparison):  # ragaudit compare
        from ragaudit.reports.stats import comparison_report

        return comparison_report(result)
    if isinstance(result, FunnelResult):  # ragaudit funnel
        from ragaudit.reports.funnel import funnel_report

        return funnel_report(result)
    if isinstance(result, BiasResult):  # ragaudit labels bias
        from ragaudit.reports.label_bias import bias_report

        return bias_report(result)
    if isinstance(result, Evaluation):  # ragaudit evaluate
        from ragaudit.reports.metrics import evaluate_report

        return evaluate_report(result)
    raise TypeError(f"no report for a {type(result).__name__}")


def html_fragment(report: Report) -> str:
    """``report`` as an HTML fragment for a notebook cell (the one renderer's HTML, with no
    page around it and no style that leaks into the notebook)."""
    return render_html_fragment(report)
