"""``ragaudit explain``: the whiteboard derivation of nDCG, AP or context precision."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ragaudit._validate import check_unique
from ragaudit.cli._options import emit, format_option
from ragaudit.exceptions import InputError
from ragaudit.metrics.registry import EXPLAINABLE

if TYPE_CHECKING:
    from ragaudit.metrics.explain import Derivation

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command", "parse_grades", "parse_items"]


def parse_items(text: str, *, field: str = "ranking") -> list[str]:
    """Split an option's list of item ids separated by spaces and/or commas.

    Raises
    ------
    InputError
        If the list is empty or an id appears twice.

    Examples
    --------
    >>> parse_items("B A, D C E")
    ['B', 'A', 'D', 'C', 'E']
    >>> parse_items("A A")
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: ranking: item 'A' appears more than once (positions 1 and 2)
    """
    items = text.replace(",", " ").split()
    if not items:
        raise InputError(f"{field}: expected item ids separated by spaces, found {text!r}")
    check_unique(items, field)
    return items


def parse_grades(text: str, *, field: str = "grades") -> dict[str, int]:
    """Parse ``"A=2,B=1"`` (commas and/or spaces between pairs) into ``{item: grade}``.

    Raises
    ------
    InputError
        If a pair is not ``ITEM=INTEGER``, a grade is negative, or an item repeats.

    Examples
    --------
    >>> parse_grades("A=2, B=1 C=0")
    {'A': 2, 'B': 1, 'C': 0}
    >>> parse_grades("A:2")
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: grades: expected ITEM=GRADE pairs like 'A=2,B=1', found 'A:2'
    """
    pairs = text.replace(",", " ").split()
    if not pairs:
        raise InputError(f"{field}: expected ITEM=GRADE pairs like 'A=2,B=1', found {text!r}")
    grades: dict[str, int] = {}
    for pair in pairs:
        item, sep, grade_text = pair.partition("=")
        if not sep or not item or not grade_text:
            raise InputError(f"{field}: expected ITEM=GRADE pairs like 'A=2,B=1', found {pair!r}")
        try:
            grade = int(grade_text)
        except ValueError:
            raise InputError(
                f"{field}: item {item!r}: expected an integer grade >= 0, found {grade_text!r}"
            ) from None
        if grade < 0:
            raise InputError(f"{field}: item {item!r}: expected a grade >= 0, found {grade}")
        if item in grades:
            raise InputError(f"{field}: item {item!r} is given a grade more than once")
        grades[item] = grade
    return grades


def _labels(relevant: str | None, grades: str | None) -> dict[str, int]:
    """Items from ``--relevant`` get grade 1 unless ``--grades`` says otherwise."""
    if relevant is None and grades is None:
        raise InputError("labels: expected --relevant and/or --grades, found neither")
    labels = {item: 1 for item in parse_items(relevant, field="--relevant")} if relevant else {}
    explicit = parse_grades(grades, field="--grades") if grades is not None else {}
    for item, grade in explicit.items():
        if item in labels and grade == 0:
            raise InputError(
                f"--grades: item {item!r} is listed in --relevant but has grade 0 in --grades"
            )
        labels[item] = grade
    return labels


def _engine_check(derivation: Derivation, labels: dict[str, int], ranking: list[str]) -> str:
    """The derivation's number beside the engine's (:func:`.engine_value`)."""
    from ragaudit.metrics.explain import engine_value

    value = engine_value(derivation, ranking, labels)
    verdict = "same" if abs(value - derivation.value) <= 1e-9 else "DIFFERENT"
    return f"evaluate(): {derivation.metric} = {value:.4f} ({verdict} as the derivation)"


@click.command("explain")
@click.argument("metric", type=click.Choice(list(EXPLAINABLE)))
@click.option("--ranking", required=True, help='Retrieved ids, best first: "B A D C E".')
@click.option("--relevant", default=None, help='Relevant ids (grade 1): "A C".')
@click.option(
    "--grades", default=None, help='Graded labels: "A=2,B=1" (a grade here wins over --relevant).'
)
@click.option(
    "--gain",
    type=click.Choice(["linear", "exp"]),
    default=None,
    help="nDCG gain: the grade (linear, default) or 2^grade - 1 (exp).",
)
@click.option("--k", "k", type=int, default=None, help="Cut-off (default: the ranking's length).")
@format_option()
def command(
    metric: str,
    ranking: str,
    relevant: str | None,
    grades: str | None,
    gain: str | None,
    k: int | None,
    output_format: str,
) -> None:
    """Derive METRIC step by step for one ranking, as on a whiteboard.

    \b
    ndcg               gain, log2(i+1), discount and contribution per rank; DCG, IDCG, nDCG
    ap                 precision@i at each relevant rank, divided by |relevant|
    context_precision  the RAGAS sum of precision@i over relevant ranks in the top k

    Example: ragaudit explain ndcg --ranking "B A D C E" --relevant "A C"
    """
    from ragaudit.metrics.explain import explain
    from ragaudit.reports.metrics import explain_report

    if gain is not None and metric != "ndcg":
        raise InputError(f"--gain: applies to ndcg only, found it with {metric}")
    items = parse_items(ranking, field="--ranking")
    labels = _labels(relevant, grades)
    derivation = explain(metric, items, labels, k=k, gain="exp" if gain == "exp" else "linear")
    check = _engine_check(derivation, labels, items)
    emit(explain_report(derivation, items, labels, gain or "linear", check), output_format)
