"""``ragaudit import``: a saved run from another pipeline, checked; or another tool's results
(RAGAS, DeepEval, JSONL) turned into a saved run."""

from __future__ import annotations

import click

from ragaudit.cli._options import (
    chunking_options,
    emit,
    format_option,
    golden_map_option,
    no_stdout,
    save_as_option,
)

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command"]

_LAYOUTS = (
    "ragaudit", "ragas", "deepeval", "jsonl", "openinference", "inspect", "promptfoo", "mlflow",
)  # fmt: skip


@click.command(name="import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--from",
    "layout",
    type=click.Choice(_LAYOUTS),
    default="ragaudit",
    show_default=True,
    help="ragaudit: FILE is a saved run, validated; ragas/deepeval/jsonl: FILE holds another "
    "tool's per-question results (question, retrieved contexts as text, answer, optional "
    "reference), written out as a saved run; openinference: FILE holds OpenTelemetry spans "
    "(OTLP/JSON or span JSON lines) with the OpenInference attributes; inspect: FILE is an "
    "inspect_ai log (.eval or .json); promptfoo: FILE is `promptfoo eval -o FILE.json` "
    "results; mlflow: FILE holds an MLflow GenAI evaluation's traces (Trace.to_json() lines).",
)
@click.option(
    "--corpus",
    type=click.Path(file_okay=False),
    default=None,
    help="The documents the contexts came from (needed with --from ragas/deepeval/jsonl).",
)
@click.option(
    "--golden",
    type=click.Path(dir_okay=False),
    default=None,
    help="Golden set giving ids, sources, keywords and answerability (default: the file's "
    "own reference and reference contexts).",
)
@golden_map_option()
@click.option(
    "--k",
    type=click.IntRange(min=1),
    default=None,
    help="Cut-off of the saved run [default: the most contexts a question has].",
)
@chunking_options
@click.option(
    "--min-overlap",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.5,
    show_default=True,
    help="A context that is no chunk's exact text goes to the chunk holding the largest share "
    "of its tokens, if that share is at least this; otherwise it is dropped and counted.",
)
@click.option("--name", default=None, help="Run name [default: the file's stem].")
@click.option(
    "--cluster-by",
    default=None,
    help="--from inspect/promptfoo/mlflow: the sample (test, trace) metadata key whose value "
    "is each question's cluster (stored as the row's tag, for compare --cluster-by tag).",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    callback=no_stdout,
    help="Results directory [--from ragaudit: also copy the validated run there; "
    "other layouts: default ragaudit-results].",
)
@save_as_option(default=None)
@format_option()
def command(
    files: tuple[str, ...],
    layout: str,
    corpus: str | None,
    golden: str | None,
    golden_columns: dict[str, str] | None,
    k: int | None,
    chunk_size: int,
    chunk_overlap: int,
    chunker: str,
    min_overlap: float,
    name: str | None,
    cluster_by: str | None,
    out_dir: str | None,
    save_as: str | None,
    output_format: str,
) -> None:
    """Validate saved runs, or import FILES of another tool's results as saved runs.

    Each retrieved context is matched to a chunk of --corpus (chunked with --chunk-size,
    --chunk-overlap, --chunker): its exact text first, then the chunk holding the largest share
    of its tokens (at least --min-overlap); unmatched contexts are dropped and counted.  The
    answers are judged by the offline judges, as in `ragaudit run`.  Problems are reported as
    FILE:LINE: FIELD: expected ..., found ... (exit code 2).
    """
    from ragaudit.exceptions import InputError

    if name is not None and len(files) > 1:
        raise InputError("--name: only with a single FILE (each run is named after its file)")
    if save_as is not None and layout == "ragaudit" and out_dir is None:
        raise InputError("--save-as: only with --out (--from ragaudit writes nothing without it)")
    save_as = save_as or "json"
    if layout == "ragaudit":
        _validate(files, out_dir, save_as, output_format)
        return
    if layout == "openinference":
        _traces(files, corpus, golden, golden_columns, k, (chunk_size, chunk_overlap, chunker),
                min_overlap, name, out_dir, save_as, output_format)  # fmt: skip
        return
    if layout in ("inspect", "promptfoo", "mlflow"):
        unused = [flag for flag, value in (("--corpus", corpus), ("--golden", golden),
                  ("--map", golden_columns), ("--k", k)) if value]  # fmt: skip
        if unused:
            what = "a log has" if layout == "inspect" else "its results have"
            raise InputError(f"{unused[0]}: not used with --from {layout} ({what} no retrieval)")
        _inspect(layout, files, name, out_dir, cluster_by, save_as, output_format)
        return
    if cluster_by is not None:
        raise InputError("--cluster-by: only with --from inspect, promptfoo or mlflow")
    if corpus is None:
        raise InputError(f"--corpus: required with --from {layout} (the contexts' documents)")
    from ragaudit.diagnose.unjudged import run_judged
    from ragaudit.pipeline.replay import import_results
    from ragaudit.reports.imports import foreign_import_report

    results = []
    for file in files:
        result = import_results(
            file, layout, corpus, golden=golden, golden_columns=golden_columns, k=k,
            chunk_size=chunk_size, chunk_overlap=chunk_overlap, chunker=chunker,
            min_overlap=min_overlap, name=name, out_dir=out_dir or "ragaudit-results",
            save_as=save_as,
        )  # fmt: skip
        results.append((file, result, result.summary))
    judged = [run_judged(result.saved) for _, result, _ in results]  # beside the means
    emit(foreign_import_report(layout, results, judged), output_format)


