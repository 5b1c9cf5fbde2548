"""``ragaudit calibrate``: the judge against human verdicts, and the calibrated rate (PPI++)."""

from __future__ import annotations

import click

from ragaudit.cli._options import emit, format_option

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command"]


@click.command("calibrate")
@click.argument("run", type=click.Path(dir_okay=False))
@click.option(
    "--human",
    "human_path",
    required=True,
    type=click.Path(dir_okay=False),
    help='Human verdicts: JSONL lines {"id": ..., "correct": true} (as `ragaudit labels '
    "verdicts` writes them) or a YAML mapping question id -> true/false.",
)
@click.option(
    "--metric",
    default="correct",
    show_default=True,
    help="The judged 0/1 metric of the run (and the JSONL key of the human verdict).",
)
@click.option("--confidence", type=float, default=0.95, show_default=True, help="Confidence level.")
@format_option()
def command(run: str, human_path: str, metric: str, confidence: float, output_format: str) -> None:
    """How far the judge of RUN is from people, and the rate corrected for it.

    Reports the confusion matrix of judge against human verdicts, Cohen's kappa, the true and
    false positive rates, and three intervals for the true rate: prediction-powered (PPI++,
    power-tuned; valid even when the judge is biased), human labels only, and judge only
    (which assumes the judge is always right).  See docs/guide/stats.md.

    The PPI intervals assume the human-labelled questions are a uniformly random sample of
    the judged ones: `ragaudit labels verdicts RUN --sample N --out FILE` draws one and
    records it in FILE; calibrate says how the sample was drawn, and warns when the file says
    it was not random, when questions were skipped, or when it was made for another run.
    """
    from ragaudit.data.human_grades import read_human_grades_file
    from ragaudit.data.records import load_saved_run
    from ragaudit.diagnose.calibration import calibrate
    from ragaudit.reports.noise import calibration_report

    result = calibrate(
        load_saved_run(run),
        read_human_grades_file(human_path, metric),
        metric=metric,
        confidence=confidence,
    )
    emit(calibration_report(result), output_format)
