"""inspect_ai logs as saved runs: ``ragaudit import --from inspect LOG``.

The log is read by inspect_ai's own reader and turned into rows by
:func:`~ragaudit.data.inspect_log.rows_from_log` (scores become metrics; epochs are the
run's repeats, ``config.repeats``, said in the output and in ``config.inspect.epochs``).  The
rows are a saved run like any other: ``compare A.json B.json -m match`` gives the exact
paired verdict of two logs (for a 0/1 score, the sign-flip test on the paired differences is
the exact McNemar test), ``--cluster-by tag`` the clustered one when the import took
``--cluster-by KEY``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaudit._io import refuse_input_as_output
from ragaudit._version import version
from ragaudit.data.inspect_log import InspectRows, read_inspect_log, rows_from_log
from ragaudit.data.records import write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.data.saved_run.summary import summarise_run
from ragaudit.pipeline.config import saved_run_path

__all__ = ["EPOCHS_NOTE", "InspectImport", "import_inspect_log", "saved_run_from_log"]

EPOCHS_NOTE = (
    "epochs are repeats of one question: stored as the run's repeats (config.repeats), and "
    "compare pairs each question's mean over its epochs"
)
#: ``config.repeat_seed_rule`` of an imported inspect_ai log.
SEED_RULE = "inspect_ai epochs: the log records no seed per epoch"


@dataclass(frozen=True)
class InspectImport:
    """A saved run made from an inspect_ai log, with what the log said about itself."""

    saved: SavedRun
    log: InspectRows


def saved_run_from_log(
    log: Mapping[str, Any], path: str | Path, *, name: str, cluster_by: str | None = None
) -> InspectImport:
    """The saved run (not written) of an inspect_ai log's JSON form."""
    read = rows_from_log(log, path, cluster_by=cluster_by)
    config: dict[str, Any] = {
        "k": 1,
        "retriever": "import:inspect",
        "generator": "import:inspect",
        "judges": "inspect_ai scorers",
        "imported_from": Path(path).name,
        "inspect": {
            "task": read.task,
            "model": read.model,
            "status": read.status,
            "inspect_ai_version": read.inspect_version,
            "epochs": read.epochs,
            "epoch_aggregation": "repeats" if read.epochs > 1 else "none",
            "failed_epochs": list(read.failed_epochs),
            "cluster_by": cluster_by,
        },
        "ragaudit_version": version(),
    }
    if read.epochs > 1:
        config.update(repeats=read.epochs, repeat_seeds=None, repeat_seed_rule=SEED_RULE)
    saved = SavedRun.from_dict({"name": name, "config": config, "rows": read.rows})
    return InspectImport(saved.replace(summary=summarise_run(saved).to_dict()), read)


def import_inspect_log(
    path: str | Path,
    *,
    name: str | None = None,
    out_dir: str | Path = "ragaudit-results",
    cluster_by: str | None = None,
    save_as: str = "json",
) -> InspectImport:
    """Read the inspect_ai log at ``path`` (``.eval`` or ``.json``) and write its saved run
    to ``<out_dir>/<name>.json`` (default name: the file's stem; ``.parquet`` with
    ``save_as="parquet"``)."""
    file = str(path)
    run_name = name or Path(file).stem
    target = saved_run_path(out_dir, run_name, save_as=save_as)
    refuse_input_as_output(target, [file])
    made = saved_run_from_log(read_inspect_log(file), file, name=run_name, cluster_by=cluster_by)
    return InspectImport(write_saved_run(target, made.saved), made.log)
