"""ragaudit: honest evaluation numbers for retrieval-augmented generation.

The public API, for notebooks and scripts::

    import ragaudit
    qrels = ragaudit.load_qrels("qrels.txt")
    run = ragaudit.load_run("run.trec")
    ragaudit.evaluate(qrels, run, ["ndcg@10", "recall@5"]).to_pandas()
    saved = ragaudit.load_saved_run("ragaudit-results/k3_cs800.json")
    ragaudit.audit(["k3.json", saved], labels="chunk_labels.yaml")  # the whole report
    ragaudit.compute_funnel(saved).to_dict()
    ragaudit.compare_runs("k3.json", saved).to_pandas()

Every name is imported on first use (``import ragaudit`` loads nothing heavy).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragaudit._api import Plan, audit, label_bias, plan
    from ragaudit.data.formats import read_qrels as load_qrels
    from ragaudit.data.formats import read_run as load_run
    from ragaudit.data.qrels import Qrels
    from ragaudit.data.records import load_saved_run
    from ragaudit.data.runs import Run
    from ragaudit.data.saved_run import QuestionResult, SavedRun
    from ragaudit.diagnose.audit_result import Audit
    from ragaudit.diagnose.compare import compare_runs
    from ragaudit.diagnose.funnel import FunnelResult, compute_funnel
    from ragaudit.diagnose.label_bias import BiasResult
    from ragaudit.metrics.evaluate import Evaluation, evaluate
    from ragaudit.pipeline.live import PipelineOutput, evaluate_pipeline
    from ragaudit.stats.compare import Comparison

__all__ = [
    "Audit",
    "BiasResult",
    "Comparison",
    "Evaluation",
    "FunnelResult",
    "PipelineOutput",
    "Plan",
    "Qrels",
    "QuestionResult",
    "Run",
    "SavedRun",
    "__version__",
    "audit",
    "compare_runs",
    "compute_funnel",
    "evaluate",
    "evaluate_pipeline",
    "label_bias",
    "load_qrels",
    "load_run",
    "load_saved_run",
    "plan",
]

#: public name -> (module, attribute)
_LAZY: dict[str, tuple[str, str]] = {
    "Qrels": ("ragaudit.data.qrels", "Qrels"),
    "Run": ("ragaudit.data.runs", "Run"),
    "load_qrels": ("ragaudit.data.formats", "read_qrels"),
    "load_run": ("ragaudit.data.formats", "read_run"),
    "load_saved_run": ("ragaudit.data.records", "load_saved_run"),
    "SavedRun": ("ragaudit.data.saved_run", "SavedRun"),
    "QuestionResult": ("ragaudit.data.saved_run", "QuestionResult"),
    "evaluate": ("ragaudit.metrics.evaluate", "evaluate"),
    "Evaluation": ("ragaudit.metrics.evaluate", "Evaluation"),
    "compare_runs": ("ragaudit.diagnose.compare", "compare_runs"),
    "Comparison": ("ragaudit.stats.compare", "Comparison"),
    "compute_funnel": ("ragaudit.diagnose.funnel", "compute_funnel"),
    "FunnelResult": ("ragaudit.diagnose.funnel", "FunnelResult"),
    "label_bias": ("ragaudit._api", "label_bias"),
    "BiasResult": ("ragaudit.diagnose.label_bias", "BiasResult"),
    "evaluate_pipeline": ("ragaudit.pipeline.live", "evaluate_pipeline"),
    "PipelineOutput": ("ragaudit.pipeline.live", "PipelineOutput"),
    "plan": ("ragaudit._api", "plan"),
    "Plan": ("ragaudit._api", "Plan"),
    "audit": ("ragaudit._api", "audit"),
    "Audit": ("ragaudit.diagnose.audit_result", "Audit"),
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        # importlib.metadata costs ~50 ms; look the version up only when someone asks for it.
        from ragaudit._version import version

        return version()
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'ragaudit' has no attribute {name!r}")
    value = getattr(import_module(target[0]), target[1])
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
