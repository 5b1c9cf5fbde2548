"""Options and output helpers shared by every subcommand.

Every command ends the same way: build a :class:`~ragaudit.reports.Report` (or a result with
``to_report()``) and pass it to :func:`emit`, which renders it with the one renderer in the
format chosen by the shared ``--format`` option.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import click

from ragaudit._io import append_text, atomic_write_text, refuse_input_as_output
from ragaudit.exceptions import FormatError, InputError
from ragaudit.reports.id_lists import SHOWN_IDS
from ragaudit.reports.renderer import render, render_stream
from ragaudit.reports.report import Report

__all__ = [
    "STEP_SUMMARY",
    "TEXT_FORMATS",
    "all_ids_option",
    "append_step_summary",
    "chunking_options",
    "corpus_option",
    "echo_warnings",
    "emit",
    "emit_stream",
    "format_option",
    "golden_map_option",
    "guard_output",
    "guards_output",
    "judged_margin_option",
    "judged_threshold_option",
    "k_option",
    "labels_option",
    "no_stdout",
    "out_file_option",
    "quiet_option",
    "render_json",
    "results_dir_option",
    "seed_option",
    "write_output",
]

#: What ``--out -`` means wherever ``--out`` names a file: standard output.
STDOUT = "-"


#: The formats every command accepts (``html`` is added where a page makes sense).
TEXT_FORMATS = ("table", "json", "csv", "markdown")


def format_option(*choices: str, default: str = "table") -> Any:
    """``--format`` with the given choices (default: :data:`TEXT_FORMATS`)."""
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(list(choices or TEXT_FORMATS)),
        default=default,
        show_default=True,
        help="Output format.",
    )


def batch_rows_option() -> Any:
    """``--batch-rows``: a Parquet run is read this many rows at a time, holding only the
    columns the statistics read (:func:`ragaudit.data.records.numbers_only`); None: the
    default, :data:`ragaudit.data.saved_run.parquet.BATCH_ROWS` (not imported here, so that
    ``--help`` stays instant)."""
    return click.option(
        "--batch-rows", type=click.IntRange(min=1), default=None,
        help="Rows of a Parquet run read and checked at a time (default 65,536); only the "
        "columns the statistics read are kept (no question or answer text), so a run "
        "larger than memory fits.",
    )  # fmt: skip


def all_ids_option() -> Any:
    """``--all-ids``: every question id in the text output; the parameter ``max_ids`` is
    what the report builders take (None: all, else :data:`~ragaudit.reports.id_lists.SHOWN_IDS`).
    """
    return click.option(
        "--all-ids",
        "max_ids",
        is_flag=True,
        callback=lambda _ctx, _param, every: None if every else SHOWN_IDS,
        help=f"List every question id in the text output (default: the first {SHOWN_IDS} of "
        "each list, the rest counted; --format json always lists every id).",
    )


def chunking_options(command: Any) -> Any:
    """``--chunk-size``, ``--chunk-overlap`` and ``--chunker``: how a corpus is chunked (the
    same defaults in every command, so chunk ids agree between them)."""
    from ragaudit.pipeline.chunking import CHUNKERS

    options = [
        click.option(
            "--chunk-size", type=int, default=800, show_default=True, help="Characters per chunk."
        ),
        click.option(
            "--chunk-overlap",
            type=int,
            default=100,
            show_default=True,
            help="Characters shared by consecutive chunks.",
        ),
        click.option("--chunker", type=click.Choice(CHUNKERS), default="fixed", show_default=True),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def golden_map_option() -> Any:
    """``--map FIELD=COLUMN`` (repeatable): which column of the golden set holds a field."""

    def convert(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> Any:
        from ragaudit.data.golden_fields import parse_column_map

        return parse_column_map(value) or None

    return click.option(
        "--map",
        "golden_columns",
        multiple=True,
        metavar="FIELD=COLUMN",
        callback=convert,
        help="Golden-set column holding FIELD (repeatable), e.g. --map answer=expected_output; "
        "overrides the recognised names (question/user_input/input, answer/ground_truth/"
        "reference/expected_output, sources/reference_context_ids/doc_ids, "
        "reference_contexts/contexts).",
    )


def seed_option(default: int = 0) -> Any:
    """``--seed`` for every random procedure (the seed is always printed in the output)."""
    return click.option("--seed", type=int, default=default, show_default=True, help="Random seed.")


def k_option(help: str) -> Any:
    """``--k``: a cut-off of a saved run's ranking (default None: the run's own k)."""
    return click.option("--k", type=click.IntRange(min=1), default=None, help=help)


def judged_threshold_option(help: str) -> Any:
    """``--judged-threshold`` (0.5, a share in [0, 1]), as ``evaluate`` and ``compare``."""
    return click.option(
        "--judged-threshold", type=click.FloatRange(0, 1), default=0.5, show_default=True,
        help=help,
    )  # fmt: skip


def judged_margin_option(help: str) -> Any:
    """``--judged-margin`` (0.1, a share in [0, 1]), as ``evaluate`` and ``compare``."""
    return click.option(
        "--judged-margin", type=click.FloatRange(0, 1), default=0.1, show_default=True,
        help=help,
    )  # fmt: skip


def echo_warnings(messages: Iterable[str]) -> None:
    """Each warning on stderr, once, as ``ragaudit: warning: ...``."""
    for message in dict.fromkeys(messages):
        click.echo(f"ragaudit: warning: {message}", err=True)


@contextlib.contextmanager
def echoed_warnings() -> Iterator[None]:
    """Run the block with its warnings caught, then print each once on stderr
    (:func:`echo_warnings`), also when the block fails."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            echo_warnings(str(w.message) for w in caught)


