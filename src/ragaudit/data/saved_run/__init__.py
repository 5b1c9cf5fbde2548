"""The saved run: its typed model, its schema check, its conversions, metric names and summary.

One module per idea:

* :mod:`.model`: :class:`SavedRun`, :class:`QuestionResult`, :class:`Retrieved` (the typed,
  frozen model of one pipeline configuration, question by question);
* :mod:`.mappings`: :class:`Judgments` and :class:`RunSettings` (read-only mappings with
  typed accessors);
* :mod:`.retrieved`: :class:`Retrieved` and :class:`~.retrieved.RetrievedList` (a question's
  retrieved entries held as columns);
* :mod:`.schema`: the JSON Schema file; :mod:`.check`: the schema, metric ranges, unique ids
  and ``config.k`` checks, with messages that locate each problem; :mod:`.batch_check`: the
  same checks, compiled to run column by column over a batch of rows;
* :mod:`.stream`: a file's rows parsed a batch at a time; :mod:`.build`: the questions built
  from validated rows; :mod:`.load`: the streamed loader that joins them;
* :mod:`.convert`: ``SavedRun.to_run()`` / ``to_qrels()``;
* :mod:`.metrics`: the per-question metric names and their declared ranges;
* :mod:`.summary`: the summary recomputed from the rows.

The files are read by :func:`ragaudit.data.records.load_saved_run` (streamed through
:mod:`.load`; a file with a problem is read whole, for the message).  The old module names
(``ragaudit.data.saved_run_check``, ``_convert``, ``_metrics``, ``_summary``) still import.
"""

from __future__ import annotations

from ragaudit.data.saved_run.mappings import Judgments, RunSettings
from ragaudit.data.saved_run.model import (
    FORMAT,
    FORMAT_VERSION,
    QuestionResult,
    Retrieved,
    SavedRun,
    generation_error_of,
)

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Judgments",
    "QuestionResult",
    "Retrieved",
    "RunSettings",
    "SavedRun",
    "generation_error_of",
]

_RENAMED = {"JudgeVerdicts": "Judgments"}  # old name -> new name, kept for one release


def __getattr__(name: str) -> object:
    """The old name of a renamed class, with a DeprecationWarning naming the new one."""
    if name in _RENAMED:
        import warnings

        new = _RENAMED[name]
        warnings.warn(
            f"ragaudit.data.saved_run.{name} is renamed {new}; the old name goes in the next "
            "release",
            DeprecationWarning,
            stacklevel=2,
        )
        return globals()[new]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
