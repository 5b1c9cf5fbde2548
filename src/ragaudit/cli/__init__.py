"""The ``ragaudit`` command line: one subcommand per verb, each a thin layer over the library.

Exit codes: 0 success, 1 a quality gate failed, 2 bad usage or bad input (one line on stderr,
no traceback).  Diagnostics and warnings go to stderr so stdout stays machine-readable.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from typing import Any

import click

from ragaudit.cli._errors import handle_errors

__all__ = ["main"]

# verb -> "module:attribute".  Modules are imported only when their verb is used, so
# `ragaudit --help` stays fast and optional dependencies are never imported eagerly.
_COMMANDS: dict[str, tuple[str, str]] = {
    "evaluate": ("ragaudit.cli.evaluate", "Score a run against relevance labels."),
    "illusions": ("ragaudit.cli.illusions", "Cases where metrics tie and systems differ."),
    "explain": ("ragaudit.cli.explain", "Whiteboard derivation of nDCG, AP or context precision."),
    "demo": ("ragaudit.cli.demo", "Full offline audit of the bundled benchmark."),
    "run": ("ragaudit.cli.run", "Evaluate a pipeline configuration on a golden set; save the run."),
    "import": ("ragaudit.cli.import_", "Saved runs from another pipeline, RAGAS or DeepEval."),
    "chunks": ("ragaudit.cli.chunks", "List a corpus's chunks: ids, documents, offsets."),
    "golden": (
        "ragaudit.cli.golden",
        "Check a golden set against its corpus (keys, sources, ...).",
    ),
    "convert": ("ragaudit.cli.convert", "A saved run from JSON to Parquet or back, losslessly."),
    "export": ("ragaudit.cli.export", "Write a saved run as a TREC run, a golden set as qrels."),
    "funnel": ("ragaudit.cli.funnel", "Where questions die between retrieval and a right answer."),
    "show": ("ragaudit.cli.show", "One question at a time: chunks, answer, verdicts, stage."),
    "labels": ("ragaudit.cli.labels", "Chunk labels, label bias; human verdicts for calibrate."),
    "cache": ("ragaudit.cli.cache", "Inspect or clear the LLM response cache."),
    "judge": ("ragaudit.cli.judge", "Add LLM judge verdicts to a saved run (cached, costed)."),
    "judges": (
        "ragaudit.cli.judges",
        "Measure a judge: stress test on rewrites, bias audit on a run.",
    ),
    "compare": ("ragaudit.cli.compare", "Is the difference between two runs real? (paired tests)"),
    "baseline": ("ragaudit.cli.baseline", "Write the baseline run a CI gate compares against."),
    "plan": ("ragaudit.cli.plan", "How many questions you need: exact power / detectable effect."),
    "agreement": ("ragaudit.cli.agreement", "Agreement between two labellers (Cohen's kappa)."),
    "calibrate": ("ragaudit.cli.calibrate", "Judge vs human verdicts; PPI++ calibrated rate."),
    "report": ("ragaudit.cli.report", "One self-contained audit page (HTML or Markdown)."),
}


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    print(f"ragaudit: warning: {message}", file=sys.stderr)


class _LazyGroup(click.Group):
    """A group whose subcommands are imported on demand and whose errors become exit code 2."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _COMMANDS:
            return None
        module_name, _ = _COMMANDS[cmd_name]
        module = importlib.import_module(module_name)
        command: click.Command = module.command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, _COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        with handle_errors(ctx):
            return super().invoke(ctx)


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    # The version is looked up only here: importlib.metadata costs ~50 ms of every start-up.
    if not value or ctx.resilient_parsing:
        return
    from ragaudit._version import version

    click.echo(f"ragaudit, version {version()}")
    ctx.exit()


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def main() -> None:
    """ragaudit: the truth about your RAG evaluation numbers."""
    warnings.showwarning = _show_warning
    # The process is ours here, so Arrow's faster pool is chosen here; the library loader
    # leaves a host application's pool alone (ragaudit._arrow).
    from ragaudit._arrow import use_fast_pool

    use_fast_pool()