def labels_option(help: str, *, required: bool = False) -> Any:
    """``--labels FILE``: a chunk-label file (``ragaudit labels build``) -> ``labels_path``."""
    # No default=None beside required=True: click >= 8.3 counts an explicit None as a value
    # and then no longer enforces required (a traceback instead of "Missing option").
    return click.option(
        "--labels", "labels_path", type=click.Path(dir_okay=False), required=required,
        help=help,
    )  # fmt: skip


def corpus_option(help: str, *, required: bool = False) -> Any:
    """``--corpus DIR``: the documents a run was made from -> ``corpus_dir``."""
    return click.option(
        "--corpus", "corpus_dir", type=click.Path(file_okay=False), required=required,
        help=help,
    )  # fmt: skip


def results_dir_option() -> Any:
    """``--out DIR`` (default ``ragaudit-results``): where saved runs and reports go."""
    return click.option(
        "--out", "out_dir", type=click.Path(file_okay=False), default="ragaudit-results",
        callback=no_stdout,
        show_default=True, help="Results directory.",
    )  # fmt: skip


def save_as_option(default: str | None = "json") -> Any:
    """``--save-as json|parquet``: the saved run's format, named by the extension of the file
    written in the results directory (``<name>.json`` or ``<name>.parquet``)."""
    return click.option(
        "--save-as",
        "save_as",
        type=click.Choice(["json", "parquet"]),
        default=default,
        show_default=default is not None,
        help="Format of the saved run written to --out: <name>.json (interchange, small "
        "runs) or <name>.parquet (columnar, for large runs; every command reads both).",
    )


