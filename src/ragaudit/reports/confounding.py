"""What a comparison of two saved runs can conclude, given what differs in their configurations.

Renders :class:`ragaudit.diagnose.confounding.ConfigDifferences` (computed in diagnose): every
differing field, then what follows from it (the chapter's exercise 2):

- more than one design variable differs: the effect is their joint effect and cannot be
  attributed to either;
- the judges differ: judged metrics are measured with different instruments.
"""

from __future__ import annotations

from typing import Any

from ragaudit.diagnose.confounding import ConfigDifferences

__all__ = ["confounding_lines"]


def _value(value: Any) -> str:
    text = str(value)
    return text[:12] if len(text) == 64 else text  # a sha256 fingerprint: 12 digits tell apart


def confounding_lines(diff: ConfigDifferences | None) -> tuple[str, ...]:
    """The lines ``compare``, the report's pair section and the CI gate print (none when the
    runs are not saved runs or their configurations are equal).

    >>> from ragaudit.data.saved_run import SavedRun
    >>> from ragaudit.diagnose.confounding import config_differences
    >>> def run(name, **config):
    ...     return SavedRun.from_dict({"name": name, "config": config, "rows": []})
    >>> for line in confounding_lines(config_differences(run("a", k=3, chunk_size=800),
    ...                                                  run("b", k=8, chunk_size=400))):
    ...     print(line)
    differs: k (3 vs 8), chunk_size (800 vs 400)
    confounded: k and chunking both differ, so the effect cannot be attributed to either
    """
    if diff is None or not diff.differences:
        return ()
    listed = ", ".join(f"{d.field} ({_value(d.a)} vs {_value(d.b)})" for d in diff.differences)
    lines = [f"differs: {listed}"]
    if diff.confounded:
        names = diff.design_variables
        joined = ", ".join(names[:-1]) + f" and {names[-1]}"
        lines.append(
            f"confounded: {joined} {'both' if len(names) == 2 else 'all'} differ, so the "
            f"effect cannot be attributed to {'either' if len(names) == 2 else 'any one of them'}"
        )
    if diff.judges_differ:
        lines.append(
            "judges differ: judged metrics are measured with different instruments, so their "
            "difference may be the judges'"
        )
    if diff.data_variables:
        data = diff.data_variables
        lines.append(
            f"different data: the {' and the '.join(data)} "
            f"differ{'s' if len(data) == 1 else ''} (compared with --allow-different-data): "
            "the questions are not the same experiment"
        )
    return tuple(lines)