def _traces(
    files: tuple[str, ...],
    corpus: str | None,
    golden: str | None,
    golden_columns: dict[str, str] | None,
    k: int | None,
    chunking: tuple[int, int, str],
    min_overlap: float,
    name: str | None,
    out_dir: str | None,
    save_as: str,
    output_format: str,
) -> None:
    from ragaudit.diagnose.trace_numbers import trace_numbers
    from ragaudit.pipeline.trace_import import import_traces
    from ragaudit.reports.trace_imports import trace_import_report

    for file in files:
        result = import_traces(
            file, corpus=corpus, golden=golden, golden_columns=golden_columns, k=k,
            chunk_size=chunking[0], chunk_overlap=chunking[1], chunker=chunking[2],
            min_overlap=min_overlap, name=name, out_dir=out_dir or "ragaudit-results",
            save_as=save_as,
        )  # fmt: skip
        numbers = trace_numbers(result.saved)
        emit(trace_import_report(file, result, result.saved.summary, numbers), output_format)


def _inspect(
    layout: str,
    files: tuple[str, ...],
    name: str | None,
    out_dir: str | None,
    cluster_by: str | None,
    save_as: str,
    output_format: str,
) -> None:
    if layout in ("promptfoo", "mlflow"):
        from ragaudit.pipeline.scored_import import import_scored
        from ragaudit.reports.trace_imports import scored_import_report

        for file in files:
            made = import_scored(
                layout, file, name=name, out_dir=out_dir or "ragaudit-results",
                cluster_by=cluster_by, save_as=save_as,
            )  # fmt: skip
            emit(scored_import_report(file, made), output_format)
        return
    from ragaudit.pipeline.inspect_import import import_inspect_log
    from ragaudit.reports.trace_imports import inspect_import_report

    for file in files:
        result = import_inspect_log(
            file, name=name, out_dir=out_dir or "ragaudit-results", cluster_by=cluster_by,
            save_as=save_as,
        )  # fmt: skip
        emit(inspect_import_report(file, result), output_format)


def _validate(
    files: tuple[str, ...], out_dir: str | None, save_as: str, output_format: str
) -> None:
    from ragaudit.diagnose.unjudged import run_judged
    from ragaudit.pipeline.replay import check_saved_run
    from ragaudit.reports.imports import import_report

    for file in files:
        checked = check_saved_run(file, out_dir, files, save_as)
        target = None if checked.target is None else str(checked.target)
        judged = run_judged(checked.saved)
        emit(import_report(file, checked.saved, checked.summary, target, judged), output_format)