def no_stdout(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Click callback of an ``--out`` that cannot be a stream: ``-`` is a one-line
    :class:`~ragaudit.exceptions.InputError` (exit 2), any other value passes unchanged."""
    if value == STDOUT:
        raise InputError(
            f"--out: expected a path, found '-' (standard output): `{ctx.command_path}` "
            "writes a directory or a file it resumes from, not a stream; name a path"
        )
    return value


def _command_inputs(ctx: click.Context, skip: Iterable[str]) -> list[str]:
    """Every path the command was given (the values of its ``click.Path`` parameters), but
    those named in ``skip`` (the output itself, an input it updates in place on purpose)."""
    skipped = set(skip)
    found: list[str] = []
    for param in ctx.command.params:
        if param.name in skipped or not isinstance(param.type, click.Path):
            continue
        value = ctx.params.get(param.name or "")
        if value is None:
            continue
        found.extend(str(v) for v in (value if isinstance(value, tuple | list) else [value]))
    return found


def guard_output(
    target: str | os.PathLike[str] | None, option: str = "--out", *, skip: Iterable[str] = ()
) -> None:
    """The one output guard: refuse (exit 2, one line) to write ``target`` when it is any
    input of the running command (:func:`ragaudit._io.refuse_input_as_output`: the same file
    through any name).  ``skip`` names parameters whose file may be the output (``judge``
    updates RUN in place by default); ``None`` and ``-`` (standard output) pass."""
    if target is None or str(target) == STDOUT:
        return
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return
    refuse_input_as_output(target, _command_inputs(ctx, skip), option)


def guards_output(name: str, option: str = "--out", *, skip: Iterable[str] = ()) -> Any:
    """Decorator of a command callback: :func:`guard_output` on parameter ``name`` before the
    command does any work (a 200,000-question report is refused at once, not after minutes).
    """
    skipped = (name, *skip)

    def decorate(callback: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(callback)
        def checked(*args: Any, **kwargs: Any) -> Any:
            guard_output(kwargs.get(name), option, skip=skipped)
            return callback(*args, **kwargs)

        return checked

    return decorate


def out_file_option(
    help: str, *, stdout: bool = True, required: bool = False, skip: Iterable[str] = ()
) -> Any:
    """``--out FILE``; ``-`` is standard output (:func:`write_output`) where ``stdout``.

    Commands whose output cannot go to a stream (a resumable label or verdict file, a judged
    run updated in place, a results directory) pass ``stdout=False``: ``--out -`` is then a
    one-line usage error instead of a file named ``-``.  An ``--out`` that is one of the
    command's input files is refused before any work (:func:`guards_output`); ``skip`` names
    the inputs it may be (``judge``'s RUN, updated in place).
    """
    extra = " '-' = standard output." if stdout else ""
    # No explicit default beside required=True: click >= 8.3 would not enforce it.
    default: dict[str, Any] = {"required": True} if required else {"default": None}
    option = click.option(
        "--out", "out_path", type=click.Path(dir_okay=False, allow_dash=stdout),
        help=help + extra, callback=None if stdout else no_stdout, **default,
    )  # fmt: skip
    guard = guards_output("out_path", "--out", skip=skip)

    def decorate(callback: Callable[..., Any]) -> Any:
        return option(guard(callback))

    return decorate


def write_output(text: str, out_path: str | None, default: str | None = None) -> None:
    """Write a command's rendered output: to ``out_path``, or to stdout.

    ``out_path`` ``-`` (or None without a ``default``) is standard output; otherwise the file
    ``out_path`` (or ``default``) is written atomically and its name is echoed on stderr.
    A target that is one of the command's inputs is refused (:func:`guard_output`).
    """
    target = out_path if out_path is not None else default
    if target is None or target == STDOUT:
        click.echo(text, nl=False)
        return
    guard_output(target, "--out", skip=("out_path",))
    atomic_write_text(target, text)
    click.echo(f"wrote {target} ({len(text.encode('utf-8')):,} bytes)", err=True)


def quiet_option() -> Any:
    """``--quiet``: no progress bar (the bar is only ever shown on a terminal)."""
    return click.option("--quiet", "-q", is_flag=True, help="No progress bar on stderr.")


def emit(report: Report | Any, output_format: str) -> None:
    """Render ``report`` (a :class:`Report` or an object with ``to_report()``) to stdout."""
    if not isinstance(report, Report):
        report = report.to_report()
    click.echo(render(report, output_format), nl=False)


def emit_stream(report: Report, sections: Iterable[Any], output_format: str) -> None:
    """:func:`emit` of ``report`` with ``sections`` appended, written as they are made (terminal
    text: :func:`~ragaudit.reports.renderer.render_stream`)."""
    for piece in render_stream(report, sections, output_format):
        click.echo(piece, nl=False)


#: The file GitHub Actions renders as the job's summary page (Markdown).
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def append_step_summary(report: Report | Any, title: str) -> None:
    """Append ``report`` as Markdown titled ``title`` to ``$GITHUB_STEP_SUMMARY`` when set.

    One append of the whole text (:func:`ragaudit._io.append_text`): earlier steps' summaries
    are kept, and nothing is written when the variable is unset or empty.
    """
    target = os.environ.get(STEP_SUMMARY)
    if not target:
        return
    if not isinstance(report, Report):
        report = report.to_report()
    text = render(dataclasses.replace(report, title=title), "markdown") + "\n"
    try:
        append_text(target, text)
    except FormatError as exc:  # name the variable the path came from
        raise FormatError(exc.message, path=exc.path, field=f"${STEP_SUMMARY}") from None


def render_json(obj: Any) -> str:
    """Deterministic JSON with a fixed indent (NaN is an error)."""
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
