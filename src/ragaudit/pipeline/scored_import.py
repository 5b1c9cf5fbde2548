"""Scored results of other tools as saved runs: ``ragaudit import --from promptfoo FILE`` and
``--from mlflow FILE``.

A file is read by its reader (:func:`~ragaudit.data.promptfoo.read_promptfoo`,
:func:`~ragaudit.data.mlflow_traces.read_mlflow_traces`) into one
:class:`~ragaudit.data.scored_rows.ScoredSystem` per system it holds: its tests (traces) are
the questions, keyed by the tool's test or question id, its assertions and scores the metrics,
its latency, tokens and cost the dashboard's.  Two systems then compare question by question:
``compare A.json B.json -m pass`` gives the exact paired verdict (for a 0/1 metric the exact
sign-flip test on the paired differences is the exact McNemar test).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaudit._io import refuse_input_as_output
from ragaudit._version import version
from ragaudit.data.records import write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.data.saved_run.summary import summarise_run
from ragaudit.data.scored_rows import ScoredSystem
from ragaudit.pipeline.config import saved_run_path

__all__ = ["ScoredImport", "import_scored", "saved_runs_from_systems"]


@dataclass(frozen=True)
class ScoredImport:
    """The saved runs made from one results file, one per system it holds."""

    tool: str
    tool_version: str | None
    runs: list[tuple[ScoredSystem, SavedRun]]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "system"


def _read(tool: str, path: str, cluster_by: str | None) -> tuple[str | None, list[ScoredSystem]]:
    if tool == "promptfoo":
        from ragaudit.data.promptfoo import read_promptfoo

        return read_promptfoo(path, cluster_by=cluster_by)
    if tool == "mlflow":
        from ragaudit.data.mlflow_traces import read_mlflow_traces

        return read_mlflow_traces(path, cluster_by=cluster_by)
    raise ValueError(f"no reader for {tool!r}")


def saved_runs_from_systems(
    tool: str,
    tool_version: str | None,
    systems: Sequence[ScoredSystem],
    path: str | Path,
    *,
    name: str,
    cluster_by: str | None = None,
) -> list[SavedRun]:
    """The saved runs (not written) of ``systems`` read from ``path``: named ``name`` when the
    file holds one system, else ``<name>.<system slug>``; each config says the tool, its
    version and the system (``config[tool]``), so ``compare`` shows what differs."""
    runs = []
    for system in systems:
        config: dict[str, Any] = {
            "k": 1,
            "retriever": f"import:{tool}",
            "generator": f"import:{tool}",
            "judges": f"{tool} scores",
            "imported_from": Path(path).name,
            tool: {"version": tool_version, "system": system.label, **system.details,
                   "cluster_by": cluster_by},
            "ragaudit_version": version(),
        }  # fmt: skip
        repeated = [row["repeats"] for row in system.rows if row.get("repeats")]
        if repeated:  # promptfoo --repeat: no seed recorded
            config.update(repeats=1 + len(repeated[0]), repeat_seeds=None,
                          repeat_seed_rule=f"{tool} repeats: the file records no seed")  # fmt: skip
        run_name = name if len(systems) == 1 else f"{name}.{_slug(system.slug)}"
        saved = SavedRun.from_dict({"name": run_name, "config": config, "rows": system.rows})
        runs.append(saved.replace(summary=summarise_run(saved).to_dict()))
    return runs


def import_scored(
    tool: str,
    path: str | Path,
    *,
    name: str | None = None,
    out_dir: str | Path = "ragaudit-results",
    save_as: str = "json",
    cluster_by: str | None = None,
) -> ScoredImport:
    """Read the ``tool`` (``promptfoo`` or ``mlflow``) results at ``path`` and write one saved
    run per system to ``<out_dir>/<name>[.<system>].json`` (``.parquet`` with
    ``save_as="parquet"``).

    Parameters
    ----------
    tool : {"promptfoo", "mlflow"}
    path : str or Path
        The results file (for mlflow also ``runs:/RUN_ID``, read with mlflow's client).
    name : str, optional
        Run name; default the file's stem, without a ``.traces`` suffix.
    out_dir : str or Path
    cluster_by : str, optional
        Metadata key (promptfoo test metadata, MLflow inputs or trace tag) stored as each
        row's tag, for ``compare --cluster-by tag``.

    Returns
    -------
    ScoredImport
        The tool's version (when the file records it) and ``(system, saved run)`` pairs.

    Nothing is written when the file does not read, or when a target is the input itself.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> results = [{"testIdx": i, "promptIdx": p, "provider": {"id": "echo"},
    ...             "prompt": {"label": f"v{p}"}, "vars": {"id": f"q{i}"},
    ...             "response": {"output": "x"}, "success": bool(i % 2 or p),
    ...             "score": 1, "latencyMs": 5}
    ...            for i in range(3) for p in (0, 1)]
    >>> _ = (folder / "eval.json").write_text(json.dumps(
    ...     {"results": {"version": 3, "results": results}}))
    >>> made = import_scored("promptfoo", folder / "eval.json", out_dir=folder / "runs")
    >>> [(run.name, [r["metrics"]["pass"] for r in run.rows]) for _, run in made.runs]
    [('eval.v0', [0.0, 1.0, 0.0]), ('eval.v1', [1.0, 1.0, 1.0])]
    """
    file = str(path)
    tool_version, systems = _read(tool, file, cluster_by)
    stem = name or Path(file).stem.removesuffix(".traces")
    runs = saved_runs_from_systems(tool, tool_version, systems, file, name=stem,
                                   cluster_by=cluster_by)  # fmt: skip
    targets = [saved_run_path(out_dir, run.name, save_as=save_as) for run in runs]
    for target in targets:
        refuse_input_as_output(target, [file])
    written = [write_saved_run(t, run) for t, run in zip(targets, runs, strict=True)]
    return ScoredImport(tool, tool_version, list(zip(systems, written, strict=True)))
